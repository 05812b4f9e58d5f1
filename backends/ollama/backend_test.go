package ollama

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/maskgate/maskgate/backends"
)

var fixedNow = func() time.Time { return time.Unix(1700000000, 0) }

// fakeOllama serves /api/chat with chat and records the request bodies it got.
type fakeOllama struct {
	*httptest.Server
	mu     sync.Mutex
	bodies [][]byte
}

func newFake(t *testing.T, chat http.HandlerFunc) *fakeOllama {
	t.Helper()
	f := &fakeOllama{}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /api/chat", func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		f.mu.Lock()
		f.bodies = append(f.bodies, body)
		f.mu.Unlock()
		chat(w, r)
	})
	mux.HandleFunc("GET /api/tags", func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `{"models":[{"name":"qwen2.5:0.5b","model":"qwen2.5:0.5b","size":1},{"name":"llama3.2:1b","model":"llama3.2:1b"}]}`)
	})
	mux.HandleFunc("GET /api/version", func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `{"version":"0.17.4"}`)
	})
	f.Server = httptest.NewServer(mux)
	t.Cleanup(f.Close)
	return f
}
func (f *fakeOllama) lastBody() []byte {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.bodies) == 0 {
		return nil
	}
	return f.bodies[len(f.bodies)-1]
}
func newBackend(t *testing.T, url string, o Options) *Backend {
	t.Helper()
	o.Name, o.BaseURL = "local", url
	if o.Now == nil {
		o.Now = fixedNow
	}
	b, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// ndjson answers with lines, flushing each, as Ollama streams.
func ndjson(lines ...string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/x-ndjson")
		for _, l := range lines {
			io.WriteString(w, l+"\n")
			w.(http.Flusher).Flush()
		}
	}
}
func status(code int, body string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		w.WriteHeader(code)
		io.WriteString(w, body)
	}
}

var (
	idRe     = regexp.MustCompile(`"chatcmpl-[A-Z2-7]{26}"`)
	callIDRe = regexp.MustCompile(`"call_[A-Z2-7]{26}"`)
)

// stable replaces the random ids with fixed ones so a response can be compared.
func stable(b []byte) string {
	s := idRe.ReplaceAllString(string(b), `"chatcmpl-ID"`)
	return callIDRe.ReplaceAllString(s, `"call_ID"`)
}

// drain reads a stream to its end and closes it.
func drain(t *testing.T, s backends.Stream) ([]string, error) {
	t.Helper()
	defer s.Close()
	var out []string
	for {
		b, err := s.Next()
		if err != nil {
			return out, err
		}
		out = append(out, stable(b))
	}
}

