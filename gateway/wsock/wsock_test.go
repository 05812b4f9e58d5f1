package wsock

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/maskgate/maskgate/gateway/door"
)

// leakCheck fails the test when goroutines started during it outlive it. Call it first:
// its cleanup then runs last, after the servers' and clients'.
func leakCheck(t *testing.T) {
	t.Helper()
	base := runtime.NumGoroutine()
	t.Cleanup(func() {
		deadline := time.Now().Add(5 * time.Second)
		for {
			n := runtime.NumGoroutine()
			if n <= base {
				return
			}
			if time.Now().After(deadline) {
				buf := make([]byte, 1<<20)
				buf = buf[:runtime.Stack(buf, true)]
				t.Errorf("goroutines: %d before, %d after:\n%s", base, n, buf)
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
	})
}

type testServer struct {
	*httptest.Server
	url     string
	results chan error // what each Serve returned
}

func newServer(t *testing.T, reg *Registry, opt Options, h Handler) *testServer {
	t.Helper()
	s := &testServer{results: make(chan error, 64)}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !IsUpgrade(r) {
			http.Error(w, "websocket only", http.StatusBadRequest)
			return
		}
		if reg != nil {
			s.results <- reg.Serve(w, r, opt, h)
		} else {
			s.results <- Serve(w, r, opt, h)
		}
	}))
	t.Cleanup(s.Close)
	s.url = "ws" + strings.TrimPrefix(s.Server.URL, "http") + "/v1/responses"
	return s
}

func (s *testServer) result(t *testing.T) error {
	t.Helper()
	select {
	case err := <-s.results:
		return err
	case <-time.After(10 * time.Second):
		t.Fatal("Serve did not return")
		return nil
	}
}

func dial(t *testing.T, url string, compress bool) (*websocket.Conn, *http.Response) {
	t.Helper()
	d := websocket.Dialer{EnableCompression: compress, HandshakeTimeout: 5 * time.Second}
	h := http.Header{"Openai-Beta": {"responses_websockets=2026-02-06"}, "Authorization": {"Bearer test"}}
	c, resp, err := d.Dial(url, h)
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	return c, resp
}

func send(t *testing.T, c *websocket.Conn, msg string) {
	t.Helper()
	if err := c.WriteMessage(websocket.TextMessage, []byte(msg)); err != nil {
		t.Fatalf("write: %v", err)
	}
}

func readRaw(t *testing.T, c *websocket.Conn) []byte {
	t.Helper()
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	mt, b, err := c.ReadMessage()
	if err != nil {
		t.Fatalf("read: %v", err)
	}
	if mt != websocket.TextMessage {
		t.Fatalf("message type %d, want text", mt)
	}
	return b
}

func readEvent(t *testing.T, c *websocket.Conn) map[string]any {
	t.Helper()
	b := readRaw(t, c)
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("event %q: %v", b, err)
	}
	return m
}

// readClose reads until the connection ends and returns the close frame received.
func readClose(t *testing.T, c *websocket.Conn, within time.Duration) *websocket.CloseError {
	t.Helper()
	c.SetReadDeadline(time.Now().Add(within))
	for {
		_, _, err := c.ReadMessage()
		if err == nil {
			continue
		}
		var ce *websocket.CloseError
		if !errors.As(err, &ce) {
			t.Fatalf("read ended with %v, want a close frame", err)
		}
		return ce
	}
}

// closeClient closes from the client side, as SDKs do, and waits for the echo.
func closeClient(t *testing.T, c *websocket.Conn) {
	t.Helper()
	c.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseNormalClosure, "bye"),
		time.Now().Add(time.Second))
	ce := readClose(t, c, 5*time.Second)
	if ce.Code != websocket.CloseNormalClosure {
		t.Errorf("echoed close code %d, want 1000", ce.Code)
	}
}

func echo(ctx context.Context, msg []byte, s *Session) { s.Send(msg) }

