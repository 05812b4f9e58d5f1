package ollama

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/maskgate/maskgate/backends"
)

func TestStream_SlowTokensAfterHeadersAreNotATimeout(t *testing.T) {
	// The headers and first line are written at once and must arrive within first, which
	// is 10x and more what a loaded 2-core machine under -race takes; the pause after them
	// is longer than first, so a first-byte limit wrongly left armed fails the stream.
	const first, gap = 3 * time.Second, 4 * time.Second
	f := newFake(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/x-ndjson")
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush()
		for i, l := range []string{
			`{"message":{"role":"assistant","content":"slow"},"done":false}`,
			`{"message":{"role":"assistant","content":""},"done":true,"done_reason":"stop"}`,
		} {
			if i > 0 {
				time.Sleep(gap)
			}
			io.WriteString(w, l+"\n")
			w.(http.Flusher).Flush()
		}
	})
	b := newBackend(t, f.URL, Options{Timeout: first, IdleTimeout: time.Minute})
	resp, err := b.ChatCompletion(context.Background(), &backends.Request{Body: []byte(hello), Stream: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := drain(t, resp.Stream); !errors.Is(err, io.EOF) {
		t.Errorf("end = %v, want io.EOF", err)
	}
}
func TestStream_TruncatedWithoutDone(t *testing.T) {
	f := newFake(t, ndjson(
		`{"message":{"role":"assistant","content":"Hel"},"done":false}`,
		`{"message":{"role":"assistant","content":"lo"},"done":fal`, // cut mid-line
	))
	b := newBackend(t, f.URL, Options{})
	resp, err := b.ChatCompletion(context.Background(), &backends.Request{Body: []byte(hello), Stream: true})
	if err != nil {
		t.Fatal(err)
	}
	got, err := drain(t, resp.Stream)
	if !errors.Is(err, backends.ErrTruncated) {
		t.Errorf("end = %v, want ErrTruncated", err)
	}
	if len(got) != 2 {
		t.Errorf("got %d chunks before the end, want 2 (role, Hel)", len(got))
	}

	f2 := newFake(t, ndjson(`{"message":{"role":"assistant","content":"Hel"},"done":false}`))
	b2 := newBackend(t, f2.URL, Options{})
	resp, err = b2.ChatCompletion(context.Background(), &backends.Request{Body: []byte(hello), Stream: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := drain(t, resp.Stream); !errors.Is(err, backends.ErrTruncated) {
		t.Errorf("stream end = %v, want ErrTruncated", err)
	}
	if _, err := b2.ChatCompletion(context.Background(), &backends.Request{Body: []byte(hello)}); !errors.Is(err, backends.ErrTruncated) {
		t.Errorf("non-streaming = %v, want ErrTruncated", err)
	}
	noStreamGoroutines(t, 2*time.Second)
}
func TestStream_MidStreamErrorIs502(t *testing.T) {
	f := newFake(t, ndjson(
		`{"message":{"role":"assistant","content":"Hel"},"done":false}`,
		`{"error":"llama runner process has terminated: exit status 2"}`,
	))
	b := newBackend(t, f.URL, Options{})
	resp, err := b.ChatCompletion(context.Background(), &backends.Request{Body: []byte(hello), Stream: true})
	if err != nil {
		t.Fatal(err)
	}
	_, err = drain(t, resp.Stream)
	var be *backends.Error
	if !errors.As(err, &be) || be.Status != http.StatusBadGateway || !strings.Contains(be.Message, "runner process") {
		t.Errorf("end = %v, want a 502 with Ollama's message", err)
	}
}

// hanging answers one line and then holds the stream open until the request ends,
// reporting that on cancelled.
func hanging(cancelled chan<- struct{}) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/x-ndjson")
		io.WriteString(w, `{"message":{"role":"assistant","content":"Hel"},"done":false}`+"\n")
		w.(http.Flusher).Flush()
		select {
		case <-r.Context().Done():
			close(cancelled)
		case <-time.After(10 * time.Second):
		}
	}
}
func TestStream_CloseCancelsUpstream(t *testing.T) {
	cancelled := make(chan struct{})
	f := newFake(t, hanging(cancelled))
	b := newBackend(t, f.URL, Options{})
	resp, err := b.ChatCompletion(context.Background(), &backends.Request{Body: []byte(hello), Stream: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := resp.Stream.Next(); err != nil { // the role chunk
		t.Fatal(err)
	}
	resp.Stream.Close()
	noStreamGoroutines(t, 2*time.Second) // Close waits for the goroutine
	select {
	case <-cancelled:
	case <-time.After(5 * time.Second):
		t.Fatal("Ollama never saw the request cancelled")
	}
	if err := resp.Stream.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if _, err := resp.Stream.Next(); err == nil {
		t.Error("Next after Close succeeded")
	}
}
func TestStream_CallerCancelCancelsUpstream(t *testing.T) {
	cancelled := make(chan struct{})
	f := newFake(t, hanging(cancelled))
	b := newBackend(t, f.URL, Options{})
	ctx, cancel := context.WithCancel(context.Background())
	resp, err := b.ChatCompletion(ctx, &backends.Request{Body: []byte(hello), Stream: true})
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Stream.Close()
	for range 2 { // role, "Hel"
		if _, err := resp.Stream.Next(); err != nil {
			t.Fatal(err)
		}
	}
	cancel()
	_, err = resp.Stream.Next()
	if !errors.Is(err, context.Canceled) {
		t.Errorf("Next after cancel = %v, want context.Canceled", err)
	}
	select {
	case <-cancelled:
	case <-time.After(5 * time.Second):
		t.Fatal("Ollama never saw the request cancelled")
	}
	noStreamGoroutines(t, 2*time.Second) // without Close, the goroutine still ends
}
func TestStream_CancelBeforeFirstLine(t *testing.T) {
	f := newFake(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/x-ndjson")
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	})
	b := newBackend(t, f.URL, Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, err := b.ChatCompletion(ctx, &backends.Request{Body: []byte(hello), Stream: true})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("err = %v, want the caller's deadline", err)
	}
	noStreamGoroutines(t, 2*time.Second)
}
func TestStream_AbandonedStreamsLeaveNoGoroutines(t *testing.T) {
	f := newFake(t, ndjson(
		`{"message":{"role":"assistant","content":"a"},"done":false}`,
		`{"message":{"role":"assistant","content":"b"},"done":false}`,
		`{"message":{"role":"assistant","content":"c"},"done":true,"done_reason":"stop"}`,
	))
	b := newBackend(t, f.URL, Options{})
	for i := range 20 {
		resp, err := b.ChatCompletion(context.Background(), &backends.Request{Body: []byte(hello), Stream: true})
		if err != nil {
			t.Fatal(err)
		}
		for range i % 4 { // read some, never the end
			resp.Stream.Next()
		}
		resp.Stream.Close()
	}
	noStreamGoroutines(t, 2*time.Second)
}
