package gateway_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/maskgate/maskgate/backends/openaicompat"
	"github.com/maskgate/maskgate/gateway"
	"github.com/maskgate/maskgate/gateway/observe"
	"github.com/maskgate/maskgate/internal/nodetest"
	"github.com/maskgate/maskgate/kvcache"
	"github.com/maskgate/maskgate/tenant"
	"github.com/maskgate/maskgate/toolsearch/profile"
	"github.com/maskgate/maskgate/toolsearch/state"
	"github.com/maskgate/maskgate/toolsearch/tokens"
)

// The dashboard in a real browser: Debian's chromium, headless, driven by npm
// playwright-core (pinned in testdata/browser, installed by nodetest). Like Node, the
// browser is a requirement of the suite: without it the test fails, naming the package.

const browserDir = "testdata/browser"

// chromiumPath finds the system chromium.
func chromiumPath(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Fatal("chromium is not on PATH; the dashboard's browser test needs it: apt-get install -y chromium (scripts/test installs it as root)")
	return ""
}

const (
	keyTeamA = "sk-team-a-0123456789abcdef"
	keyTeamB = "sk-team-b-0123456789abcdef"
	keyTeamC = "sk-team-c-0123456789abcdef"
)

// dashboardKeys are the dashboard tests' token counter and keys: team-a's on the default
// profile, team-b's on "plain", team-c's on "agents".
func dashboardKeys(t *testing.T) (*tokens.Counter, *tenant.Keyring) {
	t.Helper()
	counter, err := tokens.New(tokens.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ring, err := tenant.NewKeyring([]tenant.Key{
		{Name: "team-a", Hash: tenant.HashOf(keyTeamA)},
		{Name: "team-b", Hash: tenant.HashOf(keyTeamB), Profile: "plain"},
		{Name: "team-c", Hash: tenant.HashOf(keyTeamC), Profile: "agents"},
	})
	if err != nil {
		t.Fatal(err)
	}
	return counter, ring
}

// dashboardGateway is a gateway with two engines and three keys: team-a's profile manages
// the 25-tool catalog on vllm-a (m1), team-b's has no tools and is relayed to llama-b
// (m3), team-c's ("agents") has a catalog of its own on strategy auto.
func dashboardGateway(t *testing.T) (*httptest.Server, *prometheus.Registry, *fakeEngine) {
	t.Helper()
	a := newFakeEngine(t,
		fakeReply{text: "Here is the plan for the release, step by step."},
		fakeReply{call: "search_tools", args: `{"query":"post a message to slack"}`},
		fakeReply{call: "load_tool", args: `{"toolName":"slack_send_message"}`},
		fakeReply{text: "Posted to the team channel."})
	b := newFakeEngine(t)
	counter, ring := dashboardKeys(t)
	beA, _ := openaicompat.New(openaicompat.Options{Name: "vllm-a", BaseURL: a.URL + "/v1", ReportsCache: true})
	beB, _ := openaicompat.New(openaicompat.Options{Name: "llama-b", BaseURL: b.URL + "/v1", ReportsCache: true})
	reg := prometheus.NewRegistry()
	srv := httptest.NewServer(gateway.New(gateway.Options{
		Upstreams: []gateway.Upstream{
			{Name: "vllm-a", Kind: "vllm", Models: []string{"m1"}, Backend: beA},
			{Name: "llama-b", Kind: "llamacpp", Models: []string{"m3"}, Backend: beB},
		},
		Registry: reg, AdminKey: testAdminKey, Keys: ring, Tokens: counter,
		Tools: bigCatalog(t), State: state.NewMemory(state.Options{}), Strategy: gateway.StrategyRemove,
		Profiles: []*gateway.Profile{{Name: "plain"},
			{Name: "agents", Catalog: profileCatalog(t, "agent", 40, profile.Spec{}), Strategy: gateway.StrategyAuto}},
		Chooser: &gateway.CostChooser{Model: kvcache.NewCostModel(kvcache.Options{
			Engines: map[string]kvcache.Engine{"vllm-a": {Capabilities: kvcache.Capabilities{CachesPrefixes: true}}}})},
	}))
	t.Cleanup(srv.Close)
	return srv, reg, a
}

// systemPrompt makes the prompts the size of an agent's, so the hit rate means something.
var systemPrompt = "You are the release assistant. " + strings.Repeat("Follow the team's conventions and keep answers short. ", 60)

func agentBody(model string, stream bool, turns ...string) string {
	msgs := []map[string]string{{"role": "system", "content": systemPrompt}}
	for i, s := range turns {
		role := "user"
		if i%2 == 1 {
			role = "assistant"
		}
		msgs = append(msgs, map[string]string{"role": role, "content": s})
	}
	body := map[string]any{"model": model, "messages": msgs, "max_tokens": 256}
	if stream {
		body["stream"] = true
		body["stream_options"] = map[string]bool{"include_usage": true}
	}
	b, _ := json.Marshal(body)
	return string(b)
}

// runDashboardScenario sends a scripted day's traffic and returns how many requests it
// sent.
func runDashboardScenario(t *testing.T, base string, engineA *fakeEngine) int {
	t.Helper()
	sent := 0
	send := func(key, thread, body string, want int) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, base+"/v1/chat/completions", strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+key)
		if thread != "" {
			req.Header.Set("X-Thread-Id", thread)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		out.ReadFrom(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Fatalf("request %d: %d %s", sent, resp.StatusCode, out.Bytes())
		}
		sent++
	}
	alpha := []string{"Plan the release of version 2."}
	turn := func(thread *[]string, reply, next string) {
		*thread = append(*thread, reply, next)
	}
	send(keyTeamA, "alpha", agentBody("m1", false, alpha...), 200)
	turn(&alpha, "Here is the plan for the release, step by step.", "Tell the team on slack.")
	send(keyTeamA, "alpha", agentBody("m1", true, alpha...), 200)
	turn(&alpha, "Posted to the team channel.", "Now book the retro.")
	send(keyTeamA, "alpha", agentBody("m1", true, alpha...), 200)
	beta := []string{"Summarise yesterday's incidents."}
	for i := 0; i < 3; i++ {
		send(keyTeamA, "beta", agentBody("m1", false, beta...), 200)
		turn(&beta, "ok, done here", fmt.Sprintf("And the follow-up number %d?", i+1))
	}
	for i := 0; i < 2; i++ {
		turn(&alpha, "ok, done here", fmt.Sprintf("Next step %d.", i+1))
		send(keyTeamA, "alpha", agentBody("m1", i == 1, alpha...), 200)
	}
	engineA.evict() // the engine restarted: its cache is gone
	turn(&alpha, "ok, done here", "Anything left?")
	send(keyTeamA, "alpha", agentBody("m1", false, alpha...), 200)
	plain := []string{"Translate the release notes."}
	for i := 0; i < 5; i++ {
		send(keyTeamB, "", agentBody("m3", i%2 == 0, plain...), 200)
		turn(&plain, "ok, done here", fmt.Sprintf("Part %d, please.", i+2))
	}
	send(keyTeamB, "", agentBody("nope", false, "hi"), 404)
	for i := 0; i < 2; i++ {
		send(keyTeamC, fmt.Sprint("gamma-", i), agentBody("m1", false, "Triage the new issues."), 200)
	}
	return sent
}

