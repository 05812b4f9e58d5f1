package gateway_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/maskgate/maskgate/backends/llamacpp"
	"github.com/maskgate/maskgate/gateway"
	"github.com/maskgate/maskgate/gateway/observe"
	"github.com/maskgate/maskgate/internal/enginetest"
	"github.com/maskgate/maskgate/toolsearch/state"
)

// The dashboard over a real engine: llama-server (built from source by enginetest)
// serving the tiny random-weight model with one slot, reached through the llamacpp
// backend, as a gateway configured with kind: llamacpp reaches it.

// noCalls is the llamacpp backend's grammar hook: it bans the Hermes call trigger (one
// token of the tiny model's vocabulary), so that no answer of the random model starts a
// call. Each request is then one upstream call whatever the weights say, and the test can
// count what it sent; the backend still constrains tools, so the gateway masks (the
// engine sees the whole catalog, byte-identical on every request).
func noCalls(llamacpp.GrammarRequest) (json.RawMessage, error) {
	return json.RawMessage(`{"logit_bias":[["<tool_call>",false]]}`), nil
}

// engineBody is a chat of turns (user first, then alternating) after the shared system
// prompt, answered in at most 4 tokens: the random model's words mean nothing, the
// prompts are what the test is about.
func engineBody(model string, stream bool, seed int, turns ...string) string {
	msgs := []map[string]string{{"role": "system", "content": systemPrompt}}
	for i, s := range turns {
		role := "user"
		if i%2 == 1 {
			role = "assistant"
		}
		msgs = append(msgs, map[string]string{"role": role, "content": s})
	}
	body := map[string]any{"model": model, "messages": msgs, "max_tokens": 4, "seed": seed}
	if stream {
		body["stream"] = true
		body["stream_options"] = map[string]bool{"include_usage": true}
	}
	b, _ := json.Marshal(body)
	return string(b)
}

// metricsSum is the sum over every series of name on the gateway's GET /metrics.
func metricsSum(t *testing.T, base, name string) float64 {
	t.Helper()
	resp, err := http.Get(base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	sum := 0.0
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if rest, ok := strings.CutPrefix(line, name); ok && (strings.HasPrefix(rest, "{") || strings.HasPrefix(rest, " ")) {
			v, err := strconv.ParseFloat(line[strings.LastIndexByte(line, ' ')+1:], 64)
			if err != nil {
				t.Fatalf("/metrics: %q: %v", line, err)
			}
			sum += v
		}
	}
	return sum
}

