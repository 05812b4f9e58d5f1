package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/maskgate/maskgate/internal/mcptest"
	"github.com/maskgate/maskgate/toolsearch"
)

// TestDiscovery: the tools come namespaced, in the server's listing order,
// with descriptions and schemas, byte-identical from two separate Opens.
func TestDiscovery(t *testing.T) {
	transports(t, func(t *testing.T, cfg Config, h *mcptest.HTTPServer) {
		a := start(t, cfg).Tools()
		if got, want := names(a), prefixed("t_", mcptest.Tools); !slices.Equal(got, want) {
			t.Fatalf("tools = %v, want %v", got, want)
		}
		for _, tool := range a {
			if tool.Description == "" || tool.Category != "t" || tool.Source != toolsearch.FromProfile ||
				tool.Origin != "mcp server t tool "+strings.TrimPrefix(tool.Name, "t_") {
				t.Errorf("tool %+v", tool)
			}
			var schema struct {
				Type string `json:"type"`
			}
			if err := json.Unmarshal(tool.Parameters, &schema); err != nil || schema.Type != "object" {
				t.Errorf("%s: parameters %s (%v)", tool.Name, tool.Parameters, err)
			}
		}
		echo := a[slices.IndexFunc(a, func(t toolsearch.Tool) bool { return t.Name == "t_echo" })]
		if want := `{"additionalProperties":false,"properties":{"text":{"description":"the text to return","type":"string"}},"required":["text"],"type":"object"}`; string(echo.Parameters) != want {
			t.Errorf("t_echo parameters\n%s\nwant\n%s", echo.Parameters, want)
		}

		b := start(t, cfg).Tools()
		if len(a) != len(b) {
			t.Fatalf("second Open: %d tools, first %d", len(b), len(a))
		}
		for i := range a {
			if !bytes.Equal(a[i].Parameters, b[i].Parameters) || a[i].Description != b[i].Description {
				t.Errorf("%s differs between two Opens:\n%s\n%s", a[i].Name, a[i].Parameters, b[i].Parameters)
			}
		}
		// The tools make a valid catalog.
		if _, err := toolsearch.New(a); err != nil {
			t.Errorf("toolsearch.New: %v", err)
		}
	})
}

func TestAllow(t *testing.T) {
	for _, tc := range []struct {
		name  string
		allow []string
		want  []string
	}{
		{"nil allows all", nil, prefixed("t_", mcptest.Tools)},
		{"empty allows none", []string{}, nil},
		{"some, in listing order", []string{"echo", "add", "no_such_tool"}, []string{"t_add", "t_echo"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var logs logBuffer
			cfg := stdioConfig(t)
			cfg.Allow, cfg.Logger = tc.allow, logs.logger()
			s := start(t, cfg)
			if got := names(s.Tools()); !slices.Equal(got, tc.want) {
				t.Errorf("tools = %v, want %v", got, tc.want)
			}
			if slices.Contains(tc.want, "t_echo") {
				call(t, s, "t_echo", `{"text":"hi"}`, Result{Text: "hi"})
			} else {
				callErr(t, s, "t_echo", `{"text":"hi"}`, `tool "t_echo" is not allowed`)
			}
			if tc.allow != nil {
				callErr(t, s, "t_fail", ``, `tool "t_fail" is not allowed`)
			}
			if slices.Contains(tc.allow, "no_such_tool") && !strings.Contains(logs.String(), "no_such_tool") {
				t.Errorf("an allow entry naming no tool was not logged:\n%s", logs.String())
			}
		})
	}
}

// TestListChanged: a tool added on the server shows up in Tools, OnChange
// is called, and the tool can be called.
func TestListChanged(t *testing.T) {
	transports(t, func(t *testing.T, cfg Config, h *mcptest.HTTPServer) {
		ch := newChanges()
		cfg.OnChange = ch.onChange
		s := start(t, cfg)
		if n := ch.count(); n != 0 {
			t.Errorf("OnChange called %d times by a successful Start", n)
		}
		if h != nil {
			h.AddTool("later")
		} else {
			call(t, s, "t_add_tool", `{"name":"later"}`, Result{Text: "added later"})
		}
		ch.wait(t, 10*time.Second)
		if got := names(s.Tools()); !slices.Contains(got, "t_later") || len(got) != len(mcptest.Tools)+1 {
			t.Errorf("after list_changed: %v", got)
		}
		call(t, s, "t_later", `{"text":"x"}`, Result{Text: "x"})
	})
}

