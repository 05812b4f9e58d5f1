package backends_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/maskgate/maskgate/backends"
	"github.com/maskgate/maskgate/backends/sse"
)

// margin is what a test allows past a limit for scheduling on a busy machine.
const margin = 3 * time.Second

func newUpstream(t *testing.T, h http.HandlerFunc, timeout, idle time.Duration) *backends.Upstream {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return &backends.Upstream{Name: "up", Base: srv.URL, Client: srv.Client(), Timeout: timeout, IdleTimeout: idle}
}

func waitDone(r *http.Request) {
	select {
	case <-r.Context().Done():
	case <-time.After(30 * time.Second):
	}
}

// The first-byte limit covers the headers and the body's first byte; after it, each
// pause is bounded by the idle limit; each failure says which, with its limit.
func TestWatch_FirstByteThenIdle(t *testing.T) {
	// The limit that must fire is 1 s (it fires however loaded the machine is; a shorter
	// one only saves time); the one that must not (the first byte, where the body's first
	// byte is written at once) is far longer than any scheduling delay.
	const limit, long = 1 * time.Second, 30 * time.Second
	tests := []struct {
		name        string
		h           http.HandlerFunc
		first, idle time.Duration
		want        error
	}{
		{"no headers", func(w http.ResponseWriter, r *http.Request) { waitDone(r) }, limit, limit, backends.ErrHeaderTimeout},
		{"headers, no body", func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(200)
			w.(http.Flusher).Flush()
			waitDone(r)
		}, limit, limit, backends.ErrHeaderTimeout},
		{"part of a body", func(w http.ResponseWriter, r *http.Request) {
			io.WriteString(w, "data: 1\n\n")
			w.(http.Flusher).Flush()
			waitDone(r)
		}, long, limit, backends.ErrIdleTimeout},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			u := newUpstream(t, tt.h, tt.first, tt.idle)
			start := time.Now()
			resp, cancel, err := u.Open(context.Background(), "/", nil, "text/event-stream")
			if err == nil {
				_, err = io.ReadAll(resp.Body)
				resp.Body.Close()
				cancel(nil)
			}
			if !errors.Is(err, tt.want) {
				t.Fatalf("err %v, want %v", err, tt.want)
			}
			if took := time.Since(start); took > limit+margin {
				t.Errorf("failed after %v, limit %v", took, limit)
			}
		})
	}
}

// The idle clock runs only while the reader waits on the upstream: a reader that
// pauses (the gateway blocked on a slow client) is not the upstream's stall.
func TestWatch_ReaderPausesAreNotTheUpstreamsStall(t *testing.T) {
	const idle = 100 * time.Millisecond
	u := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		for i := range 3 {
			fmt.Fprintf(w, "data: %d\n\n", i)
			w.(http.Flusher).Flush()
		}
	}, 30*time.Second, idle)
	resp, cancel, err := u.Open(context.Background(), "/", nil, "text/event-stream")
	if err != nil {
		t.Fatal(err)
	}
	defer cancel(nil)
	defer resp.Body.Close()
	r := sse.NewReader(resp.Body, 0)
	for i := 0; ; i++ {
		_, err := r.Next()
		if err == io.EOF {
			if i != 3 {
				t.Fatalf("%d events", i)
			}
			return
		}
		if err != nil {
			t.Fatalf("event %d: %v", i, err)
		}
		time.Sleep(3 * idle) // the reader is busy elsewhere
	}
}

