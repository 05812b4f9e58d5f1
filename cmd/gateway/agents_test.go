package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"github.com/maskgate/maskgate/internal/gbnftest"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/maskgate/maskgate/bench/tinymodel"
	"github.com/maskgate/maskgate/internal/enginetest"
	"github.com/maskgate/maskgate/internal/mcptest"
	"github.com/maskgate/maskgate/internal/nodetest"
)

// These tests run the real coding-agent CLIs, pinned in testdata/agents/package-lock.json
// (npm's native builds), headless against the gateway over a real llama-server serving
// the tiny random-weight model. A random model never ends its turn by itself, and the
// agents treat a stop at max_tokens as an error, so the engine runs with llama-server's
// --logit-bias raising the end-of-turn token (<|im_end|>) by 9: a few tokens, then the end.
// Each run has its own temporary HOME and working directory, no network but loopback,
// and no shell (Claude Code: --disallowedTools Bash; Codex: --sandbox read-only).
//
// Every test builds one agentRig: the engine, a recording proxy between gateway and
// engine (what the engine saw), the gateway, and a recording proxy in front of the
// gateway (what the agent sent, and how: HTTP or a WebSocket upgrade).

// agentBinary installs the pinned agents when needed and returns the path of name.
func agentBinary(t *testing.T, name string) string {
	t.Helper()
	nodetest.Node(t, "testdata/agents")
	bin, err := filepath.Abs(filepath.Join("testdata/agents/node_modules/.bin", name))
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

// agentEngine starts llama-server with the end-of-turn bias the agents need.
func agentEngine(t *testing.T) *enginetest.LlamaServer {
	t.Helper()
	dir, err := tinymodel.OllamaTokenizerDir(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	v, err := tinymodel.LoadVocab(dir)
	if err != nil {
		t.Fatal(err)
	}
	// Two slots: a session's first request finds the slot that holds the catalog even
	// when another request (a title, a summary) ran in between.
	return enginetest.StartLlamaServer(t, enginetest.LlamaServerOptions{Parallel: 2,
		Args: []string{"--logit-bias", fmt.Sprintf("%d+9", v.IMEnd)}})
}

// agentRig is one agent test's world. Agents are given base, the front proxy's URL.
type agentRig struct {
	ls    *enginetest.LlamaServer
	wire  *wireLog  // gateway ↔ engine
	front *frontLog // agent ↔ gateway
	base  string
	logs  *syncBuffer // the gateway's log
}

// newAgentRig starts the biased engine, the gateway over it (its one backend, plus the
// config lines in extra) and the two recording proxies.
func newAgentRig(t *testing.T, extra string) *agentRig {
	t.Helper()
	return newAgentRigForcing(t, extra, nil)
}

// newAgentRigForcing is newAgentRig whose engine is made to write f's call
// (agents_tools_test.go); a nil f forces nothing.
func newAgentRigForcing(t *testing.T, extra string, f *forcedCall) *agentRig {
	t.Helper()
	ls := agentEngine(t)
	proxy, wire := (*httptest.Server)(nil), (*wireLog)(nil)
	if f == nil {
		proxy, wire = recordingProxy(t, ls.URL)
	} else {
		proxy, wire = forcingProxy(t, ls.URL, f)
	}
	gw, logs := startGateway(t, strings.Replace(`backends:
  - name: llama
    kind: llamacpp
    url: URL
    models: ["*"]
    timeout: 2m
`, "URL", proxy.URL, 1)+extra, nil)
	front, flog := frontProxy(t, gw)
	return &agentRig{ls: ls, wire: wire, front: flog, base: front.URL, logs: logs}
}

// frontCall is one request an agent made of the gateway: Status 101 is a WebSocket
// upgrade (the socket's messages are not kept).
type frontCall struct {
	Method, Path string
	Req          []byte
	Status       int
	Strategy     string // X-Maskgate-Strategy of the answer
}

type frontLog struct {
	mu    sync.Mutex
	calls []*frontCall
}

// all returns copies of the calls so far, in arrival order.
func (l *frontLog) all() []frontCall {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]frontCall, len(l.calls))
	for i, c := range l.calls {
		out[i] = *c
	}
	return out
}

func (l *frontLog) len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.calls)
}

type frontKey struct{}

