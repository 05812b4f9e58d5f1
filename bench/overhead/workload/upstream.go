package workload

import (
	"bytes"
	"io"
	"net/http"
	"strconv"
)

// DoneFrame ends every stream Upstream sends; a client that did not get it as the last
// bytes got a truncated stream.
const DoneFrame = "data: [DONE]\n\n"

// StreamChunks is how many chat.completion.chunk events a stream carries before its usage
// event and [DONE]: a role chunk, content chunks, and a finish chunk.
const StreamChunks = 20

var (
	completion = []byte(`{"id":"chatcmpl-bench-0000000000000000000001","object":"chat.completion","created":1767225600,"model":"` + Model + `","system_fingerprint":"fp_bench","choices":[{"index":0,"message":{"role":"assistant","content":"Tomorrow in Lyon: light rain until about 11:00, then cloudy, 9 to 17 °C with a light wind. Your calendar has a team lunch on the terrace at 12:30, which should be dry by then, and a site visit at 15:00 that is partly outdoors; take a jacket."},"logprobs":null,"finish_reason":"stop"}],"usage":{"prompt_tokens":512,"completion_tokens":61,"total_tokens":573,"prompt_tokens_details":{"cached_tokens":448}}}`)
	frames     = streamFrames()
	streamTrue = []byte(`"stream":true`)
)

// Completion is the whole chat.completion Upstream answers with (about 600 bytes). The
// slice is shared: callers must not modify it.
func Completion() []byte { return completion }

// streamFrames renders the SSE frames of the canned stream, [DONE] excluded.
func streamFrames() [][]byte {
	words := []string{"Tomorrow", " in", " Lyon", ":", " light", " rain", " until", " about", " 11", ":00", ",", " then", " cloudy", ",", " 9", " to", " 17", " °C"}
	head := `{"id":"chatcmpl-bench-0000000000000000000002","object":"chat.completion.chunk","created":1767225600,"model":"` + Model + `","system_fingerprint":"fp_bench",`
	var out [][]byte
	frame := func(rest string) { out = append(out, []byte("data: "+head+rest+"\n\n")) }
	frame(`"choices":[{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}]}`)
	for _, w := range words[:StreamChunks-2] {
		frame(`"choices":[{"index":0,"delta":{"content":` + strconv.Quote(w) + `},"logprobs":null,"finish_reason":null}]}`)
	}
	frame(`"choices":[{"index":0,"delta":{},"logprobs":null,"finish_reason":"stop"}]}`)
	frame(`"choices":[],"usage":{"prompt_tokens":512,"completion_tokens":18,"total_tokens":530,"prompt_tokens_details":{"cached_tokens":448}}}`)
	return out
}

// StreamBytes is the length of the stream Upstream sends, [DONE] included.
func StreamBytes() int {
	n := len(DoneFrame)
	for _, f := range frames {
		n += len(f)
	}
	return n
}

// Upstream returns the canned OpenAI-compatible server. It reads each request to the end,
// as an engine must, and answers a request whose body starts with "model" and
// "stream":true (see Request) with a stream whose every event is flushed on its own, and
// any other with Completion. It does not look at the path.
func Upstream() http.Handler { return upstream{} }

type upstream struct{}

func (upstream) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var head [64]byte
	n, _ := io.ReadFull(r.Body, head[:])
	if _, err := io.Copy(io.Discard, r.Body); err != nil {
		return
	}
	h := w.Header()
	if !bytes.Contains(head[:n], streamTrue) {
		h.Set("Content-Type", "application/json")
		h.Set("Content-Length", strconv.Itoa(len(completion)))
		_, _ = w.Write(completion)
		return
	}
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	for _, f := range frames {
		if _, err := w.Write(f); err != nil {
			return
		}
		if err := rc.Flush(); err != nil {
			return
		}
	}
	_, _ = io.WriteString(w, DoneFrame)
}
