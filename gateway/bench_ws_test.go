package gateway_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/maskgate/maskgate/backends/openaicompat"
	"github.com/maskgate/maskgate/gateway"
)

// BenchmarkResponsesSession runs one 50-turn Responses session per iteration, on two
// paths to the same canned upstream:
//
//	path=http       POST /v1/responses per turn, store false, the whole history as input
//	path=websocket  one socket, each turn's response.create carrying only its new
//	                message and previous_response_id (the socket keeps the rest)
//
// It reports the time per turn (client to client, the gateway's translation of the
// growing history included), the bytes the client sent per turn, the bytes the gateway's
// listener received per turn (headers and framing included), and allocations. The
// upstream sees the same conversation either way.
func BenchmarkResponsesSession(b *testing.B) {
	const turns = 50
	env := newSessionEnv(b)
	for _, path := range []struct {
		name string
		run  func(url string, turns int) (int64, error)
	}{{"http", sessionHTTP}, {"websocket", sessionSocket}} {
		b.Run("path="+path.name, func(b *testing.B) {
			var sent int64
			received := env.received.Load()
			b.ReportAllocs()
			for b.Loop() {
				n, err := path.run(env.URL, turns)
				if err != nil {
					b.Fatal(err)
				}
				sent += n
			}
			b.ReportMetric(float64(sent)/float64(b.N*turns), "sent-B/turn")
			b.ReportMetric(float64(env.received.Load()-received)/float64(b.N*turns), "recv-B/turn")
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*turns), "ns/turn")
		})
	}
}

// The README's figure: over the socket the gateway receives a small fraction of the
// bytes of a 50-turn session, counted where they arrive (its listener's connections,
// HTTP headers and WebSocket framing included), and the engine gets the same
// conversation.
func TestResponsesSession_SocketSendsOnlyTheNewTurn(t *testing.T) {
	const turns = 50
	env := newSessionEnv(t)
	start := env.received.Load()
	if _, err := sessionHTTP(env.URL, turns); err != nil {
		t.Fatal(err)
	}
	overHTTP := env.received.Load() - start
	httpLast := env.last()
	start = env.received.Load()
	if _, err := sessionSocket(env.URL, turns); err != nil {
		t.Fatal(err)
	}
	overSocket := env.received.Load() - start
	if socketLast := env.last(); !bytes.Equal(httpLast, socketLast) {
		t.Errorf("the engine's last request differs:\nhttp   %s\nsocket %s", httpLast, socketLast)
	}
	var msgs []json.RawMessage
	if err := json.Unmarshal(httpLast, &msgs); err != nil || len(msgs) != 2*turns-1 {
		t.Errorf("the last turn carried %d messages, want %d: %v", len(msgs), 2*turns-1, err)
	}
	// The history grows by one exchange a turn, so HTTP sends ~turns/2 times more.
	if overSocket*10 > overHTTP {
		t.Errorf("the gateway received %d bytes over the socket, %d over HTTP: want at least 10× fewer", overSocket, overHTTP)
	}
	if overSocket < 50*150 { // each turn's question is 150 bytes or more
		t.Errorf("the gateway received %d bytes over the socket for 50 turns of 150-byte questions: the count misses bytes", overSocket)
	}
	t.Logf("50 turns: the gateway received %d bytes over HTTP, %d over the socket (%.1f×; per turn %d and %d)",
		overHTTP, overSocket, float64(overHTTP)/float64(overSocket), overHTTP/turns, overSocket/turns)
}

const sessionUser = "Please look at the build log and tell me what failed next. Please look at the build log and tell me what failed next. "

// sessionHTTP runs a session over POST /v1/responses, the whole history each turn, and
// returns the bytes sent.
func sessionHTTP(url string, turns int) (int64, error) {
	hc := &http.Client{Transport: benchTransport()}
	defer hc.CloseIdleConnections()
	var sent int64
	var history []json.RawMessage
	for turn := range turns {
		user, _ := json.Marshal(map[string]any{"role": "user", "content": fmt.Sprintf("%s(turn %d)", sessionUser, turn)})
		history = append(history, user)
		body, _ := json.Marshal(map[string]any{"model": "m1", "stream": true, "store": false, "input": history})
		sent += int64(len(body))
		resp, err := hc.Post(url+"/v1/responses", "application/json", bytes.NewReader(body))
		if err != nil {
			return 0, err
		}
		out, err := completedOutput(resp.Body)
		resp.Body.Close()
		if err != nil {
			return 0, err
		}
		history = append(history, out...)
	}
	return sent, nil
}

