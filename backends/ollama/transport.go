package ollama

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"

	"github.com/maskgate/maskgate/backends"
)

// errHeaderTimeout is the cause when the upstream is too slow to send response headers.
var errHeaderTimeout = backends.ErrHeaderTimeout

// watchTransport bounds each request through rt in time with a backends.Watch: the
// headers and first byte within first, then each pause of the body within idle. The api
// client reads the body itself and offers no hook between headers and body, so the bound
// sits in the transport; and since the client drops the body's read error (its scanner's
// Err is never checked), the error is also kept in the request's readNote, if the
// caller put one in its context, for the caller to classify.
type watchTransport struct {
	rt          http.RoundTripper
	first, idle time.Duration
}

func (h *watchTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx, cancel := context.WithCancelCause(req.Context())
	w := backends.StartWatch(cancel, h.first, h.idle)
	resp, err := h.rt.RoundTrip(req.WithContext(ctx))
	if err != nil {
		w.Stop()
		cancel(nil)
		if errors.Is(context.Cause(ctx), errHeaderTimeout) && req.Context().Err() == nil {
			return nil, fmt.Errorf("%w after %s: %v", errHeaderTimeout, h.first, err)
		}
		return nil, err
	}
	resp.Body = &noteBody{ReadCloser: w.Body(ctx, resp.Body), cancel: cancel, note: noteFrom(req.Context())}
	return resp, nil
}

// readNote keeps the first failed read of a response body.
type readNote struct {
	mu  sync.Mutex
	err error
}

func (n *readNote) set(err error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.err == nil {
		n.err = err
	}
}

func (n *readNote) get() error {
	if n == nil {
		return nil
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.err
}

type noteKey struct{}

// withNote returns ctx carrying a new readNote for the transport to fill.
func withNote(ctx context.Context) (context.Context, *readNote) {
	n := &readNote{}
	return context.WithValue(ctx, noteKey{}, n), n
}

func noteFrom(ctx context.Context) *readNote {
	n, _ := ctx.Value(noteKey{}).(*readNote)
	return n
}

// noteBody records a failed read and releases the response's context when closed.
type noteBody struct {
	io.ReadCloser
	cancel context.CancelCauseFunc
	note   *readNote
}

func (c *noteBody) Read(p []byte) (int, error) {
	n, err := c.ReadCloser.Read(p)
	if err != nil && err != io.EOF && c.note != nil {
		c.note.set(err)
	}
	return n, err
}

func (c *noteBody) Close() error {
	err := c.ReadCloser.Close()
	c.cancel(nil)
	return err
}
