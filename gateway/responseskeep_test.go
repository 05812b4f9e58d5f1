package gateway_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/maskgate/maskgate/backends/openaicompat"
	"github.com/maskgate/maskgate/gateway"
	"github.com/maskgate/maskgate/internal/nodetest"
)

// A Responses stream's keep-alive is an event, response.in_progress again, which Codex
// counts (it ends a turn after 300 s without an event; an SSE comment is none) and the
// SDKs read as the progress it is. These stall the upstream after its first chunk,
// "hello", and release it once the client has read two keep-alives after that text (or,
// for the Node SDK, once the gateway has written them): nothing waits on a deadline.

// helloFirst is the chunk the stalling upstream sends before its stall.
const helloFirst = `{"id":"c1","object":"chat.completion.chunk","created":1,"model":"m1","choices":[{"index":0,"delta":{"role":"assistant","content":"hello"},"finish_reason":null}]}`

// keepEvent is what the tests read of a Responses event.
type keepEvent struct {
	Type     string `json:"type"`
	Seq      int    `json:"sequence_number"`
	Delta    string `json:"delta"`
	Response struct {
		ID     string `json:"id"`
		Status string `json:"status"`
		Output []struct {
			Type    string `json:"type"`
			Status  string `json:"status"`
			Content []struct {
				Text string `json:"text"`
			} `json:"content"`
		} `json:"output"`
	} `json:"response"`
}

// checkKeepAlives holds a stream's events, read whole: numbered 0, 1, 2, ... with
// keep-alives among them; the two keep-alives after the "hello" delta carry the same
// response, its message in progress with "hello" so far; the stream ends completed with
// "hello world".
func checkKeepAlives(t *testing.T, events []keepEvent) {
	t.Helper()
	after := 0
	for i, e := range events {
		if e.Seq != i {
			t.Errorf("event %d (%s) numbered %d", i, e.Type, e.Seq)
		}
		if e.Type == "response.output_text.delta" && e.Delta == "hello" {
			after = i + 1
		}
	}
	if after == 0 || len(events) < after+2 {
		t.Fatalf("no keep-alives after the first text: %+v", events)
	}
	for _, e := range events[after : after+2] {
		r := e.Response
		if e.Type != "response.in_progress" || r.ID != events[0].Response.ID || r.Status != "in_progress" || len(r.Output) != 1 ||
			r.Output[0].Type != "message" || r.Output[0].Status != "in_progress" || len(r.Output[0].Content) != 1 || r.Output[0].Content[0].Text != "hello" {
			t.Errorf("keep-alive %+v", e)
		}
	}
	last := events[len(events)-1]
	if last.Type != "response.completed" || len(last.Response.Output) != 1 || last.Response.Output[0].Content[0].Text != "hello world" {
		t.Errorf("last event %+v", last)
	}
}

func TestKeepAlives_ResponsesEvent(t *testing.T) {
	t.Run("sse", func(t *testing.T) {
		u := newStalling(nil)
		u.first = helloFirst
		g := gatewayFor(t, newUpstream(t, u.reply), keepalive(200*time.Millisecond))
		_, sr := openStream(t, g.URL, "/v1/responses", `{"model":"m1","stream":true,"store":false,"input":"hi"}`)
		var events []keepEvent
		released, hello := false, false
		for f := sr.next(t); f != ""; f = sr.next(t) {
			name, data, _ := strings.Cut(f, "\n")
			var e keepEvent
			if err := json.Unmarshal([]byte(strings.TrimPrefix(data, "data: ")), &e); err != nil || name != "event: "+e.Type {
				t.Fatalf("frame %q: %v", f, err)
			}
			events = append(events, e)
			hello = hello || e.Delta == "hello"
			if n := len(events); !released && hello && n >= 2 && events[n-1].Type == "response.in_progress" && events[n-2].Type == "response.in_progress" {
				released = true
				close(u.release)
			}
		}
		checkKeepAlives(t, events)
	})

	t.Run("websocket", func(t *testing.T) {
		u := newStalling(nil)
		u.first = helloFirst
		g := gatewayFor(t, newUpstream(t, u.reply), keepalive(200*time.Millisecond))
		conn, _, err := websocket.DefaultDialer.Dial("ws"+strings.TrimPrefix(g.URL, "http")+"/v1/responses", nil)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		_ = conn.WriteMessage(websocket.TextMessage, []byte(`{"type":"response.create","model":"m1","store":false,"input":"hi"}`))
		var events []keepEvent
		released, hello := false, false
		for {
			_ = conn.SetReadDeadline(time.Now().Add(60 * time.Second))
			_, m, err := conn.ReadMessage()
			if err != nil {
				t.Fatal(err)
			}
			var e keepEvent
			if err := json.Unmarshal(m, &e); err != nil {
				t.Fatal(err)
			}
			events = append(events, e)
			hello = hello || e.Delta == "hello"
			if n := len(events); !released && hello && n >= 2 && events[n-1].Type == "response.in_progress" && events[n-2].Type == "response.in_progress" {
				released = true
				close(u.release)
			}
			if e.Type == "response.completed" || e.Type == "response.failed" || e.Type == "error" {
				break
			}
		}
		checkKeepAlives(t, events)
	})
}

// inProgressCounter is the gateway's client side of a stream: it calls reached once
// the gateway has written n response.in_progress events after the first text delta
// (each event's name is one write of the stream).
type inProgressCounter struct {
	http.ResponseWriter
	mu      sync.Mutex
	delta   bool
	n       int
	want    int
	reached func()
}

func (c *inProgressCounter) Write(p []byte) (int, error) {
	c.mu.Lock()
	switch string(p) {
	case "response.output_text.delta":
		c.delta = true
	case "response.in_progress":
		if c.delta {
			if c.n++; c.n == c.want {
				c.reached()
			}
		}
	}
	c.mu.Unlock()
	return c.ResponseWriter.Write(p)
}

func (c *inProgressCounter) Unwrap() http.ResponseWriter { return c.ResponseWriter }
func (c *inProgressCounter) Flush()                      { c.ResponseWriter.(http.Flusher).Flush() }

// The openai Node SDK's responses.stream() takes a response.in_progress as the
// response's new snapshot: the keep-alives mid-message carry the text so far, so its
// accumulated answer goes on to "hello world" (a snapshot without it would make the SDK
// throw at the next delta).
func TestKeepAlives_Node_ResponsesSnapshot(t *testing.T) {
	node := nodetest.Node(t, nodeDir)
	u := newStalling(nil)
	u.first = helloFirst
	up := newUpstream(t, u.reply)
	be, err := openaicompat.New(openaicompat.Options{Name: "up", BaseURL: up.URL + "/v1"})
	if err != nil {
		t.Fatal(err)
	}
	gw := gateway.New(gateway.Options{Upstreams: []gateway.Upstream{{Name: "up", Models: []string{"m1"}, Backend: be}}, KeepaliveInterval: 200 * time.Millisecond})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gw.ServeHTTP(&inProgressCounter{ResponseWriter: w, want: 2, reached: func() { close(u.release) }}, r)
	}))
	t.Cleanup(srv.Close)
	code, out := runDoors(t, node, srv.URL, "responses-stream")
	if code != 0 || out["output_text"] != "hello world" || out["deltas"] != "hello world" {
		t.Fatalf("exit %d: %v", code, out)
	}
	n := 0
	for _, typ := range toStrings(out["types"]) {
		if typ == "response.in_progress" {
			n++
		}
	}
	if n < 3 {
		t.Errorf("the SDK saw %d response.in_progress events, want the opening one and two keep-alives: %v", n, out["types"])
	}
}
