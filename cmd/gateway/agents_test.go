package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/maskgate/maskgate/bench/tinymodel"
	"github.com/maskgate/maskgate/internal/enginetest"
	"github.com/maskgate/maskgate/internal/nodetest"
)

// These tests run the real coding-agent CLIs, pinned in testdata/agents/package-lock.json
// (npm's native builds), headless against the gateway over a real llama-server serving
// the tiny random-weight model. A random model never ends its turn by itself, and the
// agents treat a stop at max_tokens as an error, so the engine runs with llama-server's
// --logit-bias raising the end-of-turn token (<|im_end|>) by 9: a few tokens, then the end.
// Each run has its own temporary HOME and working directory, no network but loopback,
// and no shell (Claude Code: --disallowedTools Bash).

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

// runAgent runs bin with args in dir and env, bounded by limit, and returns its stdout;
// it fails the test, with both outputs, unless the exit status is 0.
func runAgent(t *testing.T, limit time.Duration, dir string, env []string, bin string, args ...string) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), limit)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir, cmd.Env = dir, env
	cmd.Stdin = nil
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err := cmd.Run()
	t.Logf("%s %s: %v in %v", filepath.Base(bin), strings.Join(args, " "), err, time.Since(start).Round(time.Millisecond))
	if err != nil {
		t.Fatalf("%s: %v\nstdout:\n%s\nstderr:\n%s", filepath.Base(bin), err, stdout.Bytes(), stderr.Bytes())
	}
	return stdout.Bytes()
}

// TestAgents_ClaudeCode runs Claude Code twice, in two project directories, through the
// Messages door: both runs exit 0 with a result, every core tool it sent was in the
// engine's prompt unmanaged (no search_tools), and the second project's first request
// reused at least the catalog's tokens (the engine's own cache_n).
func TestAgents_ClaudeCode(t *testing.T) {
	claude := agentBinary(t, "claude")
	ls := agentEngine(t)
	proxy, wire := recordingProxy(t, ls.URL)
	base, logs := startGateway(t, strings.Replace(`backends:
  - name: llama
    kind: llamacpp
    url: URL
    models: ["*"]
    timeout: 2m
`, "URL", proxy.URL, 1), nil)

	var firsts []int // the first /apply-template of each run that carried the tools
	for _, project := range []string{"alpha", "beta"} {
		dir := filepath.Join(t.TempDir(), project)
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		from := wire.len()
		out := runAgent(t, 90*time.Second, dir, claudeEnv(t.TempDir(), base), claude,
			"-p", "Say hello.", "--output-format", "json", "--model", ls.Model, "--disallowedTools", "Bash")
		var res struct {
			Type    string `json:"type"`
			IsError bool   `json:"is_error"`
			Result  string `json:"result"`
		}
		if err := json.Unmarshal(bytes.TrimSpace(out), &res); err != nil || res.Type != "result" || res.IsError {
			t.Fatalf("%s: output %s (%v); gateway log:\n%s", project, out, err, logs.String())
		}
		first := -1
		for _, c := range wire.since(from, "/apply-template") {
			if bytes.Contains(c.req, []byte(`"tools":`)) {
				first = c.seq
				break
			}
		}
		if first < 0 {
			t.Fatalf("%s: no request of the run carried tools", project)
		}
		firsts = append(firsts, first)
	}

	// The engine's view of the second project's first request with tools.
	var applied, completion wireCall
	for _, c := range wire.since(firsts[1], "/apply-template") {
		if c.seq == firsts[1] {
			applied = c
		}
	}
	for _, c := range wire.since(firsts[1], "/completion") {
		completion = c
		break
	}
	prompt := appliedPrompt(t, applied)
	for _, name := range []string{"Read", "Edit", "Glob", "Grep"} {
		if !strings.Contains(prompt, `"name": "`+name+`"`) && !strings.Contains(prompt, `"name":"`+name+`"`) {
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
	catalog := len(tokenize(t, ls, prompt[:end+len(catalogEnd)]))
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
	if got.Timings.CacheN < catalog {
		t.Errorf("the second project's first request reused %d tokens; the catalog is %d: want all of it", got.Timings.CacheN, catalog)
	}
	t.Logf("Claude Code: prompt through the catalog %d tokens of %d; the second project's first request reused %d",
		catalog, len(tokenize(t, ls, prompt)), got.Timings.CacheN)
}

// TestAgents_CodexExec runs Codex's headless exec through the Responses door over HTTP,
// in a throwaway directory with a read-only sandbox: it exits 0 and its requests reached
// the engine.
func TestAgents_CodexExec(t *testing.T) {
	codex := agentBinary(t, "codex")
	ls := agentEngine(t)
	proxy, wire := recordingProxy(t, ls.URL)
	base, logs := startGateway(t, strings.Replace(`backends:
  - name: llama
    kind: llamacpp
    url: URL
    models: ["*"]
    timeout: 2m
`, "URL", proxy.URL, 1), nil)
	home := t.TempDir()
	if err := os.MkdirAll(filepath.Join(home, ".codex"), 0o755); err != nil {
		t.Fatal(err)
	}
	config := fmt.Sprintf(`model = %q
model_provider = "maskgate"

[model_providers.maskgate]
name = "maskgate"
base_url = "%s/v1"
env_key = "MASKGATE_KEY"
wire_api = "responses"
`, ls.Model, base)
	if err := os.WriteFile(filepath.Join(home, ".codex", "config.toml"), []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "CODEX_HOME=" + filepath.Join(home, ".codex"), "MASKGATE_KEY=x"}
	from := wire.len()
	runAgent(t, 90*time.Second, dir, env, codex, "exec", "--sandbox", "read-only", "--skip-git-repo-check", "Say hello.")
	if got := wire.since(from, "/completion"); len(got) == 0 {
		t.Fatalf("Codex's run reached no engine; gateway log:\n%s", logs.String())
	}
}
