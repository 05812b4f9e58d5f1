package ollama

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/maskgate/maskgate/backends"
)

// The api client drops the body's read error; the transport keeps it, so an Ollama
// that stalls mid-answer is a 504 upstream_timeout at idle_timeout, and one that resets
// its connection mid-stream is upstream_disconnected, not a plain truncation.
func TestFault_StallAndResetSayWhatHappened(t *testing.T) {
	const idle = 200 * time.Millisecond
	first := `{"message":{"role":"assistant","content":"Hel"},"done":false}` + "\n"
	stall := newFake(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/x-ndjson")
		io.WriteString(w, first)
		w.(http.Flusher).Flush()
		select {
		case <-r.Context().Done():
		case <-time.After(30 * time.Second):
		}
	})
	reset := newFake(t, func(w http.ResponseWriter, r *http.Request) {
		conn, buf, _ := http.NewResponseController(w).Hijack()
		buf.WriteString("HTTP/1.1 200 OK\r\nContent-Type: application/x-ndjson\r\nTransfer-Encoding: chunked\r\n\r\n")
		fmt.Fprintf(buf, "%x\r\n%s\r\n", len(first), first)
		buf.Flush()
		time.Sleep(50 * time.Millisecond)
		conn.(*net.TCPConn).SetLinger(0)
		conn.Close()
	})
	for _, tt := range []struct {
		name   string
		url    string
		stream bool
		code   string
	}{
		{"stall mid-stream", stall.URL, true, backends.CodeTimeout},
		{"stall mid-answer", stall.URL, false, backends.CodeTimeout},
		{"reset mid-stream", reset.URL, true, backends.CodeDisconnected},
		{"reset mid-answer", reset.URL, false, backends.CodeTruncated},
	} {
		t.Run(tt.name, func(t *testing.T) {
			b := newBackend(t, tt.url, Options{IdleTimeout: idle})
			start := time.Now()
			resp, err := b.ChatCompletion(context.Background(), &backends.Request{Body: []byte(hello), Stream: tt.stream})
			if err == nil {
				_, err = drain(t, resp.Stream)
			}
			var be *backends.Error
			if !errors.As(err, &be) || be.Code != tt.code {
				t.Fatalf("err %v, want %s", err, tt.code)
			}
			if took := time.Since(start); took > idle+3*time.Second {
				t.Errorf("took %v, idle_timeout %v", took, idle)
			}
		})
	}
}