// frontProxy is a reverse proxy to target (WebSocket upgrades included) that logs each
// request's method, path and body as it arrives and its status once answered.
func frontProxy(t *testing.T, target string) (*httptest.Server, *frontLog) {
	t.Helper()
	to, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	log := &frontLog{}
	rp := &httputil.ReverseProxy{
		Rewrite:       func(r *httputil.ProxyRequest) { r.SetURL(to) },
		FlushInterval: -1,
		ModifyResponse: func(res *http.Response) error {
			if c, ok := res.Request.Context().Value(frontKey{}).(*frontCall); ok {
				log.mu.Lock()
				c.Status, c.Strategy = res.StatusCode, res.Header.Get("X-Maskgate-Strategy")
				log.mu.Unlock()
			}
			return nil
		},
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			panic(http.ErrAbortHandler)
		}
		c := &frontCall{Method: r.Method, Path: r.URL.Path, Req: body}
		log.mu.Lock()
		log.calls = append(log.calls, c)
		log.mu.Unlock()
		r = r.WithContext(context.WithValue(r.Context(), frontKey{}, c))
		r.Body, r.ContentLength = io.NopCloser(bytes.NewReader(body)), int64(len(body))
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv, log
}

// runAgent runs bin with args in dir and env, bounded by limit, and returns its stdout;
// it fails the test, with both outputs and the gateway's log, unless the exit status is 0.
func (g *agentRig) runAgent(t *testing.T, limit time.Duration, dir string, env []string, bin string, args ...string) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), limit)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir, cmd.Env = dir, env
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err := cmd.Run()
	t.Logf("%s %s: %v in %v", filepath.Base(bin), strings.Join(args, " "), err, time.Since(start).Round(time.Millisecond))
	if err != nil {
		t.Fatalf("%s: %v\nstdout:\n%s\nstderr:\n%s\ngateway log:\n%s", filepath.Base(bin), err, stdout.Bytes(), stderr.Bytes(), g.logs.String())
	}
	return stdout.Bytes()
}

// claudeEnv is the environment of one headless Claude Code run: nothing inherited but
// PATH, a HOME of its own, the gateway as its API, and no traffic but to it.
func claudeEnv(home, base string, extra ...string) []string {
	return append([]string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + home,
		"ANTHROPIC_BASE_URL=" + base,
		"ANTHROPIC_API_KEY=sk-ant-test",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
		"DISABLE_TELEMETRY=1",
		"DISABLE_AUTOUPDATER=1",
		"DISABLE_ERROR_REPORTING=1",
		"DISABLE_BUG_COMMAND=1",
		"CLAUDE_CODE_DISABLE_TERMINAL_TITLE=1",
	}, extra...)
}

// runClaude runs Claude Code once, headless, in dir with "Say hello." and the extra
// arguments, and checks that it ended with a result that is not an error.
func (g *agentRig) runClaude(t *testing.T, claude, dir string, env []string, extra ...string) {
	t.Helper()
	g.runClaudeAsking(t, claude, dir, env, "Say hello.", extra...)
}

// runClaudeAsking is runClaude with prompt instead of "Say hello.".
func (g *agentRig) runClaudeAsking(t *testing.T, claude, dir string, env []string, prompt string, extra ...string) {
	t.Helper()
	args := append([]string{"-p", prompt, "--output-format", "json", "--model", g.ls.Model, "--disallowedTools", "Bash"}, extra...)
	out := g.runAgent(t, 90*time.Second, dir, env, claude, args...)
	var res struct {
		Type    string `json:"type"`
		IsError bool   `json:"is_error"`
		Result  string `json:"result"`
	}
	if err := json.Unmarshal(bytes.TrimSpace(out), &res); err != nil || res.Type != "result" || res.IsError {
		t.Fatalf("claude: output %s (%v); gateway log:\n%s", out, err, g.logs.String())
	}
}

