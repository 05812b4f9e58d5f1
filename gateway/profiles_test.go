package gateway_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/maskgate/maskgate/gateway"
	"github.com/maskgate/maskgate/tenant"
	"github.com/maskgate/maskgate/toolsearch"
	"github.com/maskgate/maskgate/toolsearch/meta"
	"github.com/maskgate/maskgate/toolsearch/policy"
	"github.com/maskgate/maskgate/toolsearch/profile"
	"github.com/maskgate/maskgate/toolsearch/state"
)

// profileCatalog is a catalog of n tools named prefix_00.., each about its own topic.
func profileCatalog(t *testing.T, prefix string, n int, spec profile.Spec) *profile.Catalog {
	t.Helper()
	var tools []toolsearch.Tool
	for i := range n {
		tools = append(tools, toolsearch.Tool{Name: fmt.Sprintf("%s_%02d", prefix, i), Description: fmt.Sprintf("Tool %d of %s.", i, prefix),
			Parameters: json.RawMessage(`{"type":"object","properties":{"x":{"type":"string"}}}`)})
	}
	c, err := profile.New(spec, []profile.Source{{Kind: "inline", Tools: tools}})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func keyring(t *testing.T, keys ...tenant.Key) *tenant.Keyring {
	t.Helper()
	for i := range keys {
		keys[i].Hash = tenant.HashOf("key-of-" + keys[i].Name + "-0123456789")
	}
	ring, err := tenant.NewKeyring(keys)
	if err != nil {
		t.Fatal(err)
	}
	return ring
}

func sendAs(t *testing.T, srv *httptest.Server, path, key string, headers map[string]string, body string) (*http.Response, []byte) {
	t.Helper()
	method := http.MethodPost
	if body == "" {
		method = http.MethodGet
	}
	req, _ := http.NewRequest(method, srv.URL+path, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	if key != "" {
		req.Header.Set("Authorization", "Bearer key-of-"+key+"-0123456789")
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	return resp, out
}

const plainReply = `{"id":"r","object":"chat.completion","created":1,"model":"m1","choices":[{"index":0,"message":{"role":"assistant","content":"ok"},"finish_reason":"stop"}]}`

// The profile a request runs under: its header's where its key may choose, else its
// key's, else its model alias's, else the default; unknown names and choices the key may
// not make are refused in the envelope.
func TestProfiles_Selection(t *testing.T) {
	sc := &scripted{}
	gw := scriptedGateway(t, sc, func(o *gateway.Options) {
		o.Upstreams[0].Models = []string{"m1", "backend-model"}
		o.State = state.NewMemory(state.Options{})
		o.Strategy = gateway.StrategyRemove
		o.Tools = bigCatalog(t) // the default profile: slack_send_message, ...
		o.Profiles = []*gateway.Profile{
			{Name: "support", Catalog: profileCatalog(t, "support", 21, profile.Spec{}), Strategy: gateway.StrategyRemove},
			{Name: "coding", Catalog: profileCatalog(t, "coding", 22, profile.Spec{}), Strategy: gateway.StrategyRemove},
		}
		o.Aliases = map[string]gateway.Alias{"support-agent": {Profile: "support", Model: "backend-model"}}
		o.Keys = keyring(t,
			tenant.Key{Name: "alice", Profile: "support"},
			tenant.Key{Name: "bob", Profile: "coding", Profiles: []string{"support"}},
			tenant.Key{Name: "carol"},
			tenant.Key{Name: "dave", Profiles: []string{"coding"}},
			tenant.Key{Name: "erin", Models: []string{"m1", "backend-model"}},
			tenant.Key{Name: "frank", Models: []string{"support-agent"}})
	})
	for _, tc := range []struct {
		name, key, header, model string
		status                   int
		tools                    string // the first tool of /v1/tools, or the error code
		upstream                 string // the model the upstream got
	}{
		{"key's profile", "alice", "", "m1", 200, "support_00", "m1"},
		{"another key's", "bob", "", "m1", 200, "coding_00", "m1"},
		{"no profile: default", "carol", "", "m1", 200, "calendar_create_event", "m1"},
		{"header the key may choose", "bob", "support", "m1", 200, "support_00", "m1"},
		{"header naming the key's own", "alice", "support", "m1", 200, "support_00", "m1"},
		{"header the key may not choose", "alice", "coding", "m1", 403, "profile_not_allowed", ""},
		{"header from a key without choices", "carol", "support", "m1", 403, "profile_not_allowed", ""},
		{"alias", "carol", "", "support-agent", 200, "support_00", "backend-model"},
		{"alias of the key's own profile", "alice", "", "support-agent", 200, "support_00", "backend-model"},
		{"alias of another profile", "bob", "", "support-agent", 403, "profile_not_allowed", ""},
		// A key with profiles to choose from and none of its own reaches no other
		// profile through an alias (it did: the alias chose support for it).
		{"alias outside the key's profiles", "dave", "", "support-agent", 403, "profile_not_allowed", ""},
		{"the key's profiles still by header", "dave", "coding", "m1", 200, "coding_00", "m1"},
		// The models allowlist holds for the alias the key sent (it was checked only
		// on the backend model the alias stands for) and for that backend model.
		{"alias outside the key's models", "erin", "", "support-agent", 403, "model_not_allowed", ""},
		{"the key's models", "erin", "", "m1", 200, "calendar_create_event", "m1"},
		{"backend model outside the key's models", "frank", "", "support-agent", 403, "model_not_allowed", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := map[string]string{}
			if tc.header != "" {
				h[gateway.HeaderProfile] = tc.header
			}
			resp, body := sendAs(t, gw, "/v1/tools", tc.key, h, "")
			var list struct {
				Data []struct {
					Function struct{ Name string } `json:"function"`
				} `json:"data"`
				Error struct{ Code string } `json:"error"`
			}
			json.Unmarshal(body, &list)
			if tc.model == "m1" || tc.status != 200 {
				got := list.Error.Code
				if resp.StatusCode == 200 && len(list.Data) > 0 {
					got = list.Data[0].Function.Name
				}
				if tc.model == "m1" && got != tc.tools {
					t.Errorf("/v1/tools: %d %s, want %s", resp.StatusCode, got, tc.tools)
				}
			}
			sc.replies = []string{plainReply}
			n := len(sc.bodies)
			resp, body = sendAs(t, gw, "/v1/chat/completions", tc.key, h, `{"model":"`+tc.model+`","messages":[{"role":"user","content":"hi"}]}`)
			if resp.StatusCode != tc.status {
				t.Fatalf("status %d, want %d: %s", resp.StatusCode, tc.status, body)
			}
			if tc.status != 200 {
				if !strings.Contains(string(body), `"code":"`+tc.tools+`"`) {
					t.Errorf("error %s, want code %s", body, tc.tools)
				}
				return
			}
			if len(sc.bodies) != n+1 {
				t.Fatalf("%d upstream calls", len(sc.bodies)-n)
			}
			got := sc.bodies[n]
			if string(got["model"]) != `"`+tc.upstream+`"` {
				t.Errorf("upstream model %s, want %q", got["model"], tc.upstream)
			}
			if names := toolNames(t, got["tools"]); !slices.Equal(names, []string{meta.SearchTools, meta.LoadTool}) {
				t.Errorf("tools %v", names)
			}
		})
	}
	// Anonymous callers (no keys) may name any profile; an unknown one is 404.
	anon := scriptedGateway(t, sc, func(o *gateway.Options) {
		o.State = state.NewMemory(state.Options{})
		o.Profiles = []*gateway.Profile{{Name: "support", Catalog: profileCatalog(t, "support", 21, profile.Spec{})}}
	})
	if resp, body := sendAs(t, anon, "/v1/tools", "", map[string]string{gateway.HeaderProfile: "support"}, ""); resp.StatusCode != 200 || !strings.Contains(string(body), "support_00") {
		t.Errorf("anonymous choice: %d %s", resp.StatusCode, body)
	}
	resp, body := sendAs(t, anon, "/v1/chat/completions", "", map[string]string{gateway.HeaderProfile: "nope"}, `{"model":"m1","messages":[{"role":"user","content":"hi"}]}`)
	if resp.StatusCode != 404 || !strings.Contains(string(body), `"code":"profile_not_found"`) {
		t.Errorf("unknown profile: %d %s", resp.StatusCode, body)
	}
}

// filters[].profiles: a rule scoped to one profile denies there and nowhere else.
func TestProfiles_FilterScopedToAProfile(t *testing.T) {
	rules, err := policy.Compile([]policy.Rule{{Name: "no slack for support", Phases: []policy.Phase{policy.Search, policy.Load, policy.Active},
		Profiles: []string{"support"}, Tools: []string{"slack_*"}}})
	if err != nil {
		t.Fatal(err)
	}
	sc := &scripted{}
	gw := scriptedGateway(t, sc, func(o *gateway.Options) {
		managed(t, o)
		o.Strategy = gateway.StrategyRemove
		o.Policy = rules
		o.Profiles = []*gateway.Profile{{Name: "support", Catalog: profile.Static(bigCatalog(t)), Strategy: gateway.StrategyRemove}}
	})
	for _, tc := range []struct {
		profile string
		loaded  bool
	}{{"", true}, {"support", false}} {
		sc.replies = []string{
			callReply("c1", "load_tool", `{"toolName":"slack_send_message"}`),
			plainReply,
		}
		n := len(sc.bodies)
		h := map[string]string{"X-Thread-Id": "t-" + tc.profile}
		if tc.profile != "" {
			h[gateway.HeaderProfile] = tc.profile
		}
		resp, body := sendAs(t, gw, "/v1/chat/completions", "", h, `{"model":"m1","messages":[{"role":"user","content":"post on slack"}]}`)
		if resp.StatusCode != 200 {
			t.Fatalf("%s: %d %s", tc.profile, resp.StatusCode, body)
		}
		second := toolNames(t, sc.bodies[n+1]["tools"])
		if got := slices.Contains(second, "slack_send_message"); got != tc.loaded {
			t.Errorf("profile %q: slack loaded = %v, want %v (tools %v)", tc.profile, got, tc.loaded, second)
		}
	}
}

// A variant chosen by the request's metadata is what the engine sees, and each variant
// is its own catalog version.
func TestProfiles_VariantsReachTheEngine(t *testing.T) {
	pro := policy.Cond{Field: "metadata.plan", Op: policy.Equals, Values: []string{"pro"}}
	desc := "Tool 3 of p, unlimited on the pro plan."
	cat := profileCatalog(t, "p", 21, profile.Spec{Overrides: []profile.Override{{Tool: "p_03", Variants: []profile.Variant{{When: pro, Fields: profile.Fields{Description: &desc}}}}}})
	sc := &scripted{}
	gw := scriptedGateway(t, sc, func(o *gateway.Options) {
		o.State = state.NewMemory(state.Options{})
		o.Profiles = []*gateway.Profile{{Name: gateway.DefaultProfile, Catalog: cat, Strategy: gateway.StrategyEager}}
	})
	tools := map[string]string{}
	for _, plan := range []string{"free", "pro", "free"} {
		sc.replies = []string{plainReply}
		n := len(sc.bodies)
		resp, body := sendAs(t, gw, "/v1/chat/completions", "", nil, `{"model":"m1","metadata":{"plan":"`+plan+`"},"messages":[{"role":"user","content":"hi"}]}`)
		if resp.StatusCode != 200 {
			t.Fatalf("%d %s", resp.StatusCode, body)
		}
		got := string(sc.bodies[n]["tools"])
		if prev, ok := tools[plan]; ok && prev != got {
			t.Errorf("plan %s: the same variant rendered twice differently", plan)
		}
		tools[plan] = got
	}
	if strings.Contains(tools["free"], "unlimited") || !strings.Contains(tools["pro"], desc) {
		t.Errorf("variant not applied:\nfree %s\npro %s", tools["free"], tools["pro"])
	}
}

// fakeRunner runs tools named run_*: echoes its arguments after a delay, fails for
// run_fail, and records what ran at once.
type fakeRunner struct {
	mu      sync.Mutex
	calls   []string
	running atomic.Int32
	maxSeen atomic.Int32
	bearer  string
}

func (f *fakeRunner) Runs(tool string) bool { return strings.HasPrefix(tool, "run_") }

func (f *fakeRunner) Run(ctx context.Context, tool string, args json.RawMessage, bearer string) (string, bool) {
	n := f.running.Add(1)
	defer f.running.Add(-1)
	for {
		m := f.maxSeen.Load()
		if n <= m || f.maxSeen.CompareAndSwap(m, n) {
			break
		}
	}
	f.mu.Lock()
	f.calls = append(f.calls, tool)
	f.bearer = bearer
	f.mu.Unlock()
	select {
	case <-time.After(50 * time.Millisecond):
	case <-ctx.Done():
		return "cancelled", true
	}
	switch tool {
	case "run_fail":
		return "the server said no", true
	case "run_panic":
		panic("a fault in the runner")
	}
	return "ran " + tool + " with " + string(args), false
}

// TestProfiles_APanickingRunnerIsAFailedResult: a runner that panics in its goroutine
// stopped the whole gateway (no handler's recovery reaches it); now the call's result
// is a failure the model reads, the other call's result stands, and the client gets
// the final answer.
func TestProfiles_APanickingRunnerIsAFailedResult(t *testing.T) {
	var tools []toolsearch.Tool
	for _, n := range []string{"run_a", "run_panic"} {
		tools = append(tools, toolsearch.Tool{Name: n, Description: "Runs " + n + ".", Parameters: json.RawMessage(`{"type":"object"}`)})
	}
	cat, err := profile.New(profile.Spec{}, []profile.Source{{Kind: "mcp", Tools: tools}})
	if err != nil {
		t.Fatal(err)
	}
	sc := &scripted{replies: []string{
		`{"id":"r","object":"chat.completion","created":1,"model":"m1","choices":[{"index":0,"message":{"role":"assistant","content":null,"tool_calls":[` +
			`{"id":"c1","type":"function","function":{"name":"run_panic","arguments":"{}"}},` +
			`{"id":"c2","type":"function","function":{"name":"run_a","arguments":"{}"}}]},"finish_reason":"tool_calls"}]}`,
		plainReply,
	}}
	gw := scriptedGateway(t, sc, func(o *gateway.Options) {
		o.State = state.NewMemory(state.Options{})
		o.Profiles = []*gateway.Profile{{Name: gateway.DefaultProfile, Catalog: cat, Strategy: gateway.StrategyEager, Runner: &fakeRunner{}}}
	})
	resp, body := sendAs(t, gw, "/v1/chat/completions", "", nil, `{"model":"m1","messages":[{"role":"user","content":"do it"}]}`)
	if resp.StatusCode != 200 || !strings.Contains(string(body), `"content":"ok"`) {
		t.Fatalf("client got %d %s", resp.StatusCode, body)
	}
	if len(sc.bodies) != 2 {
		t.Fatalf("%d upstream rounds, want 2", len(sc.bodies))
	}
	msgs := messagesOf(t, sc.bodies[1]["messages"])
	if len(msgs) != 4 {
		t.Fatalf("second round has %d messages, want user, assistant and 2 tool results", len(msgs))
	}
	var got []string
	for _, m := range msgs[2:] {
		var r struct {
			Content string `json:"content"`
		}
		json.Unmarshal(m, &r)
		got = append(got, r.Content)
	}
	if want := []string{`{"error":"the gateway's runner of this tool failed"}`, `ran run_a with {}`}; !slices.Equal(got, want) {
		t.Errorf("tool results %q, want %q", got, want)
	}
}

// Calls to tools the gateway runs are run (concurrently), their results appended in
// call order, and the loop goes on; the client sees only the final answer.
func TestProfiles_GatewayRunsItsTools(t *testing.T) {
	var tools []toolsearch.Tool
	for _, n := range []string{"run_a", "run_b", "run_fail"} {
		tools = append(tools, toolsearch.Tool{Name: n, Description: "Runs " + n + ".", Parameters: json.RawMessage(`{"type":"object"}`)})
	}
	cat, err := profile.New(profile.Spec{}, []profile.Source{{Kind: "mcp", Tools: tools}})
	if err != nil {
		t.Fatal(err)
	}
	fr := &fakeRunner{}
	sc := &scripted{replies: []string{
		`{"id":"r","object":"chat.completion","created":1,"model":"m1","choices":[{"index":0,"message":{"role":"assistant","content":null,"tool_calls":[` +
			`{"id":"c1","type":"function","function":{"name":"run_b","arguments":"{\"n\":1}"}},` +
			`{"id":"c2","type":"function","function":{"name":"run_a","arguments":"{\"n\":2}"}},` +
			`{"id":"c3","type":"function","function":{"name":"run_fail","arguments":"{}"}}]},"finish_reason":"tool_calls"}]}`,
		plainReply,
	}}
	gw := scriptedGateway(t, sc, func(o *gateway.Options) {
		o.State = state.NewMemory(state.Options{})
		o.Profiles = []*gateway.Profile{{Name: gateway.DefaultProfile, Catalog: cat, Strategy: gateway.StrategyEager, Runner: fr}}
	})
	resp, body := sendAs(t, gw, "/v1/chat/completions", "", map[string]string{"Authorization": "Bearer caller-token"}, `{"model":"m1","messages":[{"role":"user","content":"do it"}]}`)
	if resp.StatusCode != 200 || !strings.Contains(string(body), `"content":"ok"`) || strings.Contains(string(body), "run_") {
		t.Fatalf("client got %d %s", resp.StatusCode, body)
	}
	if len(sc.bodies) != 2 {
		t.Fatalf("%d upstream rounds, want 2", len(sc.bodies))
	}
	msgs := messagesOf(t, sc.bodies[1]["messages"])
	if len(msgs) != 5 {
		t.Fatalf("second round has %d messages, want user, assistant and 3 tool results", len(msgs))
	}
	var results []struct {
		ToolCallID string `json:"tool_call_id"`
		Content    string `json:"content"`
	}
	for _, m := range msgs[2:] {
		var r struct {
			ToolCallID string `json:"tool_call_id"`
			Content    string `json:"content"`
		}
		json.Unmarshal(m, &r)
		results = append(results, r)
	}
	want := []struct{ id, content string }{
		{"c1", `ran run_b with {"n":1}`}, {"c2", `ran run_a with {"n":2}`}, {"c3", `{"error":"the server said no"}`},
	}
	for i, w := range want {
		if results[i].ToolCallID != w.id || results[i].Content != w.content {
			t.Errorf("result %d = %+v, want %+v", i, results[i], w)
		}
	}
	if fr.maxSeen.Load() < 2 {
		t.Errorf("at most %d calls ran at once; the three of one turn should run together", fr.maxSeen.Load())
	}
	if fr.bearer != "caller-token" {
		t.Errorf("runner got bearer %q", fr.bearer)
	}
}

// TestProfiles_ForwardAuthSendsTheKeysMCPTokenNeverTheKey: a runner told to forward the
// caller's token got the gateway key the caller presented, so every forward_auth MCP
// server held every caller's gateway key. Now, with keys, it gets the key's own MCP
// token (mcp_token_env), and nothing for a key without one; without keys, the bearer the
// local caller sent, as before (TestProfiles_GatewayRunsItsTools).
func TestProfiles_ForwardAuthSendsTheKeysMCPTokenNeverTheKey(t *testing.T) {
	cat, err := profile.New(profile.Spec{}, []profile.Source{{Kind: "mcp", Tools: []toolsearch.Tool{{Name: "run_a", Description: "Runs run_a.", Parameters: json.RawMessage(`{"type":"object"}`)}}}})
	if err != nil {
		t.Fatal(err)
	}
	call := `{"id":"r","object":"chat.completion","created":1,"model":"m1","choices":[{"index":0,"message":{"role":"assistant","content":null,"tool_calls":[` +
		`{"id":"c1","type":"function","function":{"name":"run_a","arguments":"{}"}}]},"finish_reason":"tool_calls"}]}`
	sc := &scripted{}
	fr := &fakeRunner{}
	gw := scriptedGateway(t, sc, func(o *gateway.Options) {
		o.State = state.NewMemory(state.Options{})
		o.Profiles = []*gateway.Profile{{Name: gateway.DefaultProfile, Catalog: cat, Strategy: gateway.StrategyEager, Runner: fr}}
		o.Keys = keyring(t, tenant.Key{Name: "alice", MCPToken: "mcp-token-of-alice"}, tenant.Key{Name: "bob"})
	})
	for _, c := range []struct{ key, want string }{{"alice", "mcp-token-of-alice"}, {"bob", ""}} {
		sc.replies = []string{call, plainReply}
		fr.mu.Lock()
		fr.bearer = "unset"
		fr.mu.Unlock()
		resp, body := sendAs(t, gw, "/v1/chat/completions", c.key, nil, `{"model":"m1","messages":[{"role":"user","content":"do it"}]}`)
		if resp.StatusCode != 200 {
			t.Fatalf("%s: %d %s", c.key, resp.StatusCode, body)
		}
		fr.mu.Lock()
		got := fr.bearer
		fr.mu.Unlock()
		if got != c.want {
			t.Errorf("%s's call forwarded %q, want %q (never the key, key-of-%s-...)", c.key, got, c.want, c.key)
		}
	}
}
