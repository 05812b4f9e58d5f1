package gateway_test

// Issue 28: clients that stop reading cannot hold the gateway or the engine. Every
// write to a client has server.write_timeout; these tests hold that over real TCP with
// clients whose receive buffers are small and never read.

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/maskgate/maskgate/backends/openaicompat"
	"github.com/maskgate/maskgate/gateway"
)

// floodUpstream streams chunks of 1 KiB of text as fast as they are read to requests
// whose body says "flood", and a short stream (or a large whole answer, for "bigwhole")
// to the rest. It counts flood requests under way and those whose context ended (the
// gateway cancelled them).
type floodUpstream struct {
	active, cancelled, started atomic.Int64
}

var floodChunk = []byte(`data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"m1","choices":[{"index":0,"delta":{"content":"` +
	strings.Repeat("x", 1024) + `"},"finish_reason":null}]}` + "\n\n")

func (f *floodUpstream) reply(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	switch {
	case bytes.Contains(body, []byte("bigwhole")):
		// 4 MiB of content in one whole answer.
		replyJSON(http.StatusOK, `{"id":"c1","object":"chat.completion","created":1,"model":"m1","choices":[{"index":0,"message":{"role":"assistant","content":"`+
			strings.Repeat("y", 4<<20)+`"},"finish_reason":"stop"}],"usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}}`)(w, r)
		return
	case !bytes.Contains(body, []byte("flood")):
		if bytes.Contains(body, []byte(`"stream":true`)) {
			replySSE([]string{
				`{"id":"c1","object":"chat.completion.chunk","created":1,"model":"m1","choices":[{"index":0,"delta":{"role":"assistant","content":"hel"},"finish_reason":null}]}`,
				`{"id":"c1","object":"chat.completion.chunk","created":1,"model":"m1","choices":[{"index":0,"delta":{"content":"lo"},"finish_reason":"stop"}]}`,
				`{"id":"c1","object":"chat.completion.chunk","created":1,"model":"m1","choices":[],"usage":{"prompt_tokens":1,"completion_tokens":2,"total_tokens":3}}`,
			}, true)(w, r)
			return
		}
		replyJSON(http.StatusOK, completionJSON)(w, r)
		return
	}
	f.started.Add(1)
	f.active.Add(1)
	defer f.active.Add(-1)
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	for r.Context().Err() == nil {
		if _, err := w.Write(floodChunk); err != nil {
			break
		}
		if rc.Flush() != nil {
			break
		}
	}
	// A write failed or the request ended: either way the gateway dropped it. The
	// context ends once net/http sees the connection closed.
	select {
	case <-r.Context().Done():
		f.cancelled.Add(1)
	case <-time.After(30 * time.Second):
	}
}

// dialSmall connects with a 4 KiB receive buffer, so a client that does not read stops
// taking bytes soon.
func dialSmall(addr string) (net.Conn, error) {
	d := net.Dialer{Control: func(_, _ string, c syscall.RawConn) error {
		var serr error
		err := c.Control(func(fd uintptr) {
			serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4096)
		})
		if err != nil {
			return err
		}
		return serr
	}}
	return d.Dial("tcp", addr)
}

// sendRaw writes one POST on c and reads nothing.
func sendRaw(c net.Conn, host, path, body string, extra ...string) error {
	req := "POST " + path + " HTTP/1.1\r\nHost: " + host + "\r\nContent-Type: application/json\r\n"
	for _, h := range extra {
		req += h + "\r\n"
	}
	req += fmt.Sprintf("Content-Length: %d\r\n\r\n%s", len(body), body)
	_, err := io.WriteString(c, req)
	return err
}

// readsToEnd drains c and reports whether the gateway closed it (EOF or reset) rather
// than leaving it open past wait.
func closedByPeer(c net.Conn, wait time.Duration) error {
	_ = c.SetReadDeadline(time.Now().Add(wait))
	_, err := io.Copy(io.Discard, c)
	if ne, ok := err.(net.Error); ok && ne.Timeout() {
		return fmt.Errorf("still open after %v", wait)
	}
	return nil // EOF (io.Copy's nil) or a reset: closed
}

// smallBufferGateway is gatewayFor on a listener whose connections have 16 KiB send
// buffers. On loopback Linux sizes a connection's send buffer from its 64 KiB MSS (a few
// MB), which the gateway would fill, parsing every chunk under -race, for a long while
// before a write blocks; 16 KiB is what a client far away holds the gateway to sooner.
func smallBufferGateway(t *testing.T, up *upstream, o gateway.Options) *testGateway {
	t.Helper()
	be, err := openaicompat.New(openaicompat.Options{Name: "up", BaseURL: up.URL + "/v1", ReportsCache: true})
	if err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	o.Registry = reg
	o.Upstreams = []gateway.Upstream{{Name: "up", Kind: "vllm", Models: []string{"m1", "*"}, Backend: be}}
	return &testGateway{Server: smallBufferServer(t, gateway.New(o)), reg: reg}
}