// TestDashboard_InABrowser: after a scripted conversation with a scripted engine (every
// cache miss reason on cue) the page, in a real browser, shows the number of requests
// sent and the hit rate /metrics gives, the request log with each miss reason, the live
// rows, the catalog and a search over it; its screenshot is kept as the test's artifact;
// evicting every thread from the page empties the store. TestDashboard_RealEngine is
// the same page over llama-server.
func TestDashboard_InABrowser(t *testing.T) {
	chromiumPath(t) // before anything runs: without chromium the test fails at once
	srv, reg, engineA := dashboardGateway(t)
	sent := runDashboardScenario(t, srv.URL, engineA)
	(&opsGateway{Server: srv}).waitLoggedN(t, sent) // every request recorded, in /metrics too
	hitRate := metricSum(t, reg, "maskgate_cached_tokens_total") / metricSum(t, reg, "maskgate_prompt_tokens_total")
	var threads struct {
		Threads int `json:"threads"`
	}
	req, _ := http.NewRequest(http.MethodGet, srv.URL+"/admin/threads", nil)
	req.Header.Set("Authorization", "Bearer "+testAdminKey)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	json.NewDecoder(resp.Body).Decode(&threads)
	resp.Body.Close()

	got, _ := openDashboard(t, srv.URL, sent, 25) // its screenshot stays in the artifacts
	if got.SignInStatus != 401 || len(got.Cookie) != 1 || !got.Cookie[0].HTTPOnly || got.Cookie[0].SameSite != "Strict" {
		t.Errorf("sign-in: status %d, cookies %+v", got.SignInStatus, got.Cookie)
	}
	if got.Requests != sent || got.LogRows != sent {
		t.Errorf("the page shows %d requests and %d log rows, want %d", got.Requests, got.LogRows, sent)
	}
	if math.Abs(got.HitRate-hitRate) > 0.001 {
		t.Errorf("the page's hit rate %v (%s), /metrics says %v", got.HitRate, got.HitRateText, hitRate)
	}
	if got.Threads != threads.Threads || threads.Threads == 0 || got.ThreadsAfter != 0 || !strings.HasPrefix(got.Evicted, "Evicted ") {
		t.Errorf("threads: page %d, API %d; after evicting all %d (%s)", got.Threads, threads.Threads, got.ThreadsAfter, got.Evicted)
	}
	want := map[string]bool{observe.MissNewThread: false, observe.MissLoadedSetChanged: false, observe.MissEngineEvicted: false}
	for _, m := range got.Misses {
		if _, ok := want[m]; ok {
			want[m] = true
		}
	}
	for m, seen := range want {
		if !seen {
			t.Errorf("the request log shows no %q miss: %q", m, got.Misses)
		}
	}
	rows := map[string]int{}
	for _, r := range got.LiveRows {
		rows[r.Backend+"/"+r.Profile+"/"+r.Strategy] = r.Requests
	}
	if rows["vllm-a/default/remove"] != 9 || rows["llama-b/plain/eager"] != 5 || rows["none/plain/none"] != 1 {
		t.Errorf("live rows %v", rows)
	}
	// The agents profile is on auto: its row shows what auto chose, with its estimate of
	// each strategy's seconds per session.
	var auto *struct {
		Backend, Profile, Strategy, Auto, AutoText string
		Requests                                   int
	}
	for i, r := range got.LiveRows {
		if r.Profile == "agents" {
			auto = &got.LiveRows[i]
		}
	}
	switch {
	case auto == nil || auto.Requests != 2:
		t.Errorf("no live row of 2 requests for the agents profile: %+v", got.LiveRows)
	case auto.Auto != auto.Strategy || !strings.Contains(auto.AutoText, "remove ") || !strings.Contains(auto.AutoText, "validate ") ||
		!regexp.MustCompile(`^`+auto.Strategy+` [0-9.]+ (s|ms)( · \w+ [0-9.]+ (s|ms))+$`).MatchString(auto.AutoText):
		t.Errorf("the agents row served %s; its auto estimates read %q (chose %q)", auto.Strategy, auto.AutoText, auto.Auto)
	}
	if got.SearchTop != "slack_send_message" || len(got.CatalogVersion) != 64 || got.ChartLines == 0 {
		t.Errorf("catalog: search %q, version %q; chart lines %d", got.SearchTop, got.CatalogVersion, got.ChartLines)
	}
}

