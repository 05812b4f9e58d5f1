package gateway_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/maskgate/maskgate/backends/anthropic"
	"github.com/maskgate/maskgate/backends/openaicompat"
	"github.com/maskgate/maskgate/gateway"
	"github.com/maskgate/maskgate/tenant"
)

// postPath posts body to path on the gateway and returns the answer.
func postPath(t testing.TB, url, path, body string, header ...string) (*http.Response, []byte) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, url+path, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("read response: %v", err)
	}
	return resp, out
}

// pathRecorder answers each path with its reply and records the paths asked.
type pathRecorder struct {
	mu    sync.Mutex
	paths []string
}

func (p *pathRecorder) reply(replies map[string]http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		p.mu.Lock()
		p.paths = append(p.paths, r.URL.Path)
		p.mu.Unlock()
		if h, ok := replies[r.URL.Path]; ok {
			h(w, r)
			return
		}
		replyJSON(404, `{"error":{"message":"no such path","type":"invalid_request_error"}}`)(w, r)
	}
}

func (p *pathRecorder) count() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.paths)
}

func (p *pathRecorder) last() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.paths) == 0 {
		return ""
	}
	return p.paths[len(p.paths)-1]
}

const (
	embeddingsAnswer = `{"object":"list","data":[{"object":"embedding","index":0,"embedding":[0.5,-0.25]}],"model":"m1","usage":{"prompt_tokens":7,"total_tokens":7}}`
	completionAnswer = `{"id":"cmpl-1","object":"text_completion","created":1,"model":"m1","choices":[{"index":0,"text":"x = 1","finish_reason":"stop","logprobs":null}],"usage":{"prompt_tokens":11,"completion_tokens":3,"total_tokens":14}}`
	rerankAnswer     = `{"id":"rerank-1","model":"m1","results":[{"index":1,"relevance_score":0.9},{"index":0,"relevance_score":0.1}],"usage":{"total_tokens":23}}`
)

// TestEndpoints_PassedAsSentAndCounted: embeddings, legacy completions (fill in the
// middle with suffix), rerank and score reach the backend's own endpoint with the
// client's bytes, exactly, and come back as the backend sent them, their tokens in the
// metrics under the endpoint's door and in the accounting headers.
func TestEndpoints_PassedAsSentAndCounted(t *testing.T) {
	var rec pathRecorder
	up := newUpstream(t, rec.reply(map[string]http.HandlerFunc{
		"/v1/embeddings":  replyJSON(200, embeddingsAnswer),
		"/v1/completions": replyJSON(200, completionAnswer),
		"/v1/rerank":      replyJSON(200, rerankAnswer),
		"/v1/score":       replyJSON(200, rerankAnswer),
	}))
	gw := gatewayFor(t, up, func(o *gateway.Options, _ *openaicompat.Options) { o.AdminKey = testAdminKey })
	for _, c := range []struct {
		endpoint, body, answer string
		prompt, completion     float64
	}{
		// Odd spacing, members in an odd order and ones the gateway knows nothing of:
		// the engine must get them as they are.
		{"embeddings", `{ "input" : ["a", "b"],"model":"m1", "encoding_format":"float","x_unknown":{"k":[1,2]} }`, embeddingsAnswer, 7, 0},
		{"completions", `{"model":"m1","prompt":"def f():\n    ","suffix":"\n    return x\n","max_tokens":16,  "temperature":0}`, completionAnswer, 11, 3},
		{"rerank", `{"model":"m1","query":"q","documents":["d0","d1"],"top_n":2}`, rerankAnswer, 23, 0},
		{"score", `{"model":"m1","text_1":"q","text_2":["d0","d1"]}`, rerankAnswer, 23, 0},
	} {
		t.Run(c.endpoint, func(t *testing.T) {
			resp, out := postPath(t, gw.URL, "/v1/"+c.endpoint, c.body)
			if resp.StatusCode != 200 || string(out) != c.answer {
				t.Fatalf("status %d body %s, want 200 %s", resp.StatusCode, out, c.answer)
			}
			if got := string(up.lastBody()); got != c.body {
				t.Errorf("upstream got\n%s\nwant the client's bytes\n%s", got, c.body)
			}
			if p := rec.last(); p != "/v1/"+c.endpoint {
				t.Errorf("upstream path %q", p)
			}
			if got := resp.Header.Get(gateway.HeaderPromptTokens); got != strconv.Itoa(int(c.prompt)) {
				t.Errorf("%s = %q, want %v", gateway.HeaderPromptTokens, got, c.prompt)
			}
			labels := map[string]string{"backend": "up", "model": "m1", "strategy": "none", "door": c.endpoint}
			if got := metricValue(t, gw, "maskgate_prompt_tokens_total", labels); got != c.prompt {
				t.Errorf("prompt tokens metric %v, want %v", got, c.prompt)
			}
			if got := metricValue(t, gw, "maskgate_completion_tokens_total", labels); got != c.completion {
				t.Errorf("completion tokens metric %v, want %v", got, c.completion)
			}
			if got := metricValue(t, gw, "maskgate_requests_total", map[string]string{"backend": "up", "model": "m1", "status": "200", "door": c.endpoint}); got != 1 {
				t.Errorf("requests metric %v, want 1", got)
			}
		})
	}

	// The request log has each, with its tokens.
	req, _ := http.NewRequest(http.MethodGet, gw.URL+"/admin/requests", nil)
	req.Header.Set("Authorization", "Bearer "+testAdminKey)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var log struct {
		Data []struct {
			Door, Model, Backend string
			Status               int
			PromptTokens         *int `json:"prompt_tokens"`
			CompletionTokens     *int `json:"completion_tokens"`
		}
	}
	if err := json.NewDecoder(resp.Body).Decode(&log); err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, r := range log.Data {
		if r.PromptTokens != nil && r.CompletionTokens != nil {
			got[r.Door] = fmt.Sprintf("%s %s %d %d+%d", r.Model, r.Backend, r.Status, *r.PromptTokens, *r.CompletionTokens)
		}
	}
	want := map[string]string{"embeddings": "m1 up 200 7+0", "completions": "m1 up 200 11+3", "rerank": "m1 up 200 23+0", "score": "m1 up 200 23+0"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("request log %v, want %v", got, want)
	}
}