// TestDashboard_RealEngine: the dashboard, in a real browser, over a gateway serving
// llama-server. After a scripted conversation — plain chats relayed to the engine, then
// two threads over a 25-tool catalog the gateway masks — the page shows the number of
// requests the test sent, a hit rate within 0.001 of what /metrics counts and above the
// floor the script's shared prefixes promise, the threads it opened, a live row per
// profile and strategy; the screenshot is kept as the test's artifact (and written to
// docs/dashboard.png, the README's, with MASKGATE_WRITE_SCREENSHOT=1).
func TestDashboard_RealEngine(t *testing.T) {
	chromiumPath(t) // before the engine starts: without chromium the test fails at once
	ls := enginetest.Llama(t)
	be, err := llamacpp.New(llamacpp.Options{Name: "llama", BaseURL: ls.URL, Timeout: time.Minute, Grammar: noCalls})
	if err != nil {
		t.Fatal(err)
	}
	counter, ring := dashboardKeys(t)
	srv := httptest.NewServer(gateway.New(gateway.Options{
		Upstreams: []gateway.Upstream{{Name: "llama", Kind: "llamacpp", Models: []string{ls.Model}, Backend: be}},
		AdminKey:  testAdminKey, Keys: ring, Tokens: counter,
		Tools: bigCatalog(t), State: state.NewMemory(state.Options{}), Strategy: gateway.StrategyMask,
		Profiles: []*gateway.Profile{{Name: "plain"}},
	}))
	t.Cleanup(srv.Close)

	spread := time.Duration(0)
	if os.Getenv("MASKGATE_WRITE_SCREENSHOT") == "1" {
		spread = 2 * time.Second // the README's screenshot: a chart with some history
	}
	sent := 0
	send := func(key, thread, body string, want int, strategy gateway.Strategy) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, srv.URL+"/v1/chat/completions", strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+key)
		if thread != "" {
			req.Header.Set("X-Thread-Id", thread)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		out, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		sent++
		if resp.StatusCode != want {
			t.Fatalf("request %d: %d %s", sent, resp.StatusCode, out)
		}
		if got := resp.Header.Get(gateway.HeaderStrategy); want == 200 && got != string(strategy) {
			t.Fatalf("request %d: strategy %q, want %q", sent, got, strategy)
		}
		time.Sleep(spread)
	}
	start := time.Now()
	// Plain chats first: one conversation, each request the previous one plus a turn.
	plain := []string{"Translate the release notes."}
	for i := range 4 {
		send(keyTeamB, "", engineBody(ls.Model, i%2 == 1, i, plain...), 200, gateway.StrategyEager)
		plain = append(plain, "ok", fmt.Sprintf("Part %d, please.", i+2))
	}
	// Then two threads over the catalog, taking turns: under mask both threads' prompts
	// begin with the same system prompt and the same whole catalog.
	alpha, beta := []string{"Plan the release of version 2."}, []string{"Summarise yesterday's incidents."}
	for i := range 4 {
		send(keyTeamA, "alpha", engineBody(ls.Model, i == 1, 10+i, alpha...), 200, gateway.StrategyMask)
		alpha = append(alpha, "ok", fmt.Sprintf("Next step %d.", i+1))
		if i < 3 {
			send(keyTeamA, "beta", engineBody(ls.Model, i == 2, 20+i, beta...), 200, gateway.StrategyMask)
			beta = append(beta, "ok", fmt.Sprintf("And the follow-up number %d?", i+1))
		}
	}
	send(keyTeamB, "", engineBody("nope", false, 0, "hi"), 404, "")
	t.Logf("%d requests to llama-server in %v", sent, time.Since(start).Round(time.Millisecond))

	(&opsGateway{Server: srv}).waitLoggedN(t, sent) // every request recorded, in /metrics too
	hitRate := metricsSum(t, srv.URL, "maskgate_cached_tokens_total") / metricsSum(t, srv.URL, "maskgate_prompt_tokens_total")
	// The floor the script promises: of its 11 answered requests only the first of each
	// block can start cold (and under mask even that one finds the system prompt the
	// plain chats left in the slot); every other one extends a prompt the engine's one
	// slot holds, or shares with it the system prompt and the whole catalog, which is
	// nearly all of it. Counting the cold two as wholly computed and the rest as only
	// four fifths cached still gives over 0.6.
	const floor = 0.6
	if hitRate < floor {
		t.Errorf("/metrics: hit rate %.3f, below the %.1f the shared prefixes promise", hitRate, floor)
	}

	var threads struct {
		Threads int `json:"threads"`
	}
	(&opsGateway{Server: srv}).admin(t, "/admin/threads", &threads)
	held := threads.Threads

	got, png := openDashboard(t, srv.URL, sent, 25)
	t.Logf("hit rate: page %.4f (%s), /metrics %.4f", got.HitRate, got.HitRateText, hitRate)
	if got.SignInStatus != 401 || len(got.Cookie) != 1 || !got.Cookie[0].HTTPOnly || got.Cookie[0].SameSite != "Strict" {
		t.Errorf("sign-in: status %d, cookies %+v", got.SignInStatus, got.Cookie)
	}
	if got.Requests != sent || got.LogRows != sent {
		t.Errorf("the page shows %d requests and %d log rows, want the %d sent", got.Requests, got.LogRows, sent)
	}
	if math.Abs(got.HitRate-hitRate) > 0.001 {
		t.Errorf("the page's hit rate %v (%s), /metrics says %v", got.HitRate, got.HitRateText, hitRate)
	}
	// The store holds a thread once it has something to keep (a loaded tool, a hidden
	// exchange); this script never calls a tool, so the page must show the store's count.
	if got.Threads != held || got.ThreadsAfter != 0 || !strings.HasPrefix(got.Evicted, "Evicted ") {
		t.Errorf("threads: the page showed %d, the store holds %d; after evicting all %d (%s)", got.Threads, held, got.ThreadsAfter, got.Evicted)
	}
	newThreads := 0
	for _, m := range got.Misses {
		if m == observe.MissNewThread {
			newThreads++
		}
	}
	if newThreads != 2 {
		t.Errorf("the request log shows %d %q misses, want one per thread: %q", newThreads, observe.MissNewThread, got.Misses)
	}
	rows := map[string]int{}
	for _, r := range got.LiveRows {
		rows[r.Backend+"/"+r.Profile+"/"+r.Strategy] = r.Requests
	}
	if rows["llama/default/mask"] != 7 || rows["llama/plain/eager"] != 4 || rows["none/plain/none"] != 1 || len(rows) != 3 {
		t.Errorf("live rows %v", rows)
	}
	if got.SearchTop != "slack_send_message" || got.ChartLines == 0 {
		t.Errorf("catalog search %q; chart lines %d", got.SearchTop, got.ChartLines)
	}
	writeScreenshot(t, png)
}