func TestEchoRoundTrip(t *testing.T) {
	leakCheck(t)
	s := newServer(t, nil, Options{}, echo)
	c, _ := dial(t, s.url, true)
	const msg = `{"type":"response.create","model":"m","input":"hi","generate":false}`
	send(t, c, msg)
	if got := string(readRaw(t, c)); got != msg {
		t.Fatalf("got %s, want %s", got, msg)
	}
	closeClient(t, c)
	if err := s.result(t); err != nil {
		t.Fatalf("Serve: %v", err)
	}
}

func TestMessagesAndEventsInOrder(t *testing.T) {
	leakCheck(t)
	const msgs, per = 40, 25
	s := newServer(t, nil, Options{}, func(ctx context.Context, msg []byte, s *Session) {
		var m struct{ N int }
		json.Unmarshal(msg, &m)
		for i := 0; i < per; i++ {
			s.Event("response.output_text.delta", fmt.Appendf(nil, `{"type":"response.output_text.delta","n":%d,"i":%d}`, m.N, i))
		}
	})
	c, _ := dial(t, s.url, false)
	for n := 0; n < msgs; n++ {
		send(t, c, fmt.Sprintf(`{"type":"response.create","n":%d}`, n))
	}
	for n := 0; n < msgs; n++ {
		for i := 0; i < per; i++ {
			e := readEvent(t, c)
			if e["n"] != float64(n) || e["i"] != float64(i) {
				t.Fatalf("got n=%v i=%v, want n=%d i=%d", e["n"], e["i"], n, i)
			}
		}
	}
	closeClient(t, c)
	if err := s.result(t); err != nil {
		t.Fatalf("Serve: %v", err)
	}
}

func TestBadMessagesGetErrorEventsAndKeepTheConnection(t *testing.T) {
	leakCheck(t)
	s := newServer(t, nil, Options{}, echo)
	c, _ := dial(t, s.url, true)
	cases := []struct {
		send  func()
		code  string
		param any
	}{
		{func() { send(t, c, `not json`) }, "invalid_json", nil},
		{func() { send(t, c, `[1,2]`) }, "invalid_json", nil},
		{func() { send(t, c, `{"type":"response.create"`) }, "invalid_json", nil},
		{func() { c.WriteMessage(websocket.BinaryMessage, []byte{1, 2, 3}) }, "unsupported_message", nil},
		{func() { send(t, c, `{"type":"response.create","stream_id":5}`) }, "invalid_type", "stream_id"},
	}
	for _, tc := range cases {
		tc.send()
		e := readEvent(t, c)
		inner, _ := e["error"].(map[string]any)
		if e["type"] != "error" || e["status"] != float64(400) || inner == nil ||
			inner["type"] != "invalid_request_error" || inner["code"] != tc.code || inner["param"] != tc.param ||
			inner["message"] == "" {
			t.Fatalf("error event %v, want code %s", e, tc.code)
		}
		if _, has := inner["param"]; !has {
			t.Fatalf("error event %v lacks param", e)
		}
	}
	send(t, c, `{"type":"response.create"}`)
	if got := string(readRaw(t, c)); got != `{"type":"response.create"}` {
		t.Fatalf("after errors: got %s", got)
	}
	closeClient(t, c)
	if err := s.result(t); err != nil {
		t.Fatalf("Serve: %v", err)
	}
}

func TestOversizeMessageCloses1009(t *testing.T) {
	for _, compress := range []bool{false, true} {
		t.Run(fmt.Sprintf("compress=%v", compress), func(t *testing.T) {
			leakCheck(t)
			var ran atomic.Int32
			s := newServer(t, nil, Options{MaxMessageBytes: 1024}, func(ctx context.Context, msg []byte, s *Session) {
				ran.Add(1)
				s.Send(msg)
			})
			c, _ := dial(t, s.url, compress)
			send(t, c, `{"ok":1}`) // at the limit's side: fine
			readRaw(t, c)
			// compressed, this is a few hundred bytes on the wire: the limit counts the
			// message, not the frame
			send(t, c, `{"x":"`+strings.Repeat("a", 64<<10)+`"}`)
			ce := readClose(t, c, 5*time.Second)
			if ce.Code != websocket.CloseMessageTooBig || !strings.Contains(ce.Text, "message too big") {
				t.Fatalf("close %d %q, want 1009 with a reason", ce.Code, ce.Text)
			}
			var se *CloseError
			if err := s.result(t); !errors.As(err, &se) || se.Code != websocket.CloseMessageTooBig {
				t.Fatalf("Serve: %v, want a 1009 CloseError", err)
			}
			if ran.Load() != 1 {
				t.Fatalf("handler ran %d times, want 1", ran.Load())
			}
		})
	}
}