// codexEnv writes a Codex home whose config.toml sends model g.ls.Model to the gateway
// through the Responses door (wire_api = "responses"), with extra lines at the top level
// and provider lines at the provider's table, and returns the environment of a run.
func (g *agentRig) codexEnv(t *testing.T, top, provider string) []string {
	t.Helper()
	home := t.TempDir()
	if err := os.MkdirAll(filepath.Join(home, ".codex"), 0o755); err != nil {
		t.Fatal(err)
	}
	config := fmt.Sprintf(`model = %q
model_provider = "maskgate"
%s
[model_providers.maskgate]
name = "maskgate"
base_url = "%s/v1"
env_key = "MASKGATE_KEY"
wire_api = "responses"
%s`, g.ls.Model, top, g.base, provider)
	if err := os.WriteFile(filepath.Join(home, ".codex", "config.toml"), []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	return []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "CODEX_HOME=" + filepath.Join(home, ".codex"), "MASKGATE_KEY=x"}
}

// firstWithTools returns the sequence number of the first /apply-template from from on
// whose request carried tools, or fails.
func (g *agentRig) firstWithTools(t *testing.T, from int) int {
	t.Helper()
	for _, c := range g.wire.since(from, "/apply-template") {
		if bytes.Contains(c.req, []byte(`"tools":`)) {
			return c.seq
		}
	}
	t.Fatalf("no request from #%d on carried tools; gateway log:\n%s", from, g.logs.String())
	return -1
}

// engineView returns the prompt the engine rendered for the /apply-template numbered
// seq, and the /completion that carried that prompt (an agent's requests may overlap, so
// the next /completion in arrival order need not be its own).
func (g *agentRig) engineView(t *testing.T, seq int) (string, wireCall) {
	t.Helper()
	var prompt string
	for _, c := range g.wire.since(seq, "/apply-template") {
		if c.seq == seq {
			prompt = appliedPrompt(t, c)
		}
	}
	for _, c := range g.wire.since(seq, "/completion") {
		var body struct {
			Prompt string `json:"prompt"`
		}
		if json.Unmarshal(c.req, &body) == nil && body.Prompt == prompt {
			return prompt, c
		}
	}
	t.Fatalf("no /completion carried the prompt of /apply-template #%d", seq)
	return "", wireCall{}
}

// cacheN is the engine's own count of the prompt tokens it reused for a /completion.
func cacheN(t *testing.T, completion wireCall) int {
	t.Helper()
	var got struct {
		Timings struct {
			CacheN int `json:"cache_n"`
		} `json:"timings"`
	}
	// A whole answer is one object; a streamed one's last data event carries the timings.
	raw := bytes.TrimSpace(completion.resp)
	if !bytes.HasPrefix(raw, []byte("{")) {
		for _, line := range bytes.Split(raw, []byte("\n")) {
			if ev, ok := bytes.CutPrefix(line, []byte("data: ")); ok && bytes.Contains(ev, []byte(`"timings"`)) {
				raw = ev
			}
		}
	}
	if err := json.Unmarshal(raw, &got); err != nil {
		t.Fatalf("/completion answer %.300s: %v", raw, err)
	}
	return got.Timings.CacheN
}

// hasTool says whether the rendered prompt declares a tool named name.
func hasTool(prompt, name string) bool {
	return strings.Contains(prompt, `"name": "`+name+`"`) || strings.Contains(prompt, `"name":"`+name+`"`)
}

// TestAgents_ClaudeCode runs Claude Code twice, in two project directories, through the
// Messages door: both runs exit 0 with a result, every core tool it sent was in the
// engine's prompt unmanaged (no search_tools), and the second project's first request
// reused at least the catalog's tokens (the engine's own cache_n).
func TestAgents_ClaudeCode(t *testing.T) {
	claude := agentBinary(t, "claude")
	g := newAgentRig(t, "")
	defer func() { // what it sent: 2.1.332 defers tools even without ENABLE_TOOL_SEARCH
		for _, c := range g.front.all() {
			t.Logf("%s %s %d strategy %q defer_loading %v", c.Method, c.Path, c.Status, c.Strategy, bytes.Contains(c.Req, []byte(`"defer_loading":true`)))
		}
	}()
	var firsts []int // the first /apply-template of each run that carried the tools
	for _, project := range []string{"alpha", "beta"} {
		dir := filepath.Join(t.TempDir(), project)
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		from := g.wire.len()
		g.runClaude(t, claude, dir, claudeEnv(t.TempDir(), g.base))
		firsts = append(firsts, g.firstWithTools(t, from))
	}

	// The engine's view of the second project's first request with tools.
	prompt, completion := g.engineView(t, firsts[1])
	for _, name := range []string{"Read", "Edit", "Glob", "Grep"} {
		if !hasTool(prompt, name) {
			t.Errorf("Claude Code's %s tool is not in the engine's prompt", name)
		}
	}
	if strings.Contains(prompt, "search_tools") {
		t.Errorf("Claude Code's own tools were managed: search_tools is in the prompt")
	}
	end := strings.Index(prompt, catalogEnd)
	if end < 0 || strings.Index(prompt, "<tools>") > strings.Index(prompt, "Claude") {
		t.Fatalf("the catalog is not first in the prompt:\n%.800s", prompt)
	}
	catalog := len(tokenize(t, g.ls, prompt[:end+len(catalogEnd)]))
	if got := cacheN(t, completion); got < catalog {
		t.Errorf("the second project's first request reused %d tokens; the catalog is %d: want all of it", got, catalog)
	} else {
		t.Logf("Claude Code: prompt through the catalog %d tokens of %d; the second project's first request reused %d",
			catalog, len(tokenize(t, g.ls, prompt)), got)
	}
}

