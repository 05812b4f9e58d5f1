package anthropic

import (
	"context"
	"errors"
	"io"

	"github.com/maskgate/maskgate/backends"
	"github.com/maskgate/maskgate/backends/sse"
)

// stream reads the Messages API's event stream as chat.completion.chunk objects. One
// event may give several chunks (message_stop gives the finish and the usage), so they
// wait in pending.
type stream struct {
	parent  context.Context // the caller's; when done, its cause says why the stream broke
	body    io.ReadCloser
	r       *sse.Reader
	cancel  context.CancelCauseFunc
	c       *chunker
	pending [][]byte
	err     error // what ended the stream, returned from then on
}

var errStreamClosed = errors.New("stream closed")

func newStream(parent context.Context, body io.ReadCloser, cancel context.CancelCauseFunc, maxEvent int, c *chunker) *stream {
	return &stream{parent: parent, body: body, r: sse.NewReader(body, maxEvent), cancel: cancel, c: c}
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
		if err != nil {
			s.err = backends.ReadError(s.c.name, s.parent, err, true)
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
