package gateway_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/maskgate/maskgate/backends/openaicompat"
	"github.com/maskgate/maskgate/gateway"
	"github.com/maskgate/maskgate/gateway/observe"
	"github.com/maskgate/maskgate/toolsearch/state"
)

// fakeEngine is an OpenAI-compatible upstream with a prefix cache of its own, for the
// operator's views (request log, live statistics, dashboard, traces): its prompt is the
// request's tools then its messages, as a chat template lays them out; a token is 4
// bytes; the cached tokens are the longest prefix the prompt shares with any prompt it
// saw, in blocks of 16 tokens, as vLLM counts them. Each call answers with the next
// scripted reply (a text, or a tool call), then "ok, done here".
type fakeEngine struct {
	*httptest.Server
	mu           sync.Mutex
	prompts      []string
	script       []fakeReply
	traceparents []string
	calls        int
}

type fakeReply struct {
	text       string
	call, args string
}

const fakeModel = "engine-model-v1"

func newFakeEngine(t testing.TB, script ...fakeReply) *fakeEngine {
	e := &fakeEngine{script: script}
	e.Server = httptest.NewServer(http.HandlerFunc(e.serve(t)))
	t.Cleanup(e.Close)
	return e
}

// evict empties the engine's cache.
func (e *fakeEngine) evict() {
	e.mu.Lock()
	e.prompts = nil
	e.mu.Unlock()
}

func (e *fakeEngine) seenTraceparents() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]string(nil), e.traceparents...)
}

func (e *fakeEngine) serve(t testing.TB) func(http.ResponseWriter, *http.Request) {
	return func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		var body struct {
			Tools    json.RawMessage `json:"tools"`
			Messages json.RawMessage `json:"messages"`
			Stream   bool            `json:"stream"`
		}
		if err := json.Unmarshal(raw, &body); err != nil {
			http.Error(w, `{"error":{"message":"bad json"}}`, 400)
			return
		}
		prompt := string(body.Tools) + string(body.Messages)
		e.mu.Lock()
		e.calls++
		e.traceparents = append(e.traceparents, r.Header.Get("traceparent"))
		best := 0
		for _, p := range e.prompts {
			n := 0
			for n < len(p) && n < len(prompt) && p[n] == prompt[n] {
				n++
			}
			best = max(best, n)
		}
		e.prompts = append(e.prompts, prompt)
		reply := fakeReply{text: "ok, done here"}
		if len(e.script) > 0 {
			reply, e.script = e.script[0], e.script[1:]
		}
		e.mu.Unlock()
		promptTokens := len(prompt) / 4
		cached := min(best/4/16*16, promptTokens)
		if body.Stream {
			w.Header().Set("Content-Type", "text/event-stream")
			for _, ev := range streamChunks(reply, promptTokens, cached) {
				fmt.Fprintf(w, "data: %s\n\n", ev)
				w.(http.Flusher).Flush()
			}
			fmt.Fprint(w, "data: [DONE]\n\n")
			return
		}
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, opsCompletion(reply, promptTokens, cached))
	}
}

// streamChunks is r as a stream: the role, the text in words (or the call), the finish,
// then the usage.
func streamChunks(r fakeReply, prompt, cached int) []string {
	chunk := func(delta any, finish any, usage any) string {
		c := map[string]any{"id": "chatcmpl-fake", "object": "chat.completion.chunk", "created": 1, "model": fakeModel,
			"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}}}
		if usage != nil {
			c["choices"] = []any{}
			c["usage"] = usage
		}
		b, _ := json.Marshal(c)
		return string(b)
	}
	out := []string{chunk(map[string]any{"role": "assistant"}, nil, nil)}
	finish, completion := "stop", 0
	if r.call != "" {
		out = append(out, chunk(map[string]any{"tool_calls": []any{map[string]any{"index": 0, "id": "call_" + r.call, "type": "function",
			"function": map[string]any{"name": r.call, "arguments": r.args}}}}, nil, nil))
		finish, completion = "tool_calls", 8
	} else {
		for _, word := range strings.SplitAfter(r.text, " ") {
			out = append(out, chunk(map[string]any{"content": word}, nil, nil))
			completion++
		}
	}
	out = append(out, chunk(map[string]any{}, finish, nil))
	return append(out, chunk(nil, nil, map[string]any{"prompt_tokens": prompt, "completion_tokens": completion,
		"total_tokens": prompt + completion, "prompt_tokens_details": map[string]any{"cached_tokens": cached}}))
}

func opsCompletion(r fakeReply, prompt, cached int) string {
	msg := map[string]any{"role": "assistant", "content": r.text}
	finish := "stop"
	completion := 1 + len(r.text)/4
	if r.call != "" {
		msg["content"] = nil
		msg["tool_calls"] = []any{map[string]any{"id": "call_" + r.call, "type": "function",
			"function": map[string]any{"name": r.call, "arguments": r.args}}}
		finish = "tool_calls"
		completion = 8
	}
	b, _ := json.Marshal(map[string]any{
		"id": "chatcmpl-fake", "object": "chat.completion", "created": 1, "model": fakeModel,
		"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": finish}},
		"usage": map[string]any{"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion,
			"prompt_tokens_details": map[string]any{"cached_tokens": cached}},
	})
	return string(b)
}