// dashboardPage is what testdata/browser/dashboard.mjs saw on the page.
type dashboardPage struct {
	Failure, HitRateText, Evicted, SearchTop, CatalogVersion string
	Errors                                                   []string
	SignInStatus, Requests, Threads, ThreadsAfter, LogRows   int
	ChartLines                                               int
	HitRate                                                  float64
	Misses                                                   []string
	LiveRows                                                 []struct {
		Backend, Profile, Strategy, Auto, AutoText string
		Requests                                   int
	}
	Cookie []struct {
		Name     string
		HTTPOnly bool `json:"httpOnly"`
		SameSite string
	}
}

// openDashboard drives the dashboard of the gateway at base in headless chromium until
// it shows sent requests and a catalog of tools, and returns what the page showed and
// its screenshot (a PNG), kept as the test's artifact: go test -artifacts keeps it under
// -outputdir. It fails the test when the browser, Node or the page does.
func openDashboard(t *testing.T, base string, sent, tools int) (dashboardPage, []byte) {
	t.Helper()
	browser := chromiumPath(t)
	node := nodetest.Node(t, browserDir)
	shot := filepath.Join(t.ArtifactDir(), "dashboard.png")
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "dashboard.mjs")
	cmd.Dir = browserDir
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(), "NODE_NO_WARNINGS=1",
		"BASE_URL=" + base, "ADMIN_KEY=" + testAdminKey, "CHROMIUM=" + browser, "SCREENSHOT=" + shot,
		fmt.Sprintf("EXPECT_REQUESTS=%d", sent), fmt.Sprintf("EXPECT_TOOLS=%d", tools)}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("node dashboard.mjs: %v\nstdout: %s\nstderr: %s", err, stdout.Bytes(), stderr.Bytes())
	}
	var got dashboardPage
	if err := json.Unmarshal(stdout.Bytes(), &got); err != nil {
		t.Fatalf("dashboard.mjs printed %s (%v)\nstderr: %s", stdout.Bytes(), err, stderr.Bytes())
	}
	t.Logf("the page: %s", stdout.Bytes())
	if got.Failure != "" {
		t.Fatalf("in the browser: %s", got.Failure)
	}
	if len(got.Errors) > 0 {
		t.Errorf("the page logged errors: %q", got.Errors)
	}
	png, err := os.ReadFile(shot)
	if err != nil || !bytes.HasPrefix(png, []byte("\x89PNG")) {
		t.Fatalf("screenshot: %v", err)
	}
	t.Logf("screenshot: %s (%d bytes)", shot, len(png))
	return got, png
}

// writeScreenshot writes png to docs/dashboard.png, the README's, when
// MASKGATE_WRITE_SCREENSHOT=1.
func writeScreenshot(t *testing.T, png []byte) {
	t.Helper()
	if os.Getenv("MASKGATE_WRITE_SCREENSHOT") != "1" {
		return
	}
	if err := os.MkdirAll("../docs", 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile("../docs/dashboard.png", png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("wrote docs/dashboard.png")
}