func TestSlowReaderIsCutAndMemoryStaysBounded(t *testing.T) {
	leakCheck(t)
	const events, size = 100_000, 1 << 10
	var before runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)

	type outcome struct {
		sent int
		err  error
		peak uint64
	}
	done := make(chan outcome, 1)
	opt := Options{WriteTimeout: 3 * time.Second, SlowReaderWait: 300 * time.Millisecond}
	s := newServer(t, nil, opt, func(ctx context.Context, msg []byte, s *Session) {
		ev := []byte(`{"type":"response.output_text.delta","delta":"` + strings.Repeat("x", size-50) + `"}`)
		var o outcome
		var ms runtime.MemStats
		for ; o.sent < events; o.sent++ {
			if o.sent%2000 == 0 {
				runtime.ReadMemStats(&ms)
				o.peak = max(o.peak, ms.HeapInuse)
			}
			if o.err = s.Send(ev); o.err != nil {
				break
			}
		}
		done <- o
	})
	c, _ := dial(t, s.url, false)
	send(t, c, `{"type":"response.create"}`)
	var o outcome
	select {
	case o = <-done:
	case <-time.After(60 * time.Second):
		t.Fatal("handler did not finish")
	}
	var after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&after)
	const bound = 64 << 20 // the 100 MiB offered would not fit
	grown := int64(after.HeapInuse) - int64(before.HeapInuse)
	peak := int64(o.peak) - int64(before.HeapInuse)
	t.Logf("%d of %d events accepted; heap in use grew %d KiB (peak while sending %d KiB)", o.sent, events, grown>>10, peak>>10)
	if grown > bound || peak > bound {
		t.Fatalf("heap in use grew %d bytes (peak %d), bound %d", grown, peak, bound)
	}
	if !errors.Is(o.err, ErrSlowReader) {
		t.Fatalf("Send: %v after %d events, want ErrSlowReader", o.err, o.sent)
	}
	// The client reads at last: what was written, then the reason.
	ce := readClose(t, c, 10*time.Second)
	if ce.Code != websocket.ClosePolicyViolation || ce.Text != "slow reader" {
		t.Fatalf("close %d %q, want 1008 \"slow reader\"", ce.Code, ce.Text)
	}
	if err := s.result(t); !errors.Is(err, ErrSlowReader) {
		t.Fatalf("Serve: %v, want ErrSlowReader", err)
	}
}

func TestPongsKeepAliveButIdleCloses(t *testing.T) {
	leakCheck(t)
	// A pong must come within 2×PingInterval (1 s), far more than a loaded machine's
	// scheduling delay; idle is eight intervals.
	const ping, idle = 500 * time.Millisecond, 4 * time.Second
	s := newServer(t, nil, Options{PingInterval: ping, IdleTimeout: idle}, echo)
	c, _ := dial(t, s.url, false)
	var pings atomic.Int32
	c.SetPingHandler(func(data string) error {
		pings.Add(1)
		return c.WriteControl(websocket.PongMessage, []byte(data), time.Now().Add(time.Second))
	})
	start := time.Now()
	ce := readClose(t, c, 30*time.Second) // reading answers the pings
	took := time.Since(start)
	if ce.Code != websocket.CloseNormalClosure || ce.Text != "idle timeout" {
		t.Fatalf("close %d %q, want 1000 \"idle timeout\"", ce.Code, ce.Text)
	}
	// idle is four times the 1 s pong wait: the pongs kept the client, idleness closed it
	if took < idle-ping || pings.Load() < 5 {
		t.Fatalf("closed after %v with %d pings", took, pings.Load())
	}
	if err := s.result(t); err != nil {
		t.Fatalf("Serve: %v", err)
	}
}

