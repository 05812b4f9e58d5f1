package gateway_test

import (
	"bufio"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// A relayed stream writes chunks the upstream sent together in one flush, but never holds
// one back for a chunk that has not come: here the upstream sends a text chunk and a
// usage chunk (which the client did not ask for, so it is dropped) together, then waits
// until the client has the text before it sends the rest.
func TestRelay_ChunkInHandIsFlushedBeforeTheGatewayWaits(t *testing.T) {
	const (
		text  = `{"id":"c","object":"chat.completion.chunk","created":1,"model":"m1","choices":[{"index":0,"delta":{"content":"hi"},"finish_reason":null}]}`
		usage = `{"id":"c","object":"chat.completion.chunk","created":1,"model":"m1","choices":[],"usage":{"prompt_tokens":3,"completion_tokens":1,"total_tokens":4}}`
		last  = `{"id":"c","object":"chat.completion.chunk","created":1,"model":"m1","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`
	)
	seen := make(chan struct{})
	up := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "data: "+text+"\n\ndata: "+usage+"\n\n")
		w.(http.Flusher).Flush()
		select {
		case <-seen:
		case <-time.After(10 * time.Second):
		}
		io.WriteString(w, "data: "+last+"\n\ndata: [DONE]\n\n")
	})
	gw := gatewayFor(t, up)
	type first struct {
		line string
		rest *bufio.Reader
		err  error
	}
	got := make(chan first, 1)
	go func() { // the client: the response headers, then the first event's line
		resp, err := http.Post(gw.URL+"/v1/chat/completions", "application/json",
			strings.NewReader(`{"model":"m1","stream":true,"messages":[{"role":"user","content":"x"}]}`))
		if err != nil {
			got <- first{err: err}
			return
		}
		t.Cleanup(func() { resp.Body.Close() })
		br := bufio.NewReader(resp.Body)
		line, err := br.ReadString('\n')
		got <- first{line, br, err}
	}()
	var f first
	select {
	case f = <-got:
		if f.err != nil || !strings.Contains(f.line, `"content":"hi"`) {
			t.Fatalf("first line %q (%v), want the text chunk", f.line, f.err)
		}
	case <-time.After(5 * time.Second):
		close(seen)
		t.Fatal("the text chunk did not reach the client while the upstream waited")
	}
	close(seen)
	rest, _ := io.ReadAll(f.rest)
	if !strings.Contains(string(rest), `"finish_reason":"stop"`) || !strings.HasSuffix(string(rest), "data: [DONE]\n\n") || strings.Contains(string(rest), `"usage"`) {
		t.Errorf("rest of the stream: %q", rest)
	}
}