func TestCall(t *testing.T) {
	transports(t, func(t *testing.T, cfg Config, h *mcptest.HTTPServer) {
		s := start(t, cfg)
		call(t, s, "t_echo", `{"text":"héllo\nworld"}`, Result{Text: "héllo\nworld"})
		call(t, s, "t_add", ` {"a": 1.5, "b": 2} `, Result{Text: "3.5"})
		call(t, s, "t_sleep", `{"ms":1}`, Result{Text: "slept"})
		call(t, s, "t_fail", ``, Result{Text: "failed on purpose", IsError: true})
		call(t, s, "t_fail", `null`, Result{Text: "failed on purpose", IsError: true})
		// The server validates the arguments: its message comes back.
		callErr(t, s, "t_echo", `{"text":5}`, "text")
		callErr(t, s, "t_rpc_error", `{}`, `tool "t_rpc_error" failed`, "-32000", "rpc error on purpose")
		callErr(t, s, "t_nope", `{}`, `unknown tool "t_nope"`)
		callErr(t, s, "echo", `{}`, `unknown tool "echo"`)
		callErr(t, s, "t_echo", `[1]`, "not a JSON object")
		callErr(t, s, "t_echo", `{"text":`, "not a JSON object")
		// A result over MaxText is cut, and says so.
		r := s.Call(context.Background(), "t_big", []byte(fmt.Sprintf(`{"n":%d}`, MaxText+1000)), "")
		if r.IsError || len(r.Text) > MaxText || !strings.HasPrefix(r.Text, "0123456789") {
			t.Fatalf("big: IsError %v, %d bytes, starting %.20q", r.IsError, len(r.Text), r.Text)
		}
		kept := strings.Index(r.Text, "…")
		if want := fmt.Sprintf("… [result cut: %d more bytes]", MaxText+1000-kept); r.Text[kept:] != want {
			t.Errorf("big ends %q, want %q", r.Text[kept:], want)
		}
		call(t, s, "t_big", fmt.Sprintf(`{"n":%d}`, 12), Result{Text: "012345678901"})
	})
}

// TestCall_Lazy: Call before Start connects.
func TestCall_Lazy(t *testing.T) {
	s, err := Open(stdioConfig(t))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	call(t, s, "t_echo", `{"text":"hi"}`, Result{Text: "hi"})
	callErr(t, s, "t_nope", `{}`, "unknown tool")
}

func TestTimeout(t *testing.T) {
	transports(t, func(t *testing.T, cfg Config, h *mcptest.HTTPServer) {
		// The timeout also bounds what must succeed — the connect with its listing (a
		// stdio server is a process to start) and the echo below — so it is 10× and more
		// what those take on a loaded machine; the sleep is six times the timeout.
		cfg.Timeout = 10 * time.Second
		s := start(t, cfg)
		begin := time.Now()
		r := callErr(t, s, "t_sleep", `{"ms":60000}`)
		if want := `tool "t_sleep" timed out after 10s`; r.Text != want {
			t.Errorf("text %q, want %q", r.Text, want)
		}
		if d := time.Since(begin); d > 30*time.Second {
			t.Errorf("the timed-out call took %v", d)
		}
		// The caller's own deadline is a cancellation, not the timeout.
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		defer cancel()
		if r := s.Call(ctx, "t_sleep", []byte(`{"ms":60000}`), ""); !r.IsError || !strings.Contains(r.Text, "cancelled") {
			t.Errorf("cancelled call = %+v", r)
		}
		// The session survives.
		call(t, s, "t_echo", `{"text":"still here"}`, Result{Text: "still here"})
	})
}

// TestCrash: the stdio server exits in the middle of a call. The model
// reads why; the next call reconnects and works.
func TestCrash(t *testing.T) {
	cfg := stdioConfig(t)
	ch := newChanges()
	cfg.OnChange = ch.onChange
	s := start(t, cfg)
	before := s.Tools()
	callErr(t, s, "t_crash", `{}`, `tool "t_crash" failed`, `connection to MCP server "t" was lost during the call`)
	call(t, s, "t_echo", `{"text":"back"}`, Result{Text: "back"})
	if after := s.Tools(); !slices.Equal(names(after), names(before)) {
		t.Errorf("tools after reconnect %v, before %v", names(after), names(before))
	}
	if n := ch.count(); n != 0 {
		t.Errorf("OnChange called %d times by a reconnect that found the same tools", n)
	}

	// Crash again after adding a tool: the new process lists one fewer, and
	// the reconnect tells OnChange.
	call(t, s, "t_add_tool", `{"name":"extra"}`, Result{Text: "added extra"})
	ch.wait(t, 10*time.Second)
	callErr(t, s, "t_crash", `{}`, "lost during the call")
	call(t, s, "t_add", `{"a":1,"b":1}`, Result{Text: "2"})
	ch.wait(t, 10*time.Second)
	if got := names(s.Tools()); slices.Contains(got, "t_extra") {
		t.Errorf("after a reconnect to a server without it: %v", got)
	}

	// A crash while other calls wait: they fail too, cleanly.
	var wg sync.WaitGroup
	results := make([]Result, 4)
	for i := range results {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i] = s.Call(context.Background(), "t_sleep", []byte(`{"ms":5000}`), "")
		}()
	}
	time.Sleep(200 * time.Millisecond)
	callErr(t, s, "t_crash", `{}`, "lost during the call")
	wg.Wait()
	for _, r := range results {
		if !r.IsError || !strings.Contains(r.Text, "lost during the call") {
			t.Errorf("a call in flight at the crash = %+v", r)
		}
	}
	call(t, s, "t_echo", `{"text":"again"}`, Result{Text: "again"})
}

