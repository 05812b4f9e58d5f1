package ollama

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"

	"github.com/ollama/ollama/api"

	"github.com/maskgate/maskgate/backends"
)

// event is one step of a stream: a chunk, or the error that ends it (io.EOF when Ollama
// said it was done).
type event struct {
	data []byte
	err  error
}

// stream adapts the api client's callbacks to the pull-style backends.Stream. One
// goroutine runs the call and hands each chunk over an unbuffered channel; every send
// selects on the call's context, which Close cancels before waiting for the goroutine.
type stream struct {
	events <-chan event
	exited <-chan struct{}
	cancel context.CancelCauseFunc
	ctx    context.Context // the call's; its cause says why a stream stopped early
	name   string
	first  []byte // the chunk read before the stream was handed out
	err    error  // the error that ended the stream, returned from then on
}

var errStreamClosed = errors.New("stream closed")

// startStream sends the request and waits for the first chunk, so that an error before
// any output (a missing model, an unreachable server) is returned as a plain error.
func (b *Backend) startStream(ctx context.Context, t *translated, m meta, acct *accounting) (*stream, error) {
	cctx, cancel := context.WithCancelCause(ctx)
	cctx, note := withNote(cctx)
	events := make(chan event)
	exited := make(chan struct{})
	go func() {
		defer close(exited)
		defer cancel(nil)
		send := func(ev event) bool {
			select {
			case events <- ev:
				return true
			case <-cctx.Done():
				return false
			}
		}
		// No handler's recovery reaches this goroutine: a panic while reading (a fault in
		// the transport or the decoder) ends the stream with an error instead of the
		// gateway.
		defer func() {
			if v := recover(); v != nil {
				send(event{err: &backends.Error{Status: http.StatusBadGateway, Type: "upstream_error", Code: "upstream_read_failed",
					Message: fmt.Sprintf("backend %q: reading the answer failed: %v", b.opt.Name, v)}})
			}
		}()
		c := &chunker{t: t, m: m, acct: acct}
		err := b.chat.Chat(cctx, t.req, func(resp api.ChatResponse) error {
			chunks, err := c.add(&resp)
			for _, ch := range chunks {
				if !send(event{data: ch}) {
					return context.Cause(cctx)
				}
			}
			return err
		})
		switch {
		case err != nil:
			err = b.classify(ctx, t.req.Model, err)
		case !c.done():
			err = b.incomplete(ctx, note, true)
		default:
			err = io.EOF
		}
		send(event{err: err})
	}()

	s := &stream{events: events, exited: exited, cancel: cancel, ctx: cctx, name: b.opt.Name}
	var ev event
	select {
	case ev = <-events:
	case <-exited: // the caller's context ended before any output
		cancel(nil)
		return nil, fmt.Errorf("backend %q: %w", b.opt.Name, context.Cause(ctx))
	}
	if ev.err != nil {
		s.Close()
		if errors.Is(ev.err, io.EOF) { // done before any chunk: cannot happen with a real server
			return nil, fmt.Errorf("backend %q: %w", b.opt.Name, backends.ErrTruncated)
		}
		return nil, ev.err
	}
	s.first = ev.data
	return s, nil
}

func (s *stream) Next() ([]byte, error) {
	if s.err != nil {
		return nil, s.err
	}
	if s.first != nil {
		data := s.first
		s.first = nil
		return data, nil
	}
	var ev event
	select {
	case ev = <-s.events:
	case <-s.exited: // it gave up sending: the request's context ended
		s.err = fmt.Errorf("backend %q: %w", s.name, context.Cause(s.ctx))
		return nil, s.err
	}
	if ev.err != nil {
		s.err = ev.err
		return nil, s.err
	}
	return ev.data, nil
}

// Close cancels the request and waits for the goroutine that ran it.
func (s *stream) Close() error {
	s.cancel(errStreamClosed)
	<-s.exited
	if s.err == nil {
		s.err = errStreamClosed
	}
	return nil
}
