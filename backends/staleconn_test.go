package backends_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/maskgate/maskgate/backends"
)

// keepAliveServer answers HTTP/1.1 on raw connections: each connection answers its first
// `answer` requests with keep-alive and then, on the next one, reads the request whole and
// closes without a byte of answer, as a server does whose idle timeout fired the instant
// the request arrived. It counts the requests it read and the connections it accepted.
type keepAliveServer struct {
	ln     net.Listener
	answer int
	mu     sync.Mutex
	reads  int
	conns  int
	// together, when set, holds every answer until that many requests have been read,
	// so that many requests are in flight on as many connections at once.
	together int
	arrived  *sync.Cond
	// early: the request it drops is dropped after its headers, its body unread, so the
	// client is still writing it when the connection closes.
	early bool
}

func startKeepAlive(t *testing.T, answer int) *keepAliveServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &keepAliveServer{ln: ln, answer: answer}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s.mu.Lock()
			s.conns++
			s.mu.Unlock()
			go s.serve(c)
		}
	}()
	return s
}

func (s *keepAliveServer) serve(c net.Conn) {
	defer c.Close()
	br := bufio.NewReader(c)
	for n := 0; ; n++ {
		req, err := http.ReadRequest(br)
		if err != nil {
			return
		}
		if s.early && n >= s.answer {
			return
		}
		io.Copy(io.Discard, req.Body)
		s.mu.Lock()
		s.reads++
		if s.arrived != nil {
			s.arrived.Broadcast()
			for s.reads < s.together {
				s.arrived.Wait()
			}
		}
		answer := s.answer
		s.mu.Unlock()
		if n >= answer {
			return
		}
		io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}")
	}
}

func (s *keepAliveServer) counts() (reads, conns int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.reads, s.conns
}

func (s *keepAliveServer) upstream() *backends.Upstream {
	return &backends.Upstream{Name: "up", Base: "http://" + s.ln.Addr().String(),
		Client: &http.Client{Transport: &http.Transport{}}}
}

func post(u *backends.Upstream) error {
	resp, cancel, err := u.Open(context.Background(), "/completion", []byte(`{"prompt":"x"}`), "application/json")
	if err != nil {
		return err
	}
	defer cancel(nil)
	defer resp.Body.Close()
	_, err = io.ReadAll(resp.Body)
	return err
}

// A POST sent on a kept-alive connection the server closes without answering is sent
// once more on a new connection, and the caller sees the answer; net/http alone returns
// the error for a POST, which the gateway reported as an unreachable backend.
func TestUpstream_StaleKeptAliveConnectionIsRetriedOnce(t *testing.T) {
	s := startKeepAlive(t, 1)
	u := s.upstream()
	for i := range 3 {
		if err := post(u); err != nil {
			t.Fatalf("request %d: %v", i+1, err)
		}
	}
	// Connection 1 answers request 1 and drops request 2; connection 2 answers the
	// retry and drops request 3; connection 3 answers its retry.
	if reads, conns := s.counts(); reads != 5 || conns != 3 {
		t.Errorf("server read %d requests on %d connections, want 5 on 3", reads, conns)
	}
}

// The server's idle timeout fires for every kept-alive connection at once: with two
// stale connections in the pool, the retries go on until a new connection answers
// instead of stopping at the second stale one (which answered a 502), and the pool, one
// transport shared by every backend, is not emptied for it.
func TestUpstream_RetryAfterAStaleConnectionTakesANewOne(t *testing.T) {
	s := startKeepAlive(t, 1)
	s.together, s.arrived = 2, sync.NewCond(&s.mu)
	u := s.upstream()
	errs := make(chan error, 2)
	for range 2 { // two at once: two connections, each answering one request
		go func() { errs <- post(u) }()
	}
	for range 2 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	if err := post(u); err != nil {
		t.Fatalf("with two stale connections in the pool: %v", err)
	}
	// Both first requests answered; the third is dropped on each stale connection in
	// turn and answered on a third, new one.
	if reads, conns := s.counts(); reads != 5 || conns != 3 {
		t.Errorf("server read %d requests on %d connections, want 5 on 3", reads, conns)
	}
}