// A read that fails is classified by what happened, not as "unreachable": a limit, an
// event over the cap, an end before the terminator, a reset; and the client's own
// departure is its cause, whatever the read saw.
func TestReadError_SaysWhatHappened(t *testing.T) {
	reset := &net.OpError{Op: "read", Net: "tcp", Err: errors.New("connection reset by peer")}
	tests := []struct {
		name   string
		err    error
		stream bool
		status int
		code   string
	}{
		{"idle limit", &backends.LimitError{Cause: backends.ErrIdleTimeout, Limit: time.Minute, Err: context.Canceled}, true, 504, backends.CodeTimeout},
		{"first-byte limit", &backends.LimitError{Cause: backends.ErrHeaderTimeout, Limit: time.Minute, Err: context.Canceled}, false, 504, backends.CodeTimeout},
		{"event over the cap", fmt.Errorf("%w: over 8 bytes", sse.ErrTooLarge), true, 502, backends.CodeTooLarge},
		{"stream reset", reset, true, 502, backends.CodeDisconnected},
		{"stream ended early", io.ErrUnexpectedEOF, true, 0, ""},
		{"whole answer reset", reset, false, 502, backends.CodeTruncated},
		{"whole answer cut", io.ErrUnexpectedEOF, false, 502, backends.CodeTruncated},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := backends.ReadError("up", context.Background(), tt.err, tt.stream)
			var be *backends.Error
			switch {
			case tt.status == 0:
				if !errors.Is(err, backends.ErrTruncated) || errors.As(err, &be) {
					t.Errorf("err %v, want ErrTruncated for the gateway to report", err)
				}
			case !errors.As(err, &be) || be.Status != tt.status || be.Code != tt.code:
				t.Errorf("err %v, want %d %s", err, tt.status, tt.code)
			case strings.Contains(be.Message, "running"):
				t.Errorf("message %q blames the address", be.Message)
			}
		})
	}
	ctx, cancel := context.WithCancelCause(context.Background())
	gone := errors.New("client went away")
	cancel(gone)
	if err := backends.ReadError("up", ctx, reset, true); !errors.Is(err, gone) {
		t.Errorf("with the client gone: %v", err)
	}
}

// ReadAnswer caps a whole answer and reports it in the client's terms.
func TestReadAnswer_CapIsTooLarge(t *testing.T) {
	if b, err := backends.ReadAnswer("up", context.Background(), strings.NewReader("0123456789"), 10); err != nil || string(b) != "0123456789" {
		t.Errorf("at the cap: %q %v", b, err)
	}
	_, err := backends.ReadAnswer("up", context.Background(), strings.NewReader("0123456789x"), 10)
	var be *backends.Error
	if !errors.As(err, &be) || be.Status != 502 || be.Code != backends.CodeTooLarge {
		t.Errorf("over the cap: %v", err)
	}
}

// An upstream's error answer that echoes the credential the gateway sent comes back
// without it, whatever its shape.
func TestResponseError_RedactsTheSentCredential(t *testing.T) {
	const key = "plain-words-key-2024"
	u := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(401)
		io.WriteString(w, `{"error":{"message":"key `+strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")+` is not valid"}}`)
	}, time.Second, time.Second)
	u.Authorize = func(r *http.Request) { r.Header.Set("Authorization", "Bearer "+key) }
	_, _, err := u.Open(context.Background(), "/", nil, "application/json")
	var be *backends.Error
	if !errors.As(err, &be) || be.Status != 401 {
		t.Fatalf("err %v", err)
	}
	if strings.Contains(be.Error(), key) || be.Message != "key [redacted] is not valid" {
		t.Errorf("message %q", be.Message)
	}
}

// A zero first-byte limit is none: the exchange is never cancelled for time, however
// long the upstream takes (time.AfterFunc(0) fired before Stop could disarm it, and a
// few exchanges in a hundred failed as too slow at once).
func TestWatch_ZeroLimitIsNone(t *testing.T) {
	u := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(2 * time.Millisecond)
		io.WriteString(w, "{}")
	}, 0, 0)
	for i := range 100 {
		resp, cancel, err := u.Open(context.Background(), "/", []byte("{}"), "application/json")
		if err != nil {
			t.Fatalf("exchange %d: %v", i, err)
		}
		io.ReadAll(resp.Body)
		resp.Body.Close()
		cancel(nil)
	}
}