// TestSessionLost: an HTTP server that forgot the session (404); the next
// call reconnects.
func TestSessionLost(t *testing.T) {
	h := mcptest.HTTP(t)
	var logs logBuffer
	s := start(t, Config{Name: "t", URL: h.URL, Logger: logs.logger()})
	connects := func() int { return strings.Count(logs.String(), `msg="mcp: connected"`) }
	call(t, s, "t_echo", `{"text":"one"}`, Result{Text: "one"})
	// The call meets the 404 and is sent again on a new session.
	h.DropSessions()
	call(t, s, "t_echo", `{"text":"two"}`, Result{Text: "two"})
	if n := connects(); n != 2 {
		t.Errorf("%d connects, want 2:\n%s", n, logs.String())
	}
	h.DropSessions()
	call(t, s, "t_echo", `{"text":"three"}`, Result{Text: "three"})
	if n := connects(); n != 3 {
		t.Errorf("%d connects, want 3:\n%s", n, logs.String())
	}
}

func TestForwardAuth(t *testing.T) {
	t.Run("on", func(t *testing.T) {
		h := mcptest.HTTP(t)
		s := start(t, Config{Name: "t", URL: h.URL, ForwardAuth: true, Logger: testLogger(t)})
		if a := h.Authorizations(); len(a) != 0 {
			t.Errorf("connecting and listing sent Authorization %q", a)
		}
		for _, bearer := range []string{"tok", "Bearer tok", "bearer tok"} {
			if r := s.Call(context.Background(), "t_auth", nil, bearer); r != (Result{Text: "Bearer tok"}) {
				t.Errorf("bearer %q: the server saw %+v", bearer, r)
			}
		}
		if r := s.Call(context.Background(), "t_auth", nil, ""); r != (Result{Text: "(none)"}) {
			t.Errorf("no bearer: the server saw %+v", r)
		}
		if r := s.Call(context.Background(), "t_auth", nil, "other"); r != (Result{Text: "Bearer other"}) {
			t.Errorf("the server saw %+v", r)
		}
		for _, a := range h.Authorizations() {
			if a != "Bearer tok" && a != "Bearer other" {
				t.Errorf("the server saw Authorization %q", a)
			}
		}
	})
	t.Run("off", func(t *testing.T) {
		h := mcptest.HTTP(t)
		s := start(t, Config{Name: "t", URL: h.URL, Logger: testLogger(t)})
		if r := s.Call(context.Background(), "t_auth", nil, "tok"); r != (Result{Text: "(none)"}) {
			t.Errorf("the server saw %+v", r)
		}
		if a := h.Authorizations(); len(a) != 0 || h.LastAuthorization() != "" {
			t.Errorf("the server saw Authorization %q", a)
		}
	})
	t.Run("headers", func(t *testing.T) {
		h := mcptest.HTTP(t)
		s := start(t, Config{Name: "t", URL: h.URL, Headers: map[string]string{"Authorization": "Bearer static"}, Logger: testLogger(t)})
		if r := s.Call(context.Background(), "t_auth", nil, "tok"); r != (Result{Text: "Bearer static"}) {
			t.Errorf("the server saw %+v", r)
		}
		if h.LastAuthorization() != "Bearer static" {
			t.Errorf("last Authorization %q", h.LastAuthorization())
		}
	})
	t.Run("stdio ignores it", func(t *testing.T) {
		cfg := stdioConfig(t)
		cfg.ForwardAuth = true
		s := start(t, cfg)
		if r := s.Call(context.Background(), "t_auth", nil, "tok"); r != (Result{Text: "(none)"}) {
			t.Errorf("the server saw %+v", r)
		}
	})
}