// TestAgents_ClaudeCodeToolSearchMCP runs Claude Code with ENABLE_TOOL_SEARCH=true and a
// stdio MCP server of 69 tools (mcptest's nine and 60 fixtures), twice in one project
// directory. What 2.1.332 sends (written down in docs/agents.md): its core tools as
// ordinary definitions, its own ToolSearch among them, one DeferredToolPlaceholder with
// defer_loading: true, and the MCP tools by name only, in a text block of the request;
// their definitions come only once ToolSearch has found them. The test asserts both runs
// exit 0 with a result; every MCP tool is named in what Claude Code sent and none is
// defined; the engine's prompt holds the core tools and its grammar lets the model call
// Read and ToolSearch but neither the deferred placeholder nor the gateway's meta-tools;
// and the second run's first request reused at least the catalog's tokens.
func TestAgents_ClaudeCodeToolSearchMCP(t *testing.T) {
	claude := agentBinary(t, "claude")
	// The default strategy, auto: a client that searches itself gets mask on llama-server.
	g := newAgentRig(t, "")
	command, args, env := mcptest.StdioCommand(t)
	env[mcptest.FixturesVar] = "60"
	cfg, err := json.Marshal(map[string]any{"mcpServers": map[string]any{
		"fixtures": map[string]any{"type": "stdio", "command": command, "args": args, "env": env}}})
	if err != nil {
		t.Fatal(err)
	}
	mcpConfig := filepath.Join(t.TempDir(), "mcp.json")
	if err := os.WriteFile(mcpConfig, cfg, 0o644); err != nil {
		t.Fatal(err)
	}
	mcpTools := append(slices.Clone(mcptest.Tools), mcptest.FixtureNames()[:60]...)
	dir, home := t.TempDir(), t.TempDir()
	var firsts []int
	for range 2 {
		from := g.wire.len()
		g.runClaude(t, claude, dir, claudeEnv(home, g.base, "ENABLE_TOOL_SEARCH=true"), "--mcp-config", mcpConfig, "--strict-mcp-config")
		firsts = append(firsts, g.firstWithTools(t, from))
	}

	// What Claude Code sent.
	sent := 0
	for _, c := range g.front.all() {
		var body struct {
			Tools []struct {
				Name  string `json:"name"`
				Defer bool   `json:"defer_loading"`
			} `json:"tools"`
		}
		if c.Path != "/v1/messages" || json.Unmarshal(c.Req, &body) != nil || len(body.Tools) == 0 {
			continue
		}
		sent++
		defined, deferred := map[string]bool{}, []string{}
		for _, tl := range body.Tools {
			defined[tl.Name] = true
			if tl.Defer {
				deferred = append(deferred, tl.Name)
			}
		}
		for _, name := range mcpTools {
			if !bytes.Contains(c.Req, []byte("mcp__fixtures__"+name)) {
				t.Errorf("MCP tool %s is not named in Claude Code's request", name)
			}
			if defined["mcp__fixtures__"+name] {
				t.Errorf("MCP tool %s was defined on the first turn; tool search should defer it", name)
			}
		}
		for _, name := range []string{"Read", "ToolSearch"} {
			if !defined[name] || slices.Contains(deferred, name) {
				t.Errorf("Claude Code's %s is not an undeferred tool: defined %v, deferred %v", name, defined[name], deferred)
			}
		}
		if len(deferred) == 0 {
			t.Errorf("no tool with defer_loading in Claude Code's request")
		}
		if c.Strategy != "mask" {
			t.Errorf("request %d answered under strategy %q, want mask", sent, c.Strategy)
		}
		if sent == 1 {
			t.Logf("Claude Code sent %d tools, deferred %v, and named the %d MCP tools in text; strategy %s", len(body.Tools), deferred, len(mcpTools), c.Strategy)
		}
	}
	if sent == 0 {
		t.Fatalf("no /v1/messages request with tools reached the gateway")
	}

	// What the engine saw and could call on the second run's first request.
	prompt, completion := g.engineView(t, firsts[1])
	for _, name := range []string{"Read", "Edit", "ToolSearch"} {
		if !hasTool(prompt, name) {
			t.Errorf("Claude Code's %s tool is not in the engine's prompt", name)
		}
	}
	var body struct {
		Grammar string `json:"grammar"`
	}
	if err := json.Unmarshal(completion.req, &body); err != nil || body.Grammar == "" {
		t.Fatalf("the /completion carried no grammar (%v): %.300s", err, completion.req)
	}
	callable, err := gbnftest.ToolNames(body.Grammar)
	if err != nil {
		t.Fatalf("the grammar's tool rule: %v", err)
	}
	for _, name := range []string{"Read", "ToolSearch"} {
		if !slices.Contains(callable, name) {
			t.Errorf("the grammar does not let the model call %s; it allows %v", name, callable)
		}
	}
	// The client searches itself: the gateway's meta-tools are not callable (their
	// definitions stay in the prompt, whose catalog bytes do not change under mask).
	if slices.Contains(callable, "search_tools") || slices.Contains(callable, "load_tool") {
		t.Errorf("the grammar lets the model call the gateway's meta-tools, though Claude Code searches itself: %v", callable)
	}
	for _, n := range callable {
		if n == "DeferredToolPlaceholder" || strings.HasPrefix(n, "mcp__") {
			t.Errorf("the grammar lets the model call %s, a deferred tool, before ToolSearch loaded it", n)
		}
	}
	end := strings.Index(prompt, catalogEnd)
	if end < 0 {
		t.Fatalf("no end of the catalog's turn in the prompt:\n%.800s", prompt)
	}
	catalog := len(tokenize(t, g.ls, prompt[:end+len(catalogEnd)]))
	total := len(tokenize(t, g.ls, prompt))
	if got := cacheN(t, completion); got < catalog {
		t.Errorf("the second run's first request reused %d tokens; the catalog is %d: want all of it", got, catalog)
	} else {
		t.Logf("Claude Code with tool search: the second run's first request reused %d of %d prompt tokens (%.0f%%); the catalog is %d",
			got, total, 100*float64(got)/float64(total), catalog)
	}
}