// sessionSocket runs a session over one WebSocket, each turn only its new message.
func sessionSocket(url string, turns int) (int64, error) {
	conn, _, err := websocket.DefaultDialer.Dial("ws"+strings.TrimPrefix(url, "http")+"/v1/responses", nil)
	if err != nil {
		return 0, err
	}
	defer conn.Close()
	var sent int64
	previous := ""
	for turn := range turns {
		ev := map[string]any{"type": "response.create", "model": "m1", "store": false,
			"input": []any{map[string]any{"role": "user", "content": fmt.Sprintf("%s(turn %d)", sessionUser, turn)}}}
		if previous != "" {
			ev["previous_response_id"] = previous
		}
		msg, _ := json.Marshal(ev)
		sent += int64(len(msg))
		if err := conn.WriteMessage(websocket.TextMessage, msg); err != nil {
			return 0, err
		}
		if previous, err = socketCompleted(conn); err != nil {
			return 0, err
		}
	}
	return sent, nil
}

// sessionEnv is a gateway in front of an upstream that streams one short answer; last
// is the messages of the upstream's latest request.
type sessionEnv struct {
	*httptest.Server
	received atomic.Int64 // bytes read from the gateway's accepted connections
	mu       sync.Mutex
	messages []byte
}

// countingListener counts the bytes read from the connections it accepts.
type countingListener struct {
	net.Listener
	n *atomic.Int64
}

func (l countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return countingConn{c, l.n}, nil
}

type countingConn struct {
	net.Conn
	n *atomic.Int64
}

func (c countingConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	c.n.Add(int64(n))
	return n, err
}

func (e *sessionEnv) last() []byte {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.messages
}

func newSessionEnv(b testing.TB) *sessionEnv {
	b.Helper()
	env := &sessionEnv{}
	const answer = "The linker failed: undefined reference to main."
	chunks := []string{
		`{"id":"c","object":"chat.completion.chunk","created":1,"model":"m1","choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]}`,
		`{"id":"c","object":"chat.completion.chunk","created":1,"model":"m1","choices":[{"index":0,"delta":{"content":"` + answer + `"},"finish_reason":null}]}`,
		`{"id":"c","object":"chat.completion.chunk","created":1,"model":"m1","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`,
		`{"id":"c","object":"chat.completion.chunk","created":1,"model":"m1","choices":[],"usage":{"prompt_tokens":100,"completion_tokens":10,"total_tokens":110}}`,
	}
	var sse bytes.Buffer
	for _, c := range chunks {
		sse.WriteString("data: " + c + "\n\n")
	}
	sse.WriteString("data: [DONE]\n\n")
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var req struct {
			Messages json.RawMessage `json:"messages"`
		}
		_ = json.Unmarshal(body, &req)
		env.mu.Lock()
		env.messages = req.Messages
		env.mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = w.Write(sse.Bytes())
	}))
	b.Cleanup(up.Close)
	be, err := openaicompat.New(openaicompat.Options{Name: "up", BaseURL: up.URL + "/v1"})
	if err != nil {
		b.Fatal(err)
	}
	env.Server = httptest.NewUnstartedServer(gateway.New(gateway.Options{Upstreams: []gateway.Upstream{{Name: "up", Models: []string{"m1"}, Backend: be}}}))
	env.Listener = countingListener{env.Listener, &env.received}
	env.Start()
	b.Cleanup(env.Close)
	return env
}

// completedOutput reads an SSE stream of response events to response.completed and
// returns its output items.
func completedOutput(r io.Reader) ([]json.RawMessage, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
	for sc.Scan() {
		line, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok || !strings.Contains(line, `"response.completed"`) {
			continue
		}
		var ev struct {
			Response struct {
				Output []json.RawMessage `json:"output"`
			} `json:"response"`
		}
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			return nil, err
		}
		return ev.Response.Output, nil
	}
	return nil, fmt.Errorf("stream ended without response.completed: %v", sc.Err())
}

// socketCompleted reads events to response.completed and returns the response id.
func socketCompleted(conn *websocket.Conn) (string, error) {
	_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	for {
		_, msg, err := conn.ReadMessage()
		if err != nil {
			return "", err
		}
		var ev struct {
			Type     string `json:"type"`
			Response struct {
				ID string `json:"id"`
			} `json:"response"`
		}
		if err := json.Unmarshal(msg, &ev); err != nil {
			return "", err
		}
		switch ev.Type {
		case "response.completed":
			return ev.Response.ID, nil
		case "error", "response.failed":
			return "", fmt.Errorf("%s", msg)
		}
	}
}
