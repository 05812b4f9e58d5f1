package gateway_test

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/maskgate/maskgate/tenant"
)

// TestLimits_EndpointsWithoutAnAnswerCountAgainstRequests: counting tokens, listing
// models and listing or searching tools generate nothing, but each is work the
// gateway does for a key (a search under hybrid search is an embeddings call), and
// they were never metered: a key with 2 requests a minute could make any number. Now
// the third in a minute is a 429 with Retry-After in the endpoint's envelope.
func TestLimits_EndpointsWithoutAnAnswerCountAgainstRequests(t *testing.T) {
	for _, c := range []struct {
		method, path, body string
		anthropic          bool
	}{
		{"GET", "/v1/models", "", false},
		{"GET", "/v1/models/m1", "", false},
		{"GET", "/v1/tools", "", false},
		{"GET", "/v1/tools/search?q=weather", "", false},
		{"POST", "/v1/responses/input_tokens", `{"model":"m1","input":"hi"}`, false},
		{"POST", "/v1/messages/count_tokens", `{"model":"m1","messages":[{"role":"user","content":"hi"}]}`, true},
	} {
		t.Run(c.path, func(t *testing.T) {
			clock := &manualClock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
			up := newUpstream(t, replyJSON(200, completionJSON))
			gw := gatewayFor(t, up, withKeys(testKeys(limited("alice", tenant.Limits{RequestsPerMinute: 2}))), withClock(clock))
			h := bearer(aliceKey)
			h["Content-Type"] = "application/json"
			for i := range 2 {
				if status, _, body := send(t, c.method, gw.URL+c.path, h, c.body); status == 429 || status >= 500 {
					t.Fatalf("request %d: %d %s", i, status, body)
				}
			}
			status, hdr, body := send(t, c.method, gw.URL+c.path, h, c.body)
			if status != 429 || hdr.Get("Retry-After") != "30" {
				t.Fatalf("third request in a minute: %d, Retry-After %q, want 429 and 30: %s", status, hdr.Get("Retry-After"), body)
			}
			var env struct {
				Type  string `json:"type"`
				Error struct {
					Type string `json:"type"`
				} `json:"error"`
			}
			if err := json.Unmarshal(body, &env); err != nil || env.Error.Type != "rate_limit_error" || (env.Type == "error") != c.anthropic {
				t.Errorf("envelope %s, want rate_limit_error in %s", body, map[bool]string{true: "Anthropic's", false: "OpenAI's"}[c.anthropic])
			}
			if status, _, _ := send(t, c.method, gw.URL+c.path, bearer(bobKey), c.body); status == 429 {
				t.Errorf("bob refused for alice's requests")
			}
		})
	}
}

// TestLimits_AbandonedStreamIsCharged: a stream the client hangs up on before the
// engine's usage arrives charged the key nothing, so tokens_per_minute never limited a
// client that abandons its streams. Now the prompt's estimate is charged: a 2,000-byte
// prompt (about 500 tokens at four bytes a token) puts a 100-token key in debt, and its
// next request is refused.
func TestLimits_AbandonedStreamIsCharged(t *testing.T) {
	clock := &manualClock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	up := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.Write([]byte(`data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m1","choices":[{"index":0,"delta":{"role":"assistant","content":"Once"},"finish_reason":null}]}` + "\n\n"))
		w.(http.Flusher).Flush()
		<-r.Context().Done() // never the usage chunk
	})
	gw := gatewayFor(t, up, withKeys(testKeys(limited("alice", tenant.Limits{TokensPerMinute: 100}))), withClock(clock))
	prompt := strings.Repeat("word ", 400)
	body := `{"model":"m1","stream":true,"messages":[{"role":"user","content":"` + prompt + `"}]}`

	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, gw.URL+"/v1/chat/completions", strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+aliceKey)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 200 {
		t.Fatalf("status %d", resp.StatusCode)
	}
	line, err := bufio.NewReader(resp.Body).ReadString('\n')
	if err != nil || !strings.Contains(line, "Once") {
		t.Fatalf("first line %q: %v", line, err)
	}
	cancel() // the client hangs up mid-stream
	resp.Body.Close()

	// The charge lands when the gateway has finished with the request.
	deadline := time.Now().Add(30 * time.Second)
	charged := 0.0
	for time.Now().Before(deadline) {
		if charged = metricValue(t, gw, "maskgate_key_tokens_total", map[string]string{"key": "alice"}); charged > 0 {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if charged < 300 || charged > 1000 {
		t.Fatalf("key_tokens_total{alice} = %v after an abandoned stream of a ~500-token prompt, want 300-1000", charged)
	}
	if status, _, body := send(t, "POST", gw.URL+"/v1/chat/completions", bearer(aliceKey), hello); status != 429 {
		t.Errorf("the next request, %v tokens in debt: %d %s, want 429", charged-100, status, body)
	}
}