// smallBufferServer serves h on loopback with 16 KiB send buffers (see
// smallBufferGateway).
func smallBufferServer(t *testing.T, h http.Handler) *httptest.Server {
	t.Helper()
	lc := net.ListenConfig{Control: func(_, _ string, c syscall.RawConn) error {
		var serr error
		err := c.Control(func(fd uintptr) {
			serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_SNDBUF, 16<<10)
		})
		if err != nil {
			return err
		}
		return serr
	}}
	ln, err := lc.Listen(t.Context(), "tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(h)
	srv.Listener.Close()
	srv.Listener = ln
	srv.Start()
	t.Cleanup(srv.Close)
	return srv
}

// slowReaderDoors are the three doors' streamed bodies that make the upstream flood.
var slowReaderDoors = []struct{ path, body string }{
	{"/v1/chat/completions", `{"model":"m1","stream":true,"messages":[{"role":"user","content":"flood"}]}`},
	{"/v1/responses", `{"model":"m1","stream":true,"store":false,"input":"flood"}`},
	{"/v1/messages", `{"model":"m1","stream":true,"max_tokens":100000,"messages":[{"role":"user","content":"flood"}]}`},
}

// TestSlowReaders_CutWithinWriteTimeout: 60 clients (20 per door) start a stream from an
// upstream that sends as fast as it is read, then never read. Each is cut within
// write_timeout of its last byte taken: counted, its upstream request cancelled, its
// connection closed, the goroutines back to their baseline; a client that reads is
// served throughout.
func TestSlowReaders_CutWithinWriteTimeout(t *testing.T) {
	const (
		n            = 60
		writeTimeout = 2 * time.Second
		settle       = 30 * time.Second // generous: a loaded 2-core machine under -race
	)
	f := &floodUpstream{}
	up := newUpstream(t, f.reply)
	var logs syncBuffer
	g := smallBufferGateway(t, up, gateway.Options{WriteTimeout: writeTimeout, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	host := strings.TrimPrefix(g.URL, "http://")

	// The reading client: one request first (its connections are part of the baseline).
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr, Timeout: settle}
	read := func() error {
		resp, err := client.Post(g.URL+"/v1/chat/completions", "application/json",
			strings.NewReader(`{"model":"m1","stream":true,"messages":[{"role":"user","content":"hi"}]}`))
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			return err
		}
		if resp.StatusCode != http.StatusOK || !bytes.HasSuffix(b, []byte("data: [DONE]\n\n")) {
			return fmt.Errorf("status %d, body %q", resp.StatusCode, b)
		}
		return nil
	}
	if err := read(); err != nil {
		t.Fatal(err)
	}
	runtime.GC()
	before := runtime.NumGoroutine()

	conns := make([]net.Conn, 0, n)
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	start := time.Now()
	for i := range n {
		d := slowReaderDoors[i%len(slowReaderDoors)]
		c, err := dialSmall(host)
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
		if err := sendRaw(c, host, d.path, d.body, "anthropic-version: 2023-06-01"); err != nil {
			t.Fatal(err)
		}
	}
	sent := time.Since(start)

	// The reader goes on while the 60 are stuck and cut.
	var served, failed atomic.Int64
	var firstErr atomic.Value
	stopReader := make(chan struct{})
	var readerDone sync.WaitGroup
	readerDone.Add(1)
	go func() {
		defer readerDone.Done()
		for {
			select {
			case <-stopReader:
				return
			default:
			}
			if err := read(); err != nil {
				failed.Add(1)
				firstErr.CompareAndSwap(nil, err)
			} else {
				served.Add(1)
			}
		}
	}()

	// All 60 upstream requests under way, then stuck behind their clients.
	waitFor(t, "60 flood streams upstream", func() bool { return f.started.Load() == n })
	during := runtime.NumGoroutine()

	aborts := func() float64 {
		return metric(t, g.reg, "maskgate_client_aborts_total", map[string]string{"reason": "slow_reader"})
	}
	for wait := time.Now().Add(60 * time.Second); aborts() != n; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(wait) {
			t.Fatalf("%v of %d slow readers cut within 60s; upstream: %d started, %d cancelled, %d active; cuts logged by door: chat %d, responses %d, messages %d",
				aborts(), n, f.started.Load(), f.cancelled.Load(), f.active.Load(), strings.Count(logs.String(), "door=chat_completions"),
				strings.Count(logs.String(), "door=responses"), strings.Count(logs.String(), "door=messages"))
		}
	}
	cutAfter := time.Since(start)
	waitFor(t, "60 upstream requests cancelled", func() bool {
		return f.cancelled.Load() == n && f.active.Load() == 0
	})
	cancelledAfter := time.Since(start)

	var wg sync.WaitGroup
	errs := make([]error, n)
	for i, c := range conns {
		wg.Add(1)
		go func() { defer wg.Done(); errs[i] = closedByPeer(c, settle) }()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("client %d (%s): %v", i, slowReaderDoors[i%len(slowReaderDoors)].path, err)
		}
	}

	close(stopReader)
	readerDone.Wait()
	if failed.Load() > 0 || served.Load() == 0 {
		t.Errorf("reading client: %d served, %d failed (first: %v)", served.Load(), failed.Load(), firstErr.Load())
	}
	tr.CloseIdleConnections()

	// Goroutines back to the baseline: a few of net/http's own may linger a moment
	// (idle connections closing), hence the margin; 60 stuck streams held 4 or more each.
	const slack = 10
	var after int
	waitFor(t, "goroutines back to their baseline", func() bool {
		after = runtime.NumGoroutine()
		return after <= before+slack
	})
	if aborts() != n {
		t.Errorf("aborts counted: %v, want %d (a reading client is never one)", aborts(), n)
	}
	// Every door logged its cuts by request id, without the prompt.
	out := logs.String()
	for _, door := range []string{"chat_completions", "responses", "messages"} {
		if got := strings.Count(out, "door="+door); got < n/3 {
			t.Errorf("door %s: %d cuts logged, want %d", door, got, n/3)
		}
	}
	if strings.Contains(out, "flood") {
		t.Error("a log line carries the prompt")
	}
	if strings.Count(out, "request cut") != n {
		t.Errorf("%d cuts logged, want %d", strings.Count(out, "request cut"), n)
	}
	if problems, err := testutil.GatherAndLint(g.reg, "maskgate_client_aborts_total"); err != nil || len(problems) > 0 {
		t.Errorf("lint: %v %v", problems, err)
	}
	t.Logf("60 non-reading streams (20 per door), write_timeout %v: sent in %v; all cut %v after the first was sent, "+
		"all upstream requests cancelled after %v; goroutines %d before, %d during, %d after; reading client served %d times, 0 failed",
		writeTimeout, sent.Round(time.Millisecond), cutAfter.Round(time.Millisecond), cancelledAfter.Round(time.Millisecond),
		before, during, after, served.Load())
	if limit := sent + writeTimeout + settle; cutAfter > limit {
		t.Errorf("cut after %v, past %v", cutAfter, limit)
	}
}