// opsGateway is a gateway with an admin key in front of a fake engine, managing tools
// over the 25-tool catalog (strategy remove: the engine cannot constrain) for model m1,
// and passing model m2 through.
type opsGateway struct {
	*httptest.Server
	gw  *gateway.Server
	reg *prometheus.Registry
}

const testAdminKey = "admin-key-for-tests-0123456789"

func newOpsGateway(t testing.TB, e *fakeEngine, edit func(*gateway.Options, *openaicompat.Options)) *opsGateway {
	t.Helper()
	bo := openaicompat.Options{Name: "vllm-a", BaseURL: e.URL + "/v1", ReportsCache: true}
	reg := prometheus.NewRegistry()
	o := gateway.Options{Registry: reg, AdminKey: testAdminKey, Strategy: gateway.StrategyRemove,
		State: state.NewMemory(state.Options{})}
	if tt, ok := t.(*testing.T); ok {
		o.Tools = bigCatalog(tt)
	}
	if edit != nil {
		edit(&o, &bo)
	}
	be, err := openaicompat.New(bo)
	if err != nil {
		t.Fatal(err)
	}
	o.Upstreams = []gateway.Upstream{{Name: "vllm-a", Kind: "vllm", Models: []string{"m1", "m2"}, Backend: be}}
	gw := gateway.New(o)
	srv := httptest.NewServer(gw)
	t.Cleanup(srv.Close)
	return &opsGateway{Server: srv, gw: gw, reg: reg}
}

// chat posts a Chat Completions body under thread (none when empty) and returns the
// status and the answer.
func (g *opsGateway) chat(t testing.TB, body, thread string) (int, []byte) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, g.URL+"/v1/chat/completions", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	if thread != "" {
		req.Header.Set("X-Thread-Id", thread)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	g.waitLogged(t, resp.Header.Get(gateway.HeaderRequestID))
	return resp.StatusCode, out
}

// waitLoggedN waits until the request log holds n requests.
func (g *opsGateway) waitLoggedN(t testing.TB, n int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for len(g.requestLog(t, n)) < n {
		if time.Now().After(deadline) {
			t.Fatalf("the request log holds fewer than %d requests", n)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// waitLogged waits until the request id is in the request log: a client may have its
// whole answer before the gateway has recorded the request.
func (g *opsGateway) waitLogged(t testing.TB, id string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		for _, r := range g.requestLog(t, 100) {
			if r.RequestID == id {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("request %s is not in the request log", id)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// admin GETs an admin path with the bearer key and decodes the JSON answer into out.
func (g *opsGateway) admin(t testing.TB, path string, out any) int {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, g.URL+path, nil)
	req.Header.Set("Authorization", "Bearer "+testAdminKey)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if out != nil {
		if err := json.Unmarshal(b, out); err != nil {
			t.Fatalf("GET %s: %v\n%s", path, err, b)
		}
	}
	return resp.StatusCode
}

// requestLog is GET /admin/requests.
func (g *opsGateway) requestLog(t testing.TB, limit int) []observe.RequestRecord {
	t.Helper()
	var out struct {
		Data []observe.RequestRecord `json:"data"`
	}
	if code := g.admin(t, fmt.Sprintf("/admin/requests?limit=%d", limit), &out); code != 200 {
		t.Fatalf("GET /admin/requests: %d", code)
	}
	return out.Data
}

// opsChat builds a Chat Completions body from alternating user and assistant
// texts (the first a user's).
func opsChat(model string, stream bool, texts ...string) string {
	msgs := make([]map[string]string, len(texts))
	for i, s := range texts {
		role := "user"
		if i%2 == 1 {
			role = "assistant"
		}
		msgs[i] = map[string]string{"role": role, "content": s}
	}
	body := map[string]any{"model": model, "messages": msgs}
	if stream {
		body["stream"] = true
		body["stream_options"] = map[string]bool{"include_usage": true}
	}
	b, _ := json.Marshal(body)
	return string(b)
}

// metricSum is the sum of a counter family's samples in /metrics.
func metricSum(t testing.TB, reg *prometheus.Registry, name string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	sum := 0.0
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			sum += m.GetCounter().GetValue()
		}
	}
	return sum
}