func TestClientThatNeverAnswersPingsIsDropped(t *testing.T) {
	leakCheck(t)
	s := newServer(t, nil, Options{PingInterval: 40 * time.Millisecond}, echo)
	dial(t, s.url, false) // never reads, so never answers
	start := time.Now()
	err := s.result(t)
	var se *CloseError
	if !errors.As(err, &se) || se.Code != websocket.CloseAbnormalClosure || !strings.Contains(err.Error(), "no pong") {
		t.Fatalf("Serve: %v, want a ping timeout", err)
	}
	if took := time.Since(start); took < 70*time.Millisecond || took > 3*time.Second {
		t.Fatalf("dropped after %v, want about 80ms", took)
	}
}

func TestNotIdleWhileAResponseRuns(t *testing.T) {
	leakCheck(t)
	// The response runs 2.5× the idle limit; pongs have 2×PingInterval (1 s) to come.
	const ping, idle, run = 500 * time.Millisecond, 2 * time.Second, 5 * time.Second
	s := newServer(t, nil, Options{PingInterval: ping, IdleTimeout: idle},
		func(ctx context.Context, msg []byte, s *Session) {
			select {
			case <-time.After(run):
			case <-ctx.Done():
				return
			}
			s.Send([]byte(`{"type":"response.completed"}`))
		})
	c, _ := dial(t, s.url, false)
	send(t, c, `{"type":"response.create"}`)
	if e := readEvent(t, c); e["type"] != "response.completed" {
		t.Fatalf("got %v", e)
	}
	start := time.Now()
	ce := readClose(t, c, 30*time.Second)
	if ce.Code != websocket.CloseNormalClosure || ce.Text != "idle timeout" || time.Since(start) < idle-ping {
		t.Fatalf("close %d %q after %v", ce.Code, ce.Text, time.Since(start))
	}
	if err := s.result(t); err != nil {
		t.Fatalf("Serve: %v", err)
	}
}

func TestClientCloseCancelsHandlers(t *testing.T) {
	for _, how := range []string{"close frame", "tcp drop"} {
		t.Run(how, func(t *testing.T) {
			leakCheck(t)
			started := make(chan struct{})
			var observed atomic.Int64 // ns from the close to ctx.Done
			var returned atomic.Bool
			var closedAt atomic.Int64
			s := newServer(t, nil, Options{}, func(ctx context.Context, msg []byte, s *Session) {
				close(started)
				<-ctx.Done()
				observed.Store(time.Now().UnixNano() - closedAt.Load())
				time.Sleep(50 * time.Millisecond) // Serve must wait for this
				returned.Store(true)
			})
			c, _ := dial(t, s.url, false)
			send(t, c, `{"type":"response.create"}`)
			<-started
			closedAt.Store(time.Now().UnixNano())
			if how == "close frame" {
				closeClient(t, c)
			} else {
				c.NetConn().Close()
			}
			err := s.result(t)
			if !returned.Load() {
				t.Fatal("Serve returned before its handler")
			}
			if d := time.Duration(observed.Load()); d > time.Second {
				t.Fatalf("handler saw the close after %v", d)
			}
			if how == "close frame" && err != nil {
				t.Fatalf("Serve: %v", err)
			}
			if how == "tcp drop" && err == nil {
				t.Fatal("Serve: nil, want the lost connection")
			}
		})
	}
}

