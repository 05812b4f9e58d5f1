package openaicompat

import (
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
	body   io.ReadCloser
	r      *sse.Reader
	cancel context.CancelCauseFunc
	name   string
	done   bool
}

func newStream(body io.ReadCloser, cancel context.CancelCauseFunc, maxLine int, name string) *stream {
	return &stream{body: body, r: sse.NewReader(body, maxLine), cancel: cancel, name: name}
}

var errStreamClosed = errors.New("stream closed")

func (s *stream) Next() ([]byte, error) {
	if s.done {
		return nil, io.EOF
	}
	ev, err := s.r.Next()
	switch {
	case err == nil:
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return nil, fmt.Errorf("backend %q: %w", s.name, backends.ErrTruncated)
	case errors.Is(err, sse.ErrLineTooLong):
		return nil, &backends.Error{Status: http.StatusBadGateway, Type: "upstream_error", Code: "upstream_line_too_long",
			Message: fmt.Sprintf("backend %q sent an event line over the limit", s.name), Err: err}
	default:
		return nil, fmt.Errorf("backend %q: stream read: %w", s.name, err)
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
			Message: fmt.Sprintf("backend %q failed mid-stream: %s", s.name, d.Message)}
	}
	return ev.Data, nil
}

func hasErrorMember(data []byte) bool {
	v, ok := oai.Get(data, "error")
	return ok && string(v) != "null"
}

func (s *stream) Close() error {
	s.cancel(errStreamClosed)
	return s.body.Close()
}