// TestAgents_CodexExec runs Codex's headless exec through the Responses door over HTTP
// (the provider without supports_websockets), in a throwaway directory with a read-only
// sandbox: it exits 0, its requests were POSTs and reached the engine.
func TestAgents_CodexExec(t *testing.T) {
	codex := agentBinary(t, "codex")
	g := newAgentRig(t, "")
	from := g.wire.len()
	g.runAgent(t, 90*time.Second, t.TempDir(), g.codexEnv(t, "", ""), codex, "exec", "--sandbox", "read-only", "--skip-git-repo-check", "Say hello.")
	posts := 0
	for _, c := range g.front.all() {
		switch {
		case c.Method == http.MethodPost && c.Path == "/v1/responses" && c.Status == http.StatusOK:
			posts++
		case c.Status == http.StatusSwitchingProtocols:
			t.Errorf("Codex over HTTP opened a WebSocket: %s %s", c.Method, c.Path)
		}
	}
	if posts == 0 {
		t.Errorf("no POST /v1/responses answered 200: %+v", g.front.all())
	}
	if got := g.wire.awaitSome(from, "/completion"); len(got) == 0 {
		t.Fatalf("Codex's run reached no engine; gateway log:\n%s", g.logs.String())
	}
}

// TestAgents_CodexWebSocket runs Codex's headless exec with the provider's
// supports_websockets: it exits 0, its turn went over the Responses API's WebSocket mode
// (GET /v1/responses upgraded, 101) and reached the engine, and it never fell back to a
// POST /v1/responses.
func TestAgents_CodexWebSocket(t *testing.T) {
	codex := agentBinary(t, "codex")
	g := newAgentRig(t, "")
	from := g.wire.len()
	g.runAgent(t, 90*time.Second, t.TempDir(), g.codexEnv(t, "", "supports_websockets = true\n"), codex,
		"exec", "--sandbox", "read-only", "--skip-git-repo-check", "Say hello.")
	upgrades := 0
	for _, c := range g.front.all() {
		switch {
		case c.Method == http.MethodGet && c.Path == "/v1/responses" && c.Status == http.StatusSwitchingProtocols:
			upgrades++
		case c.Path == "/v1/responses":
			t.Errorf("Codex sent %s /v1/responses (%d) besides the socket", c.Method, c.Status)
		}
	}
	if upgrades == 0 {
		t.Errorf("Codex opened no WebSocket: %+v", g.front.all())
	}
	if got := g.wire.awaitSome(from, "/completion"); len(got) == 0 {
		t.Fatalf("Codex's run reached no engine; gateway log:\n%s", g.logs.String())
	}
	t.Logf("Codex over WebSocket: %d sockets, %d engine completions", upgrades, len(g.wire.since(from, "/completion")))
}