// A connection that was new when the request went out is not retried: its failure is the
// upstream's, reported as unreachable, and the server saw the request once.
func TestUpstream_NewConnectionFailureIsNotRetried(t *testing.T) {
	s := startKeepAlive(t, 0)
	err := post(s.upstream())
	var be *backends.Error
	if !errors.As(err, &be) || be.Code != backends.CodeUnreachable {
		t.Fatalf("err %v, want %s", err, backends.CodeUnreachable)
	}
	if reads, conns := s.counts(); reads != 1 || conns != 1 {
		t.Errorf("server read %d requests on %d connections, want 1 on 1", reads, conns)
	}
}

// A failure on a new connection ends the retries: a server that drops every reused
// connection's request and then every new one's too gets the request twice, and the
// caller an error.
func TestUpstream_RetryIsOnlyOnce(t *testing.T) {
	s := startKeepAlive(t, 1)
	u := s.upstream()
	if err := post(u); err != nil {
		t.Fatal(err)
	}
	s.mu.Lock()
	s.answer = 0 // from now on no connection answers
	s.mu.Unlock()
	var be *backends.Error
	if err := post(u); !errors.As(err, &be) || be.Code != backends.CodeUnreachable {
		t.Fatalf("err %v, want %s", err, backends.CodeUnreachable)
	}
	if reads, _ := s.counts(); reads != 3 {
		t.Errorf("server read %d requests, want 3 (one, then the dropped one and its one retry)", reads)
	}
}

// lateTransport answers at once and keeps the request's body to read later, as a
// transport may: net/http's can still be writing a body whose answer came first.
type lateTransport struct{ body io.ReadCloser }

func (t *lateTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	t.body = r.Body
	return &http.Response{StatusCode: 200, Header: http.Header{}, Body: io.NopCloser(strings.NewReader("{}")), Request: r}, nil
}

func exchange(t *testing.T, ctx context.Context, u *backends.Upstream, body []byte) {
	t.Helper()
	resp, cancel, err := u.Open(ctx, "/v1/chat/completions", body, "application/json")
	if err != nil {
		t.Fatal(err)
	}
	io.ReadAll(resp.Body)
	resp.Body.Close()
	cancel(nil)
}

// A body's tracker is idle once net/http has written every copy of it, and stays busy
// while a transport may still read it: the caller recycles the body's buffer only then.
func TestUpstream_BodyTrackerIdleOnlyOnceTheBodyIsWritten(t *testing.T) {
	s := startKeepAlive(t, 1) // answers, then drops the next request on that connection
	u := s.upstream()
	ctx, bt := backends.TrackBody(context.Background())
	body := []byte(`{"model":"m","messages":[]}`)
	exchange(t, ctx, u, body)
	exchange(t, ctx, u, body) // dropped, then sent again on a new connection: two writes
	if !bt.Idle() {
		t.Error("the tracker is busy after net/http wrote every request")
	}
	if reads, _ := s.counts(); reads != 3 {
		t.Errorf("the server read %d requests, want 3", reads)
	}

	lt := &lateTransport{}
	late := &backends.Upstream{Name: "up", Base: "http://upstream.test", Client: &http.Client{Transport: lt}}
	ctx, bt = backends.TrackBody(context.Background())
	exchange(t, ctx, late, body)
	if bt.Idle() {
		t.Error("the tracker is idle while a transport still holds the body unread")
	}
}

// The server closes a kept-alive connection while the request's body is still being
// written: the transport, having read the close, closes the connection under the writer,
// whose error is net.ErrClosed ("use of closed network connection") rather than EOF, or
// a reset or broken pipe. The server never answered, so it is sent again on a new
// connection (bench/replay's run against llama-server got a 502 for /apply-template).
func TestUpstream_ConnectionClosedUnderTheBodyIsRetried(t *testing.T) {
	s := startKeepAlive(t, 1)
	s.early = true
	u := s.upstream()
	body := []byte(`{"prompt":"` + strings.Repeat("x", 8<<20) + `"}`)
	for i := range 4 {
		resp, cancel, err := u.Open(context.Background(), "/apply-template", body, "application/json")
		if err != nil {
			t.Fatalf("request %d: %v", i+1, err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		cancel(nil)
	}
}

func TestStaleConn_ClosedUnderTheWriter(t *testing.T) {
	err := &net.OpError{Op: "write", Net: "tcp", Err: net.ErrClosed}
	if !backends.StaleConn(fmt.Errorf("readfrom tcp: %w", err)) {
		t.Error("a write on a connection the transport closed is not taken for a stale one")
	}
	if backends.StaleConn(errors.New("dial tcp: connection refused")) {
		t.Error("a refused dial is taken for a stale connection")
	}
}