func TestCompressionNegotiated(t *testing.T) {
	leakCheck(t)
	big := `{"type":"response.output_text.done","text":"` + strings.Repeat("compress me ", 1000) + `"}`
	s := newServer(t, nil, Options{}, echo)
	c, resp := dial(t, s.url, true)
	if ext := resp.Header.Get("Sec-Websocket-Extensions"); !strings.Contains(ext, "permessage-deflate") {
		t.Fatalf("extensions %q, want permessage-deflate", ext)
	}
	send(t, c, big)
	if got := string(readRaw(t, c)); got != big {
		t.Fatal("compressed round trip changed the message")
	}
	send(t, c, `{"small":true}`)
	if got := string(readRaw(t, c)); got != `{"small":true}` {
		t.Fatalf("got %s", got)
	}
	closeClient(t, c)
	if err := s.result(t); err != nil {
		t.Fatalf("Serve: %v", err)
	}

	s2 := newServer(t, nil, Options{DisableCompression: true}, echo)
	c2, resp2 := dial(t, s2.url, true)
	if ext := resp2.Header.Get("Sec-Websocket-Extensions"); ext != "" {
		t.Fatalf("extensions %q with compression disabled", ext)
	}
	closeClient(t, c2)
	s2.result(t)
}

func TestRegistryCloseAllAndShutdown(t *testing.T) {
	leakCheck(t)
	var reg Registry
	var cancelled atomic.Int32
	started := make(chan struct{}, 3)
	s := newServer(t, &reg, Options{}, func(ctx context.Context, msg []byte, s *Session) {
		started <- struct{}{}
		<-ctx.Done()
		cancelled.Add(1)
	})
	var cs []*websocket.Conn
	for range 3 {
		c, _ := dial(t, s.url, false)
		send(t, c, `{"type":"response.create"}`)
		cs = append(cs, c)
	}
	for range 3 {
		<-started
	}
	if n := reg.Len(); n != 3 {
		t.Fatalf("Len %d, want 3", n)
	}
	reg.CloseAll("")
	for _, c := range cs {
		ce := readClose(t, c, 5*time.Second)
		if ce.Code != websocket.CloseGoingAway || ce.Text != "server shutting down" {
			t.Fatalf("close %d %q, want 1001 \"server shutting down\"", ce.Code, ce.Text)
		}
	}
	for range 3 {
		if err := s.result(t); err != nil {
			t.Fatalf("Serve: %v", err)
		}
	}
	if cancelled.Load() != 3 || reg.Len() != 0 {
		t.Fatalf("%d handlers cancelled, %d connections left", cancelled.Load(), reg.Len())
	}

	// Shutdown: one open connection closed and waited for, new ones refused.
	c, _ := dial(t, s.url, false)
	for reg.Len() == 0 {
		time.Sleep(time.Millisecond)
	}
	go func() { readClose(t, c, 5*time.Second) }()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := reg.Shutdown(ctx); err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	if err := s.result(t); err != nil {
		t.Fatalf("Serve: %v", err)
	}
	_, resp, err := websocket.DefaultDialer.Dial(s.url, nil)
	if err == nil || resp == nil || resp.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("dial after Shutdown: %v, %v", err, resp)
	}
	if err := s.result(t); !errors.Is(err, ErrShuttingDown) {
		t.Fatalf("Serve after Shutdown: %v", err)
	}
}