// TestAgents_CodexCompacts makes Codex compact: a low model_auto_compact_token_limit
// (2,000; its first turn alone is about 8,600 tokens) and a second turn in the same
// session (exec resume --last). Codex 0.171.0 with a provider that is not OpenAI compacts
// locally: one more POST /v1/responses whose input ends with its compaction prompt, then
// the turn with the history replaced by its handoff message carrying the summary. Both
// runs exit 0; the compaction request was answered 200; the next turn's request carried
// the handoff message, and the engine's prompt for it held that message and not the
// compaction prompt. (With capabilities.remote_compaction = "v2" Codex instead sends a
// compaction_trigger input item, which the gateway refuses with a 400 naming it: see
// docs/agents.md.)
func TestAgents_CodexCompacts(t *testing.T) {
	codex := agentBinary(t, "codex")
	g := newAgentRig(t, "")
	env := g.codexEnv(t, "model_auto_compact_token_limit = 2000\nsandbox_mode = \"read-only\"\n", "")
	dir := t.TempDir()
	g.runAgent(t, 90*time.Second, dir, env, codex, "exec", "--sandbox", "read-only", "--skip-git-repo-check", "Say hello.")
	from, wireFrom := g.front.len(), g.wire.len()
	g.runAgent(t, 90*time.Second, dir, env, codex, "exec", "resume", "--last", "--skip-git-repo-check", "Again.")

	const compactPrompt, handoff = "CONTEXT CHECKPOINT COMPACTION", "Another language model started to solve this problem"
	calls := g.front.all()[from:]
	compacted := -1
	for i, c := range calls {
		if c.Method == http.MethodPost && c.Path == "/v1/responses" && bytes.Contains(c.Req, []byte(compactPrompt)) {
			if c.Status != http.StatusOK {
				t.Fatalf("Codex's compaction request answered %d", c.Status)
			}
			compacted = i
			break
		}
	}
	if compacted < 0 {
		t.Fatalf("the resumed run sent no compaction request: %d requests", len(calls))
	}
	if len(calls) <= compacted+1 || !bytes.Contains(calls[compacted+1].Req, []byte(handoff)) || bytes.Contains(calls[compacted+1].Req, []byte(compactPrompt)) {
		t.Fatalf("the request after the compaction does not carry Codex's handoff message alone")
	}
	var after string
	for _, c := range g.wire.since(wireFrom, "/apply-template") {
		if p := appliedPrompt(t, c); strings.Contains(p, handoff) {
			after = p
		}
	}
	if after == "" || strings.Contains(after, compactPrompt) {
		t.Errorf("no engine prompt after the compaction holds the handoff message without the compaction prompt")
	}
	t.Logf("Codex compacted: %d requests in the resumed run, the compaction request #%d", len(calls), compacted+1)
}
