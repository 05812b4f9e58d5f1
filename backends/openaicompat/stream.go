package openaicompat

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"

	"github.com/maskgate/maskgate/backends"
	"github.com/maskgate/maskgate/backends/oai"
	"github.com/maskgate/maskgate/backends/sse"
)

// stream reads an upstream's SSE body as chat.completion.chunk objects.
type stream struct {
	parent context.Context // the caller's; when done, its cause says why the stream broke
	body   io.ReadCloser
	r      *sse.Reader
	cancel context.CancelCauseFunc
	name   string
	secret string // the upstream key, never shown
	done   bool
}

func newStream(parent context.Context, body io.ReadCloser, cancel context.CancelCauseFunc, maxEvent int, name, secret string) *stream {
	return &stream{parent: parent, body: body, r: sse.NewReader(body, maxEvent), cancel: cancel, name: name, secret: secret}
}

// clip keeps an upstream message short enough to show.
func clip(s string) string {
	const max = 512
	if len(s) <= max {
		return s
	}
	return s[:max] + "…"
}

var errStreamClosed = errors.New("stream closed")

func (s *stream) Next() ([]byte, error) {
	if s.done {
		return nil, io.EOF
	}
	ev, err := s.r.Next()
	if err != nil {
		return nil, backends.ReadError(s.name, s.parent, err, true)
	}
	if string(ev.Data) == "[DONE]" {
		s.done = true
		return nil, io.EOF
	}
	// OpenAI and vLLM report a failure inside a stream as an event carrying "error".
	if ev.Name == "error" || hasErrorMember(ev.Data) {
		d, ok := oai.ParseErrorBody(ev.Data)
		if !ok {
			d.Message = string(ev.Data)
		}
		return nil, &backends.Error{Status: http.StatusBadGateway, Type: "upstream_error",
			Message: fmt.Sprintf("backend %q failed mid-stream: %s", s.name, clip(backends.Redact(d.Message, s.secret)))}
	}
	return ev.Data, nil
}

func hasErrorMember(data []byte) bool {
	// Most chunks do not hold the word, and are not scanned. A key spelled with escapes
	// ("\u0065rror") is not one an upstream writes.
	if !bytes.Contains(data, errorKey) {
		return false
	}
	v, ok, _ := oai.Member(data, "error") // a scan without an index: no allocation
	return ok && string(v) != "null"
}

var errorKey = []byte(`"error"`)

// Ready reports whether the next event is whole in the read buffer (backends.StreamReady).
func (s *stream) Ready() bool { return !s.done && s.r.Ready() }

var _ backends.StreamReady = (*stream)(nil)

func (s *stream) Close() error {
	s.cancel(errStreamClosed)
	return s.body.Close()
}
