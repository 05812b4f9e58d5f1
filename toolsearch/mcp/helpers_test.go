package mcp

import (
	"bytes"
	"context"
	"log/slog"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/maskgate/maskgate/internal/mcptest"
	"github.com/maskgate/maskgate/toolsearch"
)

// transports runs f once over stdio (a re-exec of this test binary) and once
// over streamable HTTP, against internal/mcptest. cfg is the base config:
// Name, Command/Args/Env or URL are filled in.
func transports(t *testing.T, f func(t *testing.T, cfg Config, h *mcptest.HTTPServer)) {
	t.Run("stdio", func(t *testing.T) {
		cmd, args, env := mcptest.StdioCommand(t)
		f(t, Config{Name: "t", Command: cmd, Args: args, Env: env, Logger: testLogger(t)}, nil)
	})
	t.Run("http", func(t *testing.T) {
		h := mcptest.HTTP(t)
		f(t, Config{Name: "t", URL: h.URL, Logger: testLogger(t)}, h)
	})
}

// stdioConfig is the config of an mcptest server over stdio.
func stdioConfig(t *testing.T) Config {
	cmd, args, env := mcptest.StdioCommand(t)
	return Config{Name: "t", Command: cmd, Args: args, Env: env, Logger: testLogger(t)}
}

// start opens and starts cfg's server, closed when the test ends.
func start(t *testing.T, cfg Config) *Server {
	t.Helper()
	s, err := Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := s.Start(ctx); err != nil {
		t.Fatalf("Start: %v", err)
	}
	return s
}

func names(tools []toolsearch.Tool) []string {
	var n []string
	for _, t := range tools {
		n = append(n, t.Name)
	}
	return n
}

func prefixed(prefix string, names []string) []string {
	var out []string
	for _, n := range names {
		out = append(out, prefix+n)
	}
	return out
}

// call calls id and checks the result.
func call(t *testing.T, s *Server, id, args string, want Result) {
	t.Helper()
	got := s.Call(context.Background(), id, []byte(args), "")
	if got != want {
		t.Errorf("Call(%s, %s) = %+v, want %+v", id, args, got, want)
	}
}

// callErr calls id, wanting a failure whose text holds every part.
func callErr(t *testing.T, s *Server, id, args string, parts ...string) Result {
	t.Helper()
	got := s.Call(context.Background(), id, []byte(args), "")
	if !got.IsError {
		t.Errorf("Call(%s, %s) = %+v, want an error", id, args, got)
	}
	for _, p := range parts {
		if !strings.Contains(got.Text, p) {
			t.Errorf("Call(%s, %s) = %q, want it to hold %q", id, args, got.Text, p)
		}
	}
	if strings.Contains(got.Text, "\n") {
		t.Errorf("Call(%s, %s) = %q: the failure is not one line", id, args, got.Text)
	}
	return got
}

// changes counts OnChange calls.
type changes struct {
	mu sync.Mutex
	n  int
	c  chan struct{}
}

func newChanges() *changes { return &changes{c: make(chan struct{}, 100)} }

func (c *changes) onChange() {
	c.mu.Lock()
	c.n++
	c.mu.Unlock()
	c.c <- struct{}{}
}

func (c *changes) count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n
}

// wait waits for the next OnChange.
func (c *changes) wait(t *testing.T, d time.Duration) {
	t.Helper()
	select {
	case <-c.c:
	case <-time.After(d):
		t.Fatalf("OnChange not called within %v", d)
	}
}

// eventually polls cond for up to d.
func eventually(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %v", what, d)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// noLeaks fails the test when, some seconds after f, more goroutines run
// than before it.
func noLeaks(t *testing.T, f func()) {
	t.Helper()
	before := runtime.NumGoroutine()
	f()
	deadline := time.Now().Add(10 * time.Second)
	for {
		n := runtime.NumGoroutine()
		if n <= before {
			return
		}
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<20)
			buf = buf[:runtime.Stack(buf, true)]
			t.Fatalf("%d goroutines before, %d after Close:\n%s", before, n, buf)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// testLogger logs to the test at debug level.
func testLogger(t *testing.T) *slog.Logger {
	return slog.New(slog.NewTextHandler(&testWriter{t: t}, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

type testWriter struct {
	t  *testing.T
	mu sync.Mutex
}

func (w *testWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	defer func() { recover() }() // a log after the test ended
	w.t.Log(strings.TrimSuffix(string(p), "\n"))
	return len(p), nil
}

// logBuffer collects log lines.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *logBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func (b *logBuffer) logger() *slog.Logger {
	return slog.New(slog.NewTextHandler(b, &slog.HandlerOptions{Level: slog.LevelDebug}))
}
