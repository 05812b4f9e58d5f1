package ollama

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"
)

// errHeaderTimeout is the cause when the upstream is too slow to send response headers.
var errHeaderTimeout = errors.New("upstream response headers timed out")

// headerTimeout bounds the wait for response headers of each request through rt. The api
// client reads the body itself and offers no hook between headers and body, so the bound
// sits in the transport: a timer cancels the request until headers arrive, and the body
// keeps the request's context alive until it is closed.
type headerTimeout struct {
	rt http.RoundTripper
	d  time.Duration
}

func (h *headerTimeout) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx, cancel := context.WithCancelCause(req.Context())
	timer := time.AfterFunc(h.d, func() { cancel(errHeaderTimeout) })
	resp, err := h.rt.RoundTrip(req.WithContext(ctx))
	fired := !timer.Stop()
	if err != nil {
		cancel(nil)
		if errors.Is(context.Cause(ctx), errHeaderTimeout) && req.Context().Err() == nil {
			return nil, fmt.Errorf("%w after %s: %v", errHeaderTimeout, h.d, err)
		}
		return nil, err
	}
	if fired { // headers came as the timer fired: the body is already cancelled
		cancel(errHeaderTimeout) // the timer's own call may not have run yet
		cause := context.Cause(ctx)
		resp.Body.Close()
		if errors.Is(cause, errHeaderTimeout) {
			return nil, fmt.Errorf("%w after %s", errHeaderTimeout, h.d)
		}
		return nil, cause
	}
	resp.Body = &cancelOnClose{ReadCloser: resp.Body, cancel: cancel}
	return resp, nil
}

// cancelOnClose releases a response's context when its body is closed.
type cancelOnClose struct {
	io.ReadCloser
	cancel context.CancelCauseFunc
}

func (c *cancelOnClose) Close() error {
	err := c.ReadCloser.Close()
	c.cancel(nil)
	return err
}