func TestStreamLanes(t *testing.T) {
	leakCheck(t)
	release := map[string]chan struct{}{"a1": make(chan struct{}), "b1": make(chan struct{})}
	var mu sync.Mutex
	var order []string
	s := newServer(t, nil, Options{}, func(ctx context.Context, msg []byte, s *Session) {
		var m struct{ ID string }
		json.Unmarshal(msg, &m)
		mu.Lock()
		order = append(order, "start "+m.ID)
		mu.Unlock()
		s.Send(fmt.Appendf(nil, `{"type":"response.created","id":%q}`, m.ID))
		if ch := release[m.ID]; ch != nil {
			select {
			case <-ch:
			case <-ctx.Done():
			}
		}
		s.Send(fmt.Appendf(nil, ` { "type":"response.completed","id":%q}`, m.ID))
	})
	c, _ := dial(t, s.url, false)
	send(t, c, `{"type":"response.create","stream_id":"a","id":"a1"}`)
	send(t, c, `{"type":"response.create","stream_id":"a","id":"a2"}`) // waits for a1
	send(t, c, `{"type":"response.create","stream_id":"b","id":"b1"}`) // runs beside a1
	send(t, c, `{"type":"response.create","id":"u1"}`)                 // the unnamed lane too

	got := map[string][]string{}
	want := func(n int) {
		for range n {
			e := readEvent(t, c)
			id, _ := e["id"].(string)
			lane, _ := e["stream_id"].(string)
			if lane != strings.TrimRight(id, "0123456789") && !(lane == "" && id[0] == 'u') {
				t.Fatalf("event %v: stream_id %q for %s", e, lane, id)
			}
			got[id] = append(got[id], e["type"].(string))
		}
	}
	want(4) // created a1, b1, u1; completed u1
	if len(got["a1"]) != 1 || len(got["b1"]) != 1 || len(got["u1"]) != 2 || got["a2"] != nil {
		t.Fatalf("before release: %v", got)
	}
	close(release["b1"])
	want(1) // completed b1, while a1 still runs
	if len(got["b1"]) != 2 {
		t.Fatalf("b1 did not finish beside a1: %v", got)
	}
	close(release["a1"])
	want(3) // completed a1, created and completed a2
	if len(got["a2"]) != 2 {
		t.Fatalf("a2: %v", got)
	}
	mu.Lock()
	ia1, ia2 := -1, -1
	for i, o := range order {
		switch o {
		case "start a1":
			ia1 = i
		case "start a2":
			ia2 = i
		}
	}
	mu.Unlock()
	if ia1 < 0 || ia2 < ia1 {
		t.Fatalf("lane a out of order: %v", order)
	}
	closeClient(t, c)
	if err := s.result(t); err != nil {
		t.Fatalf("Serve: %v", err)
	}
}

func TestMaxStreamsAndPendingBounds(t *testing.T) {
	leakCheck(t)
	release := make(chan struct{})
	var running, peak atomic.Int32
	s := newServer(t, nil, Options{MaxStreams: 2, MaxPending: 3}, func(ctx context.Context, msg []byte, s *Session) {
		n := running.Add(1)
		for {
			p := peak.Load()
			if n <= p || peak.CompareAndSwap(p, n) {
				break
			}
		}
		select {
		case <-release:
		case <-ctx.Done():
		}
		running.Add(-1)
		s.Send([]byte(`{"type":"response.completed"}`))
	})
	c, _ := dial(t, s.url, false)
	for i := range 5 { // 2 run, 3 wait
		send(t, c, fmt.Sprintf(`{"type":"response.create","stream_id":"s%d"}`, i))
	}
	send(t, c, `{"type":"response.create","stream_id":"s9"}`) // one too many
	e := readEvent(t, c)
	inner, _ := e["error"].(map[string]any)
	if e["type"] != "error" || e["status"] != float64(429) || inner["code"] != "too_many_pending_requests" || e["stream_id"] != "s9" {
		t.Fatalf("got %v, want a too_many_pending_requests error on lane s9", e)
	}
	close(release)
	for range 5 {
		if e := readEvent(t, c); e["type"] != "response.completed" {
			t.Fatalf("got %v", e)
		}
	}
	if p := peak.Load(); p != 2 {
		t.Fatalf("%d handlers ran at once, want 2", p)
	}
	closeClient(t, c)
	if err := s.result(t); err != nil {
		t.Fatalf("Serve: %v", err)
	}
}

func TestHandlerPanicCloses1011(t *testing.T) {
	leakCheck(t)
	s := newServer(t, nil, Options{}, func(ctx context.Context, msg []byte, s *Session) { panic("boom") })
	c, _ := dial(t, s.url, false)
	send(t, c, `{}`)
	if ce := readClose(t, c, 5*time.Second); ce.Code != websocket.CloseInternalServerErr {
		t.Fatalf("close %d %q, want 1011", ce.Code, ce.Text)
	}
	if err := s.result(t); err == nil || !strings.Contains(err.Error(), "boom") {
		t.Fatalf("Serve: %v", err)
	}
}

