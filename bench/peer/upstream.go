package main

import (
	"bytes"
	"io"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/maskgate/maskgate/bench/overhead/workload"
)

// model is the model every request names (the bodies are bench/overhead's workload);
// maskgate routes it to the upstream, Portkey passes it through.
const model = workload.Model

// doneFrame ends every stream the upstream sends.
const doneFrame = "data: [DONE]\n\n"

// The upstream's answers: a whole chat.completion of about 600 bytes, or a stream of a
// role chunk, four content chunks, a finish chunk, a usage chunk and [DONE].
var (
	wholeAnswer  = []byte(`{"id":"chatcmpl-peer-0001","object":"chat.completion","created":1767225600,"model":"` + model + `","system_fingerprint":"fp_peer","choices":[{"index":0,"message":{"role":"assistant","content":"Tomorrow in Lyon: light rain until about 11:00, then cloudy, 9 to 17 °C. Your team lunch on the terrace at 12:30 should be dry by then; the 15:00 site visit is partly outdoors, so take a jacket. Nothing else on the calendar is outside."},"logprobs":null,"finish_reason":"stop"}],"usage":{"prompt_tokens":512,"completion_tokens":58,"total_tokens":570}}`)
	streamEvents = buildStream()
)

func buildStream() [][]byte {
	head := `{"id":"chatcmpl-peer-0002","object":"chat.completion.chunk","created":1767225600,"model":"` + model + `","system_fingerprint":"fp_peer",`
	var out [][]byte
	event := func(rest string) { out = append(out, []byte("data: "+head+rest+"\n\n")) }
	event(`"choices":[{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}]}`)
	for _, w := range streamText {
		event(`"choices":[{"index":0,"delta":{"content":` + strconv.Quote(w) + `},"logprobs":null,"finish_reason":null}]}`)
	}
	event(`"choices":[{"index":0,"delta":{},"logprobs":null,"finish_reason":"stop"}]}`)
	event(`"choices":[],"usage":{"prompt_tokens":512,"completion_tokens":16,"total_tokens":528}}`)
	return out
}

// streamText is the content of the stream's text chunks, plain ASCII so that it reads
// the same however a gateway re-encodes the JSON.
var streamText = []string{"Tomorrow in Lyon:", " light rain until 11:00,", " then cloudy,", " 9 to 17 C."}

// streamChunks is the number of data events before [DONE].
var streamChunks = len(streamEvents)

var (
	streamTrue      = []byte(`"stream":true`)
	streamTrueSpace = []byte(`"stream": true`)
)

var bodyPool = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// upstream is the canned OpenAI-compatible engine every path ends at. It reads the whole
// request, as an engine must, waits think (zero by default), and answers a request that
// asks for "stream": true with a stream whose every event is flushed on its own, any
// other with the whole answer. It looks at neither the path nor the rest of the body: a
// gateway may reorder or rewrite the JSON it forwards.
func upstream(think time.Duration) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		buf := bodyPool.Get().(*bytes.Buffer)
		buf.Reset()
		defer bodyPool.Put(buf)
		if _, err := io.Copy(buf, r.Body); err != nil {
			return
		}
		stream := bytes.Contains(buf.Bytes(), streamTrue) || bytes.Contains(buf.Bytes(), streamTrueSpace)
		if think > 0 {
			time.Sleep(think)
		}
		h := w.Header()
		if !stream {
			h.Set("Content-Type", "application/json")
			h.Set("Content-Length", strconv.Itoa(len(wholeAnswer)))
			_, _ = w.Write(wholeAnswer)
			return
		}
		h.Set("Content-Type", "text/event-stream")
		h.Set("Cache-Control", "no-cache")
		w.WriteHeader(http.StatusOK)
		rc := http.NewResponseController(w)
		for _, e := range streamEvents {
			if _, err := w.Write(e); err != nil {
				return
			}
			if err := rc.Flush(); err != nil {
				return
			}
		}
		_, _ = io.WriteString(w, doneFrame)
	})
}