// TestConcurrentCalls: calls share the session and run at the same time.
func TestConcurrentCalls(t *testing.T) {
	transports(t, func(t *testing.T, cfg Config, h *mcptest.HTTPServer) {
		s := start(t, cfg)
		const n = 16
		var wg sync.WaitGroup
		begin := time.Now()
		errs := make(chan string, 2*n)
		for i := range n {
			wg.Add(2)
			go func() {
				defer wg.Done()
				if r := s.Call(context.Background(), "t_sleep", []byte(`{"ms":500}`), ""); r != (Result{Text: "slept"}) {
					errs <- fmt.Sprintf("sleep: %+v", r)
				}
			}()
			go func() {
				defer wg.Done()
				want := fmt.Sprint(i)
				if r := s.Call(context.Background(), "t_echo", []byte(`{"text":"`+want+`"}`), ""); r != (Result{Text: want}) {
					errs <- fmt.Sprintf("echo %s: %+v", want, r)
				}
			}()
		}
		wg.Wait()
		close(errs)
		for e := range errs {
			t.Error(e)
		}
		if d := time.Since(begin); d > 5*time.Second {
			t.Errorf("%d calls of 500ms took %v: not concurrent", n, d)
		}
	})
}

// TestStart_Retries: Start fails while the server is down, then retries in
// the background; the success calls OnChange.
func TestStart_Retries(t *testing.T) {
	var up atomic.Bool
	srv := mcptest.NewServer(false)
	handler := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !up.Load() {
			http.Error(w, "not yet", http.StatusBadGateway)
			return
		}
		handler.ServeHTTP(w, r)
	}))
	t.Cleanup(func() { ts.CloseClientConnections(); ts.Close() })

	ch := newChanges()
	// The default timeout, 30 s: the retry's connect and listing must succeed, and the
	// down server's 502 fails Start at once, not by a timeout.
	s, err := Open(Config{Name: "t", URL: ts.URL, OnChange: ch.onChange, Logger: testLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.Start(context.Background()); err == nil {
		t.Fatal("Start succeeded against a server that is down")
	}
	if len(s.Tools()) != 0 {
		t.Errorf("tools before any listing: %v", names(s.Tools()))
	}
	callErr(t, s, "t_echo", `{"text":"x"}`, `MCP server "t" is not connected`)
	up.Store(true)
	ch.wait(t, 10*time.Second)
	if got := names(s.Tools()); len(got) != len(mcptest.Tools) {
		t.Errorf("tools after the retry: %v", got)
	}
	call(t, s, "t_echo", `{"text":"x"}`, Result{Text: "x"})
}

// TestStart_StopsRetrying: a server that never comes up; Close (or Start's
// ctx) ends the retries, leaving no goroutine behind.
func TestStart_StopsRetrying(t *testing.T) {
	for _, how := range []string{"close", "ctx"} {
		t.Run(how, func(t *testing.T) {
			noLeaks(t, func() {
				s, err := Open(Config{Name: "t", Command: "/nonexistent/mcp-server", Logger: testLogger(t)})
				if err != nil {
					t.Fatal(err)
				}
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				if err := s.Start(ctx); err == nil || !strings.Contains(err.Error(), "nonexistent") {
					t.Errorf("Start: %v", err)
				}
				if how == "ctx" {
					cancel()
					time.Sleep(50 * time.Millisecond)
				}
				callErr(t, s, "t_echo", `{}`, "not connected", "nonexistent")
				if err := s.Close(); err != nil {
					t.Error(err)
				}
				callErr(t, s, "t_echo", `{}`, "closed")
				if err := s.Start(context.Background()); err == nil {
					t.Error("Start after Close succeeded")
				}
			})
		})
	}
}

// TestClose_NoLeaks: everything a server starts (processes' pipes, HTTP
// streams, the re-listing and watching goroutines) is gone after Close.
func TestClose_NoLeaks(t *testing.T) {
	transports(t, func(t *testing.T, cfg Config, h *mcptest.HTTPServer) {
		ch := newChanges()
		cfg.OnChange = ch.onChange
		noLeaks(t, func() {
			s, err := Open(cfg)
			if err != nil {
				t.Fatal(err)
			}
			if err := s.Start(context.Background()); err != nil {
				t.Fatal(err)
			}
			call(t, s, "t_echo", `{"text":"x"}`, Result{Text: "x"})
			call(t, s, "t_add_tool", `{"name":"more"}`, Result{Text: "added more"})
			ch.wait(t, 10*time.Second)
			if h == nil {
				callErr(t, s, "t_crash", `{}`, "lost during the call")
				call(t, s, "t_echo", `{"text":"y"}`, Result{Text: "y"})
			} else {
				h.DropSessions()
				call(t, s, "t_echo", `{"text":"y"}`, Result{Text: "y"})
			}
			// A call in flight at Close fails at once.
			done := make(chan Result)
			go func() { done <- s.Call(context.Background(), "t_sleep", []byte(`{"ms":10000}`), "") }()
			time.Sleep(100 * time.Millisecond)
			if err := s.Close(); err != nil {
				t.Error(err)
			}
			select {
			case r := <-done:
				if !r.IsError {
					t.Errorf("a call in flight at Close = %+v", r)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("a call in flight at Close hangs")
			}
			if err := s.Close(); err != nil {
				t.Errorf("second Close: %v", err)
			}
		})
	})
}