func TestOrigin(t *testing.T) {
	leakCheck(t)
	s := newServer(t, nil, Options{}, echo)
	_, resp, err := websocket.DefaultDialer.Dial(s.url, http.Header{"Origin": {"https://evil.example"}})
	if err == nil || resp == nil || resp.StatusCode != http.StatusForbidden {
		t.Fatalf("foreign origin: %v %v", err, resp)
	}
	if err := s.result(t); err == nil {
		t.Fatal("Serve accepted a foreign origin")
	}
	host := strings.TrimPrefix(s.Server.URL, "http://")
	c, _, err := websocket.DefaultDialer.Dial(s.url, http.Header{"Origin": {"http://" + host}})
	if err != nil {
		t.Fatalf("same origin: %v", err)
	}
	defer c.Close()
	closeClient(t, c)
	s.result(t)
}

func TestSessionStateAndSendAfterClose(t *testing.T) {
	leakCheck(t)
	sessions := make(chan *Session, 1)
	s := newServer(t, nil, Options{}, func(ctx context.Context, msg []byte, s *Session) {
		n, _ := s.Load().(int)
		s.Store(n + 1)
		s.Send(fmt.Appendf(nil, `{"n":%d}`, n+1))
		select {
		case sessions <- s:
		default:
		}
	})
	c, _ := dial(t, s.url, false)
	for want := 1; want <= 3; want++ {
		send(t, c, `{}`)
		if e := readEvent(t, c); e["n"] != float64(want) {
			t.Fatalf("got %v, want n=%d", e, want)
		}
	}
	closeClient(t, c)
	s.result(t)
	sess := <-sessions
	if err := sess.Send([]byte(`{}`)); !errors.Is(err, ErrClosed) {
		t.Fatalf("Send after close: %v", err)
	}
}

func TestErrorEventAndAppendEvent(t *testing.T) {
	got := string(ErrorEvent(door.Error{Status: 400, Type: "invalid_request_error", Code: "previous_response_not_found",
		Param: "previous_response_id", Message: "no such response"}))
	want := `{"type":"error","status":400,"error":{"type":"invalid_request_error","code":"previous_response_not_found","message":"no such response","param":"previous_response_id"}}`
	if got != want {
		t.Fatalf("ErrorEvent:\n got %s\nwant %s", got, want)
	}
	if got := string(ErrorEvent(door.Error{Message: "x"})); got != `{"type":"error","error":{"type":"server_error","code":null,"message":"x","param":null}}` {
		t.Fatalf("ErrorEvent empty: %s", got)
	}
	key := []byte(`"stream_id":"a"`)
	for in, want := range map[string]string{
		`{"type":"x"}`:   `{"stream_id":"a","type":"x"}`,
		` { "type":"x"}`: ` {"stream_id":"a", "type":"x"}`,
		`{}`:             `{"stream_id":"a"}`,
		`{ }`:            `{"stream_id":"a" }`,
		`[1]`:            `[1]`,
	} {
		out := appendEvent(nil, []byte(in), key)
		if string(out) != want {
			t.Errorf("appendEvent(%s) = %s, want %s", in, out, want)
		}
		if in != `[1]` && !json.Valid(out) {
			t.Errorf("appendEvent(%s) = %s: invalid JSON", in, out)
		}
	}
}

func TestIsUpgrade(t *testing.T) {
	r := httptest.NewRequest(http.MethodGet, "/v1/responses", nil)
	if IsUpgrade(r) {
		t.Fatal("plain GET is an upgrade")
	}
	r.Header.Set("Connection", "keep-alive, Upgrade")
	r.Header.Set("Upgrade", "websocket")
	if !IsUpgrade(r) {
		t.Fatal("upgrade request not recognized")
	}
	r.Method = http.MethodPost
	if IsUpgrade(r) {
		t.Fatal("POST is an upgrade")
	}
}