// TestSlowReaders_WholeAnswerCut: a 4 MiB whole answer to clients that never read is
// cut within write_timeout of the last bytes they took, counted; a client that reads
// slowly but steadily gets all of it (its deadline moves with every 16 KiB taken).
func TestSlowReaders_WholeAnswerCut(t *testing.T) {
	// Longer than the streams' test: the steady reader below must be scheduled at least
	// once per write_timeout on a loaded machine under -race.
	const writeTimeout = 5 * time.Second
	f := &floodUpstream{}
	up := newUpstream(t, f.reply)
	g := smallBufferGateway(t, up, gateway.Options{WriteTimeout: writeTimeout})
	host := strings.TrimPrefix(g.URL, "http://")
	const body = `{"model":"m1","messages":[{"role":"user","content":"bigwhole"}]}`

	var conns []net.Conn
	for range 5 {
		c, err := dialSmall(host)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if err := sendRaw(c, host, "/v1/chat/completions", body); err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
	}
	waitFor(t, "5 whole answers cut", func() bool {
		return metric(t, g.reg, "maskgate_client_aborts_total", map[string]string{"reason": "slow_reader"}) == 5
	})
	for i, c := range conns {
		if err := closedByPeer(c, 30*time.Second); err != nil {
			t.Errorf("client %d: %v", i, err)
		}
	}

	// A slow reader that keeps reading: 128 KiB every 250 ms, so the 4 MiB take about
	// 8 s, far past write_timeout, yet no 16 KiB piece waits that long.
	c, err := dialSmall(host)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := sendRaw(c, host, "/v1/chat/completions", body, "Connection: close"); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var got int64
	buf := make([]byte, 128<<10)
	for {
		n, err := io.ReadFull(resp.Body, buf)
		got += int64(n)
		if err != nil {
			break
		}
		time.Sleep(250 * time.Millisecond)
	}
	if resp.StatusCode != http.StatusOK || got != resp.ContentLength || got < 4<<20 {
		t.Errorf("slow but steady reader: status %d, %d of %d bytes", resp.StatusCode, got, resp.ContentLength)
	}
	if n := metric(t, g.reg, "maskgate_client_aborts_total", map[string]string{"reason": "slow_reader"}); n != 5 {
		t.Errorf("aborts %v, want 5: the steady reader is not one", n)
	}
}
