package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"

	"github.com/maskgate/maskgate/backends"
	"github.com/maskgate/maskgate/backends/oai"
)

var (
	sseData = []byte("data: ")
	sseEnd  = []byte("\n\n")
	sseDone = []byte("data: [DONE]\n\n")
)

// relay streams the backend's chunks to the client as SSE. Nothing is written before the
// first chunk arrives, so a backend that fails at once still gets a clean error response.
func (s *Server) relay(w http.ResponseWriter, r *http.Request, x *exchange, resp *backends.Response, dropUsage bool) error {
	st := resp.Stream
	defer st.Close()

	t := s.now()
	chunk, err := st.Next()
	x.upstream += s.now().Sub(t)
	if err != nil && !errors.Is(err, io.EOF) {
		return err
	}

	x.cache = resp.Cache
	commitStream(w, x)
	rc := http.NewResponseController(w)

	// write writes one frame, flushed if flush; a failure means the client is gone.
	write := func(flush bool, parts ...[]byte) bool {
		t := s.now()
		defer func() { x.client += s.now().Sub(t) }()
		x.keep.lock()
		defer x.keep.unlock(false)
		for _, p := range parts {
			if _, err := w.Write(p); err != nil {
				return false
			}
		}
		return !flush || rc.Flush() == nil
	}
	send := func(parts ...[]byte) bool { return write(true, parts...) }
	// Chunks the upstream sent together go out in one flush, as a byte-copying proxy
	// sends them: a frame stays unflushed only while the next chunk is in hand already
	// (backends.StreamReady), so none waits for one that has not come.
	ready, _ := st.(backends.StreamReady)
	pending := false

	for err == nil {
		out, usage, uerr := inspectChunk(chunk, dropUsage)
		if uerr != nil {
			return s.streamError(r, send, &apiError{Status: http.StatusBadGateway, Type: "upstream_error",
				Code: "upstream_invalid_chunk", Message: "backend " + x.backend + " sent a chunk that is not JSON", Err: uerr})
		}
		if usage != nil {
			x.usage = usage
		}
		if out != nil {
			if x.ttft == 0 {
				x.ttft = s.now().Sub(x.start)
			}
			if !write(false, sseData, out, sseEnd) {
				return gone(r.Context()) // Close cancels the upstream
			}
			pending = true
		}
		if pending && (ready == nil || !ready.Ready()) {
			if !write(true) {
				return gone(r.Context())
			}
			pending = false
		}
		t = s.now()
		chunk, err = st.Next()
		x.upstream += s.now().Sub(t)
	}
	if !errors.Is(err, io.EOF) {
		if clientGone(r.Context()) {
			return context.Cause(r.Context())
		}
		return s.streamError(r, send, err) // the upstream failed, or Stop cut the stream
	}
	if x.usage != nil && x.cache == backends.CacheUnknown && x.usage.PromptTokensDetails != nil {
		x.cache = backends.CacheReported // too late for the header, right for the metrics
	}
	if !send(sseDone) {
		return gone(r.Context())
	}
	return nil
}

// streamError ends a committed stream with an error event in the OpenAI envelope, which
// the official SDKs raise as an error, and no [DONE]; the response itself then ends
// properly. It returns err for the metrics.
func (s *Server) streamError(r *http.Request, send func(...[]byte) bool, err error) error {
	send(sseData, envelope(forClient(toAPIError(err), requestID(r.Context()))), sseEnd)
	return err
}

// inspectChunk reads a chunk's usage, if it has any, and returns the bytes to send:
// the chunk itself, or, when the client did not ask for usage, the chunk without it
// (nil when it carried nothing else).
func inspectChunk(chunk []byte, dropUsage bool) (out []byte, usage *oai.Usage, err error) {
	raw, ok, valid := oai.Member(chunk, "usage") // most chunks have none: checked without an index
	if !valid {
		_, err := oai.ParseObject(chunk) // what is wrong with it
		if err == nil {
			err = errors.New("chunk is not a JSON object")
		}
		return nil, nil, err
	}
	if !ok {
		return chunk, nil, nil
	}
	obj, err := oai.ParseObject(chunk)
	if err != nil {
		return nil, nil, err
	}
	if string(raw) != "null" {
		usage = new(oai.Usage)
		if err := json.Unmarshal(raw, usage); err != nil {
			return nil, nil, err
		}
	}
	if !dropUsage {
		return chunk, usage, nil
	}
	if choices, ok := obj.Get("choices"); ok && isEmptyArray(choices) && usage != nil {
		return nil, usage, nil
	}
	out, err = oai.Delete(chunk, "usage")
	return out, usage, err
}

func isEmptyArray(b []byte) bool {
	if len(b) < 2 || b[0] != '[' {
		return false
	}
	for _, c := range b[1:] {
		switch c {
		case ' ', '\t', '\n', '\r':
		case ']':
			return true
		default:
			return false
		}
	}
	return false
}
