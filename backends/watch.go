package backends

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"sync/atomic"
	"time"
)

// DefaultIdleTimeout is how long an answer may pause between two reads that bring
// bytes when a backend sets no idle timeout.
const DefaultIdleTimeout = 60 * time.Second

// ErrIdleTimeout is the cancellation cause of an exchange whose upstream stopped
// sending mid-answer for longer than its idle timeout.
var ErrIdleTimeout = errors.New("upstream stopped sending")

// Watch bounds one exchange in time. Until the first byte of the response body arrives
// the limit is first, counted from Watch (headers included: for an engine that sends
// them with the whole answer it bounds the generation); after it, each read that waits
// on the upstream may wait idle at most, counted only while the reader is waiting, so a
// slow client that keeps the gateway from reading is not blamed on the upstream. When a
// limit passes, cancel is called with ErrHeaderTimeout or ErrIdleTimeout.
type Watch struct {
	timer       *time.Timer
	first, idle time.Duration
	started     atomic.Bool
}

// StartWatch arms the first-byte limit now. Either limit zero means none.
func StartWatch(cancel context.CancelCauseFunc, first, idle time.Duration) *Watch {
	w := &Watch{first: first, idle: idle}
	arm := first
	if first <= 0 {
		arm = math.MaxInt64 // AfterFunc(0) would fire before Stop could disarm it
	}
	w.timer = time.AfterFunc(arm, func() {
		if w.started.Load() {
			cancel(ErrIdleTimeout)
		} else {
			cancel(ErrHeaderTimeout)
		}
	})
	if first <= 0 {
		w.timer.Stop()
	}
	return w
}

// Stop disarms the watch.
func (w *Watch) Stop() { w.timer.Stop() }

// Body returns body with the watch on its reads. ctx is the exchange's context (the
// one cancel ends): a read that fails because a limit passed returns an error wrapping
// the cause, ErrHeaderTimeout or ErrIdleTimeout, with the limit. Closing the body stops
// the watch; so does the end of the body.
func (w *Watch) Body(ctx context.Context, body io.ReadCloser) io.ReadCloser {
	return &watchedBody{rc: body, w: w, ctx: ctx}
}

type watchedBody struct {
	rc   io.ReadCloser
	w    *Watch
	ctx  context.Context
	done bool
}

func (b *watchedBody) Read(p []byte) (int, error) {
	started := b.w.started.Load()
	if started && !b.done && b.w.idle > 0 {
		b.w.timer.Reset(b.w.idle)
	}
	n, err := b.rc.Read(p)
	if n > 0 && !started {
		b.w.started.Store(true)
		started = true
	}
	if started || err != nil {
		b.w.timer.Stop()
	}
	if err != nil {
		b.done = true
		if err != io.EOF {
			err = b.explain(err)
		}
	}
	return n, err
}

// explain wraps a read error with the limit that caused it, if one did.
func (b *watchedBody) explain(err error) error {
	switch cause := context.Cause(b.ctx); {
	case errors.Is(cause, ErrIdleTimeout):
		return &LimitError{Cause: ErrIdleTimeout, Limit: b.w.idle, Err: err}
	case errors.Is(cause, ErrHeaderTimeout):
		return &LimitError{Cause: ErrHeaderTimeout, Limit: b.w.first, Err: err}
	}
	return err
}

// LimitError is a read that failed because a Watch limit passed.
type LimitError struct {
	Cause error         // ErrHeaderTimeout or ErrIdleTimeout
	Limit time.Duration // the limit that passed
	Err   error         // what the read returned
}

func (e *LimitError) Error() string {
	return fmt.Sprintf("%v (limit %s): %v", e.Cause, e.Limit, e.Err)
}

func (e *LimitError) Unwrap() []error { return []error{e.Cause, e.Err} }

func (b *watchedBody) Close() error {
	b.done = true
	b.w.timer.Stop()
	return b.rc.Close()
}
