package anthropic

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"

	"github.com/maskgate/maskgate/backends"
	"github.com/maskgate/maskgate/backends/sse"
)

// stream reads the Messages API's event stream as chat.completion.chunk objects. One
// event may give several chunks (message_stop gives the finish and the usage), so they
// wait in pending.
type stream struct {
	body    io.ReadCloser
	r       *sse.Reader
	cancel  context.CancelCauseFunc
	c       *chunker
	pending [][]byte
	err     error // what ended the stream, returned from then on
}

var errStreamClosed = errors.New("stream closed")

func newStream(body io.ReadCloser, cancel context.CancelCauseFunc, maxLine int, c *chunker) *stream {
	return &stream{body: body, r: sse.NewReader(body, maxLine), cancel: cancel, c: c}
}

// Next returns the next chunk; io.EOF after message_stop, backends.ErrTruncated when the
// stream ends before it, and the upstream's error for an error event.
func (s *stream) Next() ([]byte, error) {
	for len(s.pending) == 0 {
		if s.err != nil {
			return nil, s.err
		}
		if s.c.done {
			s.err = io.EOF
			return nil, s.err
		}
		ev, err := s.r.Next()
		switch {
		case err == nil:
		case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
			s.err = fmt.Errorf("backend %q: %w", s.c.name, backends.ErrTruncated)
			continue
		case errors.Is(err, sse.ErrLineTooLong):
			s.err = &backends.Error{Status: http.StatusBadGateway, Type: "upstream_error", Code: "upstream_line_too_long",
				Message: fmt.Sprintf("backend %q sent an event line over the limit", s.c.name), Err: err}
			continue
		default:
			s.err = fmt.Errorf("backend %q: stream read: %w", s.c.name, err)
			continue
		}
		chunks, err := s.c.event(ev.Data)
		if err != nil {
			s.err = err
			continue
		}
		s.pending = chunks
	}
	ch := s.pending[0]
	s.pending = s.pending[1:]
	return ch, nil
}

// Close cancels the request and releases the connection; it is safe to call twice.
func (s *stream) Close() error {
	s.cancel(errStreamClosed)
	if s.err == nil {
		s.err = errStreamClosed
	}
	return s.body.Close()
}