// TestEndpoints_CompletionStreamCountedWithoutUsageForTheClient: a streamed legacy
// completion that does not ask for usage is asked for it upstream (the one edit), and
// the client gets the stream without it, [DONE] at its end; the tokens are counted.
func TestEndpoints_CompletionStreamCountedWithoutUsageForTheClient(t *testing.T) {
	chunk := func(text, finish string) string {
		f := "null"
		if finish != "" {
			f = `"` + finish + `"`
		}
		return `{"id":"cmpl-1","object":"text_completion","created":1,"model":"m1","choices":[{"index":0,"text":"` + text + `","finish_reason":` + f + `}]}`
	}
	usage := `{"id":"cmpl-1","object":"text_completion","created":1,"model":"m1","choices":[],"usage":{"prompt_tokens":5,"completion_tokens":2,"total_tokens":7}}`
	up := newUpstream(t, replySSE([]string{chunk("he", ""), chunk("llo", "length"), usage}, true))
	gw := gatewayFor(t, up)

	body := `{"model":"m1","prompt":"say","max_tokens":2,"stream":true}`
	resp, out := postPath(t, gw.URL, "/v1/completions", body)
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		t.Fatalf("status %d %s: %s", resp.StatusCode, resp.Header.Get("Content-Type"), out)
	}
	want := []string{chunk("he", ""), chunk("llo", "length"), "[DONE]"}
	if got := sseEvents(out); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("client stream\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if got, want := string(up.lastBody()), `{"model":"m1","prompt":"say","max_tokens":2,"stream":true,"stream_options":{"include_usage":true}}`; got != want {
		t.Errorf("upstream got %s, want %s", got, want)
	}
	labels := map[string]string{"backend": "up", "model": "m1", "strategy": "none", "door": "completions"}
	if p, c := metricValue(t, gw, "maskgate_prompt_tokens_total", labels), metricValue(t, gw, "maskgate_completion_tokens_total", labels); p != 5 || c != 2 {
		t.Errorf("tokens %v+%v, want 5+2", p, c)
	}

	// A client that asks for usage gets the usage chunk, and its body goes as it is.
	body = `{"model":"m1","prompt":"say","stream":true,"stream_options":{"include_usage":true}}`
	_, out = postPath(t, gw.URL, "/v1/completions", body)
	if got := sseEvents(out); len(got) != 4 || got[2] != usage {
		t.Errorf("with include_usage: %q", got)
	}
	if got := string(up.lastBody()); got != body {
		t.Errorf("upstream got %s, want the client's bytes", got)
	}
}