// noStreamGoroutines fails if a stream goroutine of this package is still running after
// wait. A goroutine that has closed its exit channel is gone in a moment, not at once: on a
// loaded machine (CI runs packages in parallel under -race) a zero wait is flaky.
func noStreamGoroutines(t *testing.T, wait time.Duration) {
	t.Helper()
	deadline := time.Now().Add(wait)
	for {
		buf := make([]byte, 1<<20)
		buf = buf[:runtime.Stack(buf, true)]
		if !bytes.Contains(buf, []byte("ollama.(*Backend).startStream.func")) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("a stream goroutine is still running:\n%s", buf)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

const hello = `{"model":"qwen","messages":[{"role":"system","content":"be brief"},{"role":"user","content":"hi"}]}`

func TestChatCompletion_NonStreaming(t *testing.T) {
	f := newFake(t, ndjson(`{"model":"qwen","created_at":"2025-01-01T00:00:00Z","message":{"role":"assistant","content":"Hello!"},"done":true,"done_reason":"stop","total_duration":5,"prompt_eval_count":12,"prompt_eval_duration":3,"eval_count":3,"eval_duration":2}`))
	b := newBackend(t, f.URL, Options{})
	resp, err := b.ChatCompletion(context.Background(), &backends.Request{Body: []byte(hello), Model: "qwen"})
	if err != nil {
		t.Fatal(err)
	}
	want := `{"id":"chatcmpl-ID","object":"chat.completion","created":1700000000,"model":"qwen","choices":[{"index":0,"message":{"role":"assistant","content":"Hello!"},"finish_reason":"stop","logprobs":null}],"usage":{"prompt_tokens":12,"completion_tokens":3,"total_tokens":15,"prompt_tokens_details":{"cached_tokens":0}}}`
	if diff := cmp.Diff(want, stable(resp.Body)); diff != "" {
		t.Errorf("body (-want +got):\n%s", diff)
	}
	if resp.Stream != nil || resp.Cache != backends.CacheEstimated || resp.Strategy != "" {
		t.Errorf("stream %v, cache %q, strategy %q", resp.Stream, resp.Cache, resp.Strategy)
	}
	wantReq := `{"model":"qwen","messages":[{"role":"system","content":"be brief"},{"role":"user","content":"hi"}],"stream":false,"options":null,"truncate":false}`
	if diff := cmp.Diff(wantReq, string(f.lastBody())); diff != "" {
		t.Errorf("request Ollama got (-want +got):\n%s", diff)
	}
}
func TestChatCompletion_Streaming(t *testing.T) {
	f := newFake(t, ndjson(
		`{"model":"qwen","message":{"role":"assistant","content":"Hel"},"done":false}`,
		`{"model":"qwen","message":{"role":"assistant","content":"lo"},"done":false}`,
		`{"model":"qwen","message":{"role":"assistant","content":""},"done":true,"done_reason":"length","prompt_eval_count":12,"eval_count":2}`,
	))
	b := newBackend(t, f.URL, Options{})
	body := strings.Replace(hello, `{"model"`, `{"stream":true,"model"`, 1)
	resp, err := b.ChatCompletion(context.Background(), &backends.Request{Body: []byte(body), Model: "qwen", Stream: true})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Body != nil || resp.Stream == nil {
		t.Fatal("want a stream")
	}
	got, err := drain(t, resp.Stream)
	if !errors.Is(err, io.EOF) {
		t.Fatalf("end = %v, want io.EOF", err)
	}
	head := `{"id":"chatcmpl-ID","object":"chat.completion.chunk","created":1700000000,"model":"qwen","choices":`
	want := []string{
		head + `[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]}`,
		head + `[{"index":0,"delta":{"content":"Hel"},"finish_reason":null}]}`,
		head + `[{"index":0,"delta":{"content":"lo"},"finish_reason":null}]}`,
		head + `[{"index":0,"delta":{},"finish_reason":"length"}]}`,
		head + `[],"usage":{"prompt_tokens":12,"completion_tokens":2,"total_tokens":14,"prompt_tokens_details":{"cached_tokens":0}}}`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("chunks (-want +got):\n%s", diff)
	}
	if !bytes.Contains(f.lastBody(), []byte(`"stream":true`)) {
		t.Errorf("Ollama was not asked to stream: %s", f.lastBody())
	}
	if _, err := resp.Stream.Next(); !errors.Is(err, io.EOF) && !errors.Is(err, errStreamClosed) {
		t.Errorf("Next after the end = %v", err)
	}
	noStreamGoroutines(t, 2*time.Second)
}
func TestChatCompletion_RequiredCallSendsFormatAndSaysMask(t *testing.T) {
	f := newFake(t, ndjson(`{"message":{"role":"assistant","content":"{\"name\":\"get_time\",\"arguments\":{\"tz\":\"UTC\"}}"},"done":true,"done_reason":"stop","prompt_eval_count":40,"eval_count":9}`))
	b := newBackend(t, f.URL, Options{})
	body := `{"model":"qwen","messages":[{"role":"user","content":"time?"}],"tools":[` + weatherTool + `,` + timeTool + `],"tool_choice":"required"}`
	resp, err := b.ChatCompletion(context.Background(), &backends.Request{Body: []byte(body), Model: "qwen"})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Strategy != "mask" {
		t.Errorf("strategy = %q, want mask", resp.Strategy)
	}
	want := `{"id":"chatcmpl-ID","object":"chat.completion","created":1700000000,"model":"qwen","choices":[{"index":0,"message":{"role":"assistant","content":null,"tool_calls":[{"id":"call_ID","type":"function","function":{"name":"get_time","arguments":"{\"tz\":\"UTC\"}"}}]},"finish_reason":"tool_calls","logprobs":null}],"usage":{"prompt_tokens":40,"completion_tokens":9,"total_tokens":49,"prompt_tokens_details":{"cached_tokens":0}}}`
	if diff := cmp.Diff(want, stable(resp.Body)); diff != "" {
		t.Errorf("body (-want +got):\n%s", diff)
	}
	var sent struct {
		Format json.RawMessage `json:"format"`
		Tools  []json.RawMessage
	}
	if err := json.Unmarshal(f.lastBody(), &sent); err != nil {
		t.Fatal(err)
	}
	wantFormat := `{"type":"object","properties":{"name":{"type":"string","enum":["get_weather","get_time"]},"arguments":{"type":"object"}},"required":["name","arguments"]}`
	if string(sent.Format) != wantFormat || len(sent.Tools) != 2 {
		t.Errorf("sent format %s and %d tools", sent.Format, len(sent.Tools))
	}
}
func TestChatCompletion_AutoToolsSayRemove(t *testing.T) {
	f := newFake(t, ndjson(`{"message":{"role":"assistant","content":"","tool_calls":[{"id":"call_q1","function":{"index":0,"name":"get_time","arguments":{"tz":"UTC"}}}]},"done":true,"done_reason":"stop"}`))
	b := newBackend(t, f.URL, Options{})
	body := `{"model":"qwen","messages":[{"role":"user","content":"time?"}],"tools":[` + timeTool + `]}`
	resp, err := b.ChatCompletion(context.Background(), &backends.Request{Body: []byte(body)})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Strategy != "remove" || !bytes.Contains(resp.Body, []byte(`"id":"call_q1"`)) || !bytes.Contains(resp.Body, []byte(`"finish_reason":"tool_calls"`)) {
		t.Errorf("strategy %q, body %s", resp.Strategy, resp.Body)
	}
}
func TestChatCompletion_EstimatesCachedTokens(t *testing.T) {
	f := newFake(t, ndjson(`{"message":{"role":"assistant","content":"Hello!"},"done":true,"done_reason":"stop","prompt_eval_count":100,"eval_count":3}`))
	b := newBackend(t, f.URL, Options{})
	cached := func(body string) int {
		t.Helper()
		resp, err := b.ChatCompletion(context.Background(), &backends.Request{Body: []byte(body)})
		if err != nil {
			t.Fatal(err)
		}
		var c struct {
			Usage struct {
				PromptTokensDetails struct {
					CachedTokens int `json:"cached_tokens"`
				} `json:"prompt_tokens_details"`
			} `json:"usage"`
		}
		if err := json.Unmarshal(resp.Body, &c); err != nil {
			t.Fatal(err)
		}
		return c.Usage.PromptTokensDetails.CachedTokens
	}
	turn1 := `{"model":"qwen","messages":[{"role":"system","content":"` + strings.Repeat("long system prompt ", 50) + `"},{"role":"user","content":"hi"}]}`
	turn2 := strings.Replace(turn1, `"content":"hi"}]`, `"content":"hi"},{"role":"assistant","content":"Hello!"},{"role":"user","content":"more"}]`, 1)
	if got := cached(turn1); got != 0 {
		t.Errorf("first request: cached %d, want 0", got)
	}
	if got := cached(turn2); got < 90 || got >= 100 {
		t.Errorf("next turn: cached %d of 100, want most of them", got)
	}
	if got := cached(turn2); got != 99 {
		t.Errorf("repeated request: cached %d, want 99 (Ollama evaluates at least one token)", got)
	}
}
func TestListModelsAndPing(t *testing.T) {
	f := newFake(t, ndjson())
	b := newBackend(t, f.URL, Options{})
	got, err := b.ListModels(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"qwen2.5:0.5b", "llama3.2:1b"}, got); diff != "" {
		t.Errorf("models (-want +got):\n%s", diff)
	}
	if err := b.Ping(context.Background()); err != nil {
		t.Errorf("Ping: %v", err)
	}
}
func TestNew_RejectsBadURLs(t *testing.T) {
	for _, u := range []string{"", "localhost:11434", "ftp://h", "http://127.0.0.1:11434/v1", "http://h/api/"} {
		if _, err := New(Options{Name: "x", BaseURL: u}); err == nil {
			t.Errorf("New(%q) succeeded", u)
		}
	}
	if _, err := New(Options{Name: "x", BaseURL: "http://127.0.0.1:11434/"}); err != nil {
		t.Errorf("server root refused: %v", err)
	}
}
func TestErrors_Classified(t *testing.T) {
	for _, tc := range []struct {
		name       string
		handler    http.HandlerFunc
		wantStatus int
		wantCode   string
		wantMsg    string
	}{
		{"model_not_found", status(404, `{"error":"model \"qwen\" not found, try pulling it first"}`), 404, "model_not_found", `model "qwen" does not exist`},
		{"model_not_found_short", status(404, `{"error":"model 'qwen' not found"}`), 404, "model_not_found", `model "qwen"`},
		{"wrong_url", status(404, `404 page not found`), 502, "upstream_not_found", "server root"},
		{"bad_request_passes", status(400, `{"error":"registry.ollama.ai/library/qwen:latest does not support tools"}`), 400, "", "does not support tools"},
		{"busy_keeps_503", status(503, `{"error":"server busy, please try again.  maximum pending requests exceeded"}`), 503, "", "server busy"},
		{"server_error_is_502", status(500, `{"error":"llama runner process has terminated"}`), 502, "", "runner process has terminated"},
		{"error_line_in_200", ndjson(`{"error":"an error was encountered while running the model"}`), 502, "", "while running the model"},
		{"not_json", ndjson(`<html>proxy error</html>`), 502, "", "proxy error"},
	} {
		for _, stream := range []bool{false, true} {
			name := tc.name
			if stream {
				name += "/stream"
			}
			t.Run(name, func(t *testing.T) {
				f := newFake(t, tc.handler)
				b := newBackend(t, f.URL, Options{})
				_, err := b.ChatCompletion(context.Background(), &backends.Request{Body: []byte(hello), Model: "qwen", Stream: stream})
				var be *backends.Error
				if !errors.As(err, &be) {
					t.Fatalf("err = %v, want a *backends.Error", err)
				}
				if be.Status != tc.wantStatus || be.Code != tc.wantCode || !strings.Contains(be.Message, tc.wantMsg) {
					t.Errorf("got %d %q %q; want %d %q containing %q", be.Status, be.Code, be.Message, tc.wantStatus, tc.wantCode, tc.wantMsg)
				}
				noStreamGoroutines(t, 2*time.Second)
			})
		}
	}
}
func TestErrors_Unreachable(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close() // nothing listens there now: connection refused
	b := newBackend(t, "http://"+addr, Options{})
	for _, stream := range []bool{false, true} {
		_, err := b.ChatCompletion(context.Background(), &backends.Request{Body: []byte(hello), Stream: stream})
		var be *backends.Error
		if !errors.As(err, &be) || be.Status != http.StatusBadGateway || be.Code != "upstream_unreachable" {
			t.Errorf("stream=%v: err = %v, want unreachable", stream, err)
		}
	}
	if err := b.Ping(context.Background()); err == nil {
		t.Error("Ping succeeded")
	}
	if _, err := b.ListModels(context.Background()); err == nil {
		t.Error("ListModels succeeded")
	}
}
func TestErrors_SlowHeadersTimeOut(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	f := newFake(t, func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	})
	b := newBackend(t, f.URL, Options{Timeout: 50 * time.Millisecond})
	for _, stream := range []bool{false, true} {
		_, err := b.ChatCompletion(context.Background(), &backends.Request{Body: []byte(hello), Stream: stream})
		var be *backends.Error
		if !errors.As(err, &be) || be.Status != http.StatusGatewayTimeout || be.Code != "upstream_timeout" {
			t.Errorf("stream=%v: err = %v, want a 504", stream, err)
		}
	}
	noStreamGoroutines(t, 2*time.Second)
}
