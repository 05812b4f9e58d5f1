package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/maskgate/maskgate/backends"
	"github.com/maskgate/maskgate/backends/replicas"
	"github.com/maskgate/maskgate/config"
)

// fakeOpenAI is an OpenAI-compatible engine under /v1 whose model list can fail.
type fakeOpenAI struct {
	*httptest.Server
	chats atomic.Int32
	down  atomic.Bool
}

func newFakeOpenAI(t *testing.T) *fakeOpenAI {
	t.Helper()
	f := &fakeOpenAI{}
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/v1/models":
			if f.down.Load() {
				http.Error(w, "down", http.StatusServiceUnavailable)
				return
			}
			io.WriteString(w, `{"object":"list","data":[{"id":"m"}]}`)
		case "/v1/chat/completions":
			f.chats.Add(1)
			io.WriteString(w, `{"id":"c1","object":"chat.completion","model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"hi"},"finish_reason":"stop"}],"usage":{"prompt_tokens":3,"completion_tokens":1,"total_tokens":4}}`)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(f.Close)
	return f
}

func nowhere(t *testing.T) string {
	srv := httptest.NewServer(http.NotFoundHandler())
	srv.Close()
	return srv.URL
}

func parseConfig(t *testing.T, yaml string) *config.Config {
	t.Helper()
	cfg, err := config.Parse("gw.yaml", []byte(yaml))
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

func quiet() *slog.Logger { return slog.New(slog.DiscardHandler) }

func TestBuildUpstreams_URLsBecomeReplicasOfTheirKind(t *testing.T) {
	live := newFakeOpenAI(t)
	tests := []struct {
		kind, url  string
		constrains bool
	}{
		{"vllm", live.URL + "/v1", true},
		{"llamacpp", "http://127.0.0.1:8080", true},
		{"openai", live.URL + "/v1", true}, // allowed_tools
		{"ollama", "http://127.0.0.1:11434", false},
	}
	for _, tt := range tests {
		t.Run(tt.kind, func(t *testing.T) {
			cfg := parseConfig(t, fmt.Sprintf("backends:\n  - {name: pool, kind: %s, urls: ['%s', 'http://127.0.0.1:1'], models: [m]}\n", tt.kind, tt.url))
			ups, err := buildUpstreams(cfg, http.DefaultTransport, nil, quiet())
			if err != nil {
				t.Fatal(err)
			}
			rb, ok := ups[0].Backend.(*replicas.Backend)
			if !ok {
				t.Fatalf("backend is %T, want *replicas.Backend", ups[0].Backend)
			}
			if rb.Router().Len() != 2 {
				t.Errorf("%d replicas, want 2", rb.Router().Len())
			}
			// The gateway's strategy must not change because a backend is replicated.
			single, err := newBackend(config.Backend{Name: "one", Kind: tt.kind, URL: tt.url}, "", http.DefaultTransport, nil)
			if err != nil {
				t.Fatal(err)
			}
			c, ok := single.(backends.ToolConstrainer)
			if singleConstrains := ok && c.ConstrainsTools(); singleConstrains != tt.constrains || rb.ConstrainsTools() != tt.constrains {
				t.Errorf("constrains: one engine %v, replicas %v, want %v", singleConstrains, rb.ConstrainsTools(), tt.constrains)
			}
		})
	}
}

func TestBuildUpstreams_ReplicasFailOverAndSayWhichServed(t *testing.T) {
	live := newFakeOpenAI(t)
	cfg := parseConfig(t, fmt.Sprintf("backends:\n  - {name: pool, kind: openai, urls: ['%s/v1', '%s/v1'], models: [m]}\n", nowhere(t), live.URL))
	ups, err := buildUpstreams(cfg, http.DefaultTransport, nil, quiet())
	if err != nil {
		t.Fatal(err)
	}
	for n := range 3 { // whichever replica the router tries first
		resp, err := ups[0].Backend.ChatCompletion(context.Background(), &backends.Request{
			Body: []byte(`{"model":"m","messages":[]}`), Model: "m", Prefix: fmt.Sprint("p", n)})
		if err != nil {
			t.Fatal(err)
		}
		if got := resp.Header.Get(replicas.HeaderReplica); got != "1" {
			t.Errorf("served by replica %q, want 1 (0 is down)", got)
		}
	}
	if live.chats.Load() != 3 {
		t.Errorf("the live replica answered %d of 3", live.chats.Load())
	}
}

func TestBuildUpstreams_ReplicaErrorsNameTheirURL(t *testing.T) {
	// Valid URLs to the config, but an Ollama root must not end in /v1.
	cfg := parseConfig(t, "backends:\n  - {name: pool, kind: ollama, urls: ['http://a:11434', 'http://b:11434/v1'], models: [m]}\n")
	_, err := buildUpstreams(cfg, http.DefaultTransport, nil, quiet())
	if err == nil || !strings.Contains(err.Error(), "backends[0] (pool): urls[1]:") {
		t.Errorf("error %v does not name the url", err)
	}
}

func healthLoops() int {
	buf := make([]byte, 1<<20)
	return strings.Count(string(buf[:runtime.Stack(buf, true)]), "replicas.(*Backend).healthLoop")
}

func TestStartHealthChecks_RunUntilTheContextEnds(t *testing.T) {
	a, b := newFakeOpenAI(t), newFakeOpenAI(t)
	b.down.Store(true)
	cfg := parseConfig(t, fmt.Sprintf("backends:\n  - {name: pool, kind: vllm, urls: ['%s/v1', '%s/v1'], health_interval: 5ms, models: [m]}\n", a.URL, b.URL))
	ups, err := buildUpstreams(cfg, http.DefaultTransport, nil, quiet())
	if err != nil {
		t.Fatal(err)
	}
	before := healthLoops()
	ctx, cancel := context.WithCancel(context.Background())
	startHealthChecks(ctx, ups)
	router := ups[0].Backend.(*replicas.Backend).Router()
	deadline := time.Now().Add(5 * time.Second)
	for router.Healthy(1) {
		if time.Now().After(deadline) {
			t.Fatal("the health check never marked the failing replica down")
		}
		time.Sleep(2 * time.Millisecond)
	}
	// The ping timeout is the interval, 5 ms: on a loaded machine a ping of the
	// answering replica may miss it and mark it down for a round. It must be up again
	// once a ping gets through.
	for !router.Healthy(0) {
		if time.Now().After(deadline) {
			t.Fatal("the answering replica stays marked down")
		}
		time.Sleep(2 * time.Millisecond)
	}
	if healthLoops() != before+1 {
		t.Errorf("%d health loops running, want %d", healthLoops(), before+1)
	}
	cancel()
	for healthLoops() != before {
		if time.Now().After(deadline) {
			t.Fatal("the health loop outlived the process context")
		}
		time.Sleep(2 * time.Millisecond)
	}
}

func TestRun_ServesReplicasWithTheReplicaHeader(t *testing.T) {
	live := newFakeOpenAI(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	path := filepath.Join(t.TempDir(), "gw.yaml")
	os.WriteFile(path, []byte(fmt.Sprintf("backends:\n  - name: pool\n    kind: openai\n    urls: ['%s/v1', '%s/v1']\n    models: [m]\n", nowhere(t), live.URL)), 0o644)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int, 1)
	var stderr syncBuffer
	go func() {
		done <- run(ctx, []string{"-config", path, "-listen", addr}, func(string) string { return "" }, &stderr)
	}()
	defer func() {
		cancel()
		if code := <-done; code != 0 {
			t.Errorf("exit %d\n%s", code, stderr.String())
		}
		if n := healthLoops(); n != 0 {
			t.Errorf("%d health loops outlived run", n)
		}
	}()
	var resp *http.Response
	deadline := time.Now().Add(5 * time.Second)
	for {
		resp, err = http.Post("http://"+addr+"/v1/chat/completions", "application/json",
			strings.NewReader(`{"model":"m","messages":[{"role":"user","content":"hi"}]}`))
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("gateway did not serve: %v\n%s", err, stderr.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), `"content":"hi"`) {
		t.Fatalf("%d %s\n%s", resp.StatusCode, body, stderr.String())
	}
	if got := resp.Header.Get(replicas.HeaderReplica); got != "1" {
		t.Errorf("%s = %q, want 1", replicas.HeaderReplica, got)
	}
	if n := healthLoops(); n != 1 {
		t.Errorf("%d health loops while serving, want 1", n)
	}
}