// TestEndpoints_Refusals: each refusal in OpenAI's envelope, before anything reaches an
// upstream that cannot or must not serve it.
func TestEndpoints_Refusals(t *testing.T) {
	var rec pathRecorder
	up := newUpstream(t, rec.reply(map[string]http.HandlerFunc{"/v1/embeddings": replyJSON(200, embeddingsAnswer)}))
	compat, err := openaicompat.New(openaicompat.Options{Name: "up", BaseURL: up.URL + "/v1"})
	if err != nil {
		t.Fatal(err)
	}
	claude, err := anthropic.New(anthropic.Options{Name: "claude", BaseURL: up.URL, APIKey: "sk-ant-x"})
	if err != nil {
		t.Fatal(err)
	}
	gw := httptest.NewServer(gateway.New(gateway.Options{
		Upstreams: []gateway.Upstream{
			{Name: "up", Kind: "vllm", Models: []string{"m1"}, Backend: compat},
			{Name: "claude", Kind: "anthropic", Models: []string{"claude-x"}, Backend: claude},
		},
		Keys: testKeys(func(k *tenant.Key) {
			if k.Name == "bob" {
				k.Models = []string{"claude-x"}
			}
		}),
	}))
	t.Cleanup(gw.Close)
	alice, bob := "Bearer "+aliceKey, "Bearer "+bobKey

	for _, c := range []struct {
		name, path, body, auth string
		status                 int
		typ, code, param, says string
	}{
		{"no key", "/v1/embeddings", `{"model":"m1","input":"a"}`, "", 401, "authentication_error", "invalid_api_key", "", "key"},
		{"unknown model", "/v1/embeddings", `{"model":"nope","input":"a"}`, alice, 404, "invalid_request_error", "model_not_found", "model", `"nope"`},
		{"model outside the key's", "/v1/embeddings", `{"model":"m1","input":"a"}`, bob, 403, "permission_error", "model_not_allowed", "model", "m1"},
		{"anthropic serves no embeddings", "/v1/embeddings", `{"model":"claude-x","input":"a"}`, alice, 404, "invalid_request_error", "unsupported_endpoint", "model", "POST /v1/embeddings"},
		{"anthropic serves no completions", "/v1/completions", `{"model":"claude-x","prompt":"a","stream":true}`, alice, 404, "invalid_request_error", "unsupported_endpoint", "model", "POST /v1/completions"},
		{"no model", "/v1/rerank", `{"query":"q","documents":[]}`, alice, 400, "invalid_request_error", "", "model", "model"},
		{"model not a string", "/v1/score", `{"model":7}`, alice, 400, "invalid_request_error", "", "model", "string"},
		{"not JSON", "/v1/embeddings", `{"model":"m1",`, alice, 400, "invalid_request_error", "", "", "not valid JSON"},
		{"stream not a boolean", "/v1/completions", `{"model":"m1","prompt":"a","stream":"yes"}`, alice, 400, "invalid_request_error", "", "stream", "boolean"},
	} {
		t.Run(c.name, func(t *testing.T) {
			before := rec.count()
			resp, out := postPath(t, gw.URL, c.path, c.body, "Authorization", c.auth)
			var env struct {
				Error struct {
					Message string  `json:"message"`
					Type    string  `json:"type"`
					Code    *string `json:"code"`
					Param   *string `json:"param"`
				} `json:"error"`
			}
			if err := json.Unmarshal(out, &env); err != nil || resp.StatusCode != c.status {
				t.Fatalf("status %d body %s, want %d in OpenAI's envelope", resp.StatusCode, out, c.status)
			}
			e := env.Error
			if e.Type != c.typ || deref(e.Code) != c.code || deref(e.Param) != c.param || !strings.Contains(e.Message, c.says) {
				t.Errorf("error %s, want type %s code %q param %q saying %q", out, c.typ, c.code, c.param, c.says)
			}
			if after := rec.count(); after != before {
				t.Errorf("the upstream was asked %d times", after-before)
			}
		})
	}

	resp, out := get(t, gw.URL+"/v1/embeddings")
	if resp.StatusCode != 405 || resp.Header.Get("Allow") != "POST" || !strings.Contains(string(out), `"invalid_request_error"`) {
		t.Errorf("GET /v1/embeddings: %d %s", resp.StatusCode, out)
	}
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// TestEndpoints_AliasNamesTheBackendModel: a model alias sends the backend its own
// model name, the one edit of the client's bytes.
func TestEndpoints_AliasNamesTheBackendModel(t *testing.T) {
	up := newUpstream(t, replyJSON(200, embeddingsAnswer))
	gw := gatewayFor(t, up, func(o *gateway.Options, _ *openaicompat.Options) {
		o.Aliases = map[string]gateway.Alias{"embedder": {Profile: gateway.DefaultProfile, Model: "m1"}}
	})
	resp, out := postPath(t, gw.URL, "/v1/embeddings", `{"input": "a",  "model":"embedder","dimensions":2}`)
	if resp.StatusCode != 200 {
		t.Fatalf("status %d %s", resp.StatusCode, out)
	}
	if got, want := string(up.lastBody()), `{"input": "a",  "model":"m1","dimensions":2}`; got != want {
		t.Errorf("upstream got %s, want %s", got, want)
	}
	if got := metricValue(t, gw, "maskgate_prompt_tokens_total", map[string]string{"backend": "up", "model": "m1", "strategy": "none", "door": "embeddings"}); got != 7 {
		t.Errorf("prompt tokens under the backend model %v, want 7", got)
	}
}
