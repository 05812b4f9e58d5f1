package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/maskgate/maskgate/internal/enginetest"
	"github.com/maskgate/maskgate/internal/redistest"
	"github.com/maskgate/maskgate/toolsearch/state"
	"github.com/maskgate/maskgate/toolsearch/state/redisstore"
)

// childEnv names the variable that makes this test binary a gateway process: its value
// is the JSON array of the gateway's arguments.
const childEnv = "MASKGATE_GATEWAY_CHILD"

// serveIfGatewayChild runs the gateway and exits when this binary was started as one
// (gatewayProc): the tests get real separate processes, to kill -9, without a build.
func serveIfGatewayChild() {
	raw := os.Getenv(childEnv)
	if raw == "" {
		return
	}
	var args []string
	if err := json.Unmarshal([]byte(raw), &args); err != nil {
		fmt.Fprintln(os.Stderr, "gateway child:", err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, args, os.Getenv, os.Stderr)
	stop()
	os.Exit(code)
}

// gatewayProc is a gateway in a process of its own.
type gatewayProc struct {
	t    *testing.T
	cmd  *exec.Cmd
	base string
	log  *syncBuffer
	args []string
	env  []string
}

func startGatewayProc(t *testing.T, configPath string, env ...string) *gatewayProc {
	t.Helper()
	addr := freeAddr(t)
	p := &gatewayProc{t: t, base: "http://" + addr, log: &syncBuffer{}, args: []string{"-config", configPath, "-listen", addr}, env: env}
	p.start()
	t.Cleanup(p.kill)
	return p
}

func (p *gatewayProc) start() {
	p.t.Helper()
	exe, err := os.Executable()
	if err != nil {
		p.t.Fatal(err)
	}
	args, _ := json.Marshal(p.args)
	cmd := exec.Command(exe, "-test.run=^$")
	cmd.Env = append(append(os.Environ(), childEnv+"="+string(args), "GORACE=atexit_sleep_ms=0"), p.env...)
	cmd.Stdout, cmd.Stderr = p.log, p.log
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		p.t.Fatal(err)
	}
	p.cmd = cmd
	deadline := time.Now().Add(60 * time.Second)
	for {
		if resp, err := http.Get(p.base + "/healthz"); err == nil {
			resp.Body.Close()
			return
		}
		if time.Now().After(deadline) {
			p.t.Fatalf("gateway process did not start:\n%s", p.log.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// kill9 ends the process as a crash would: SIGKILL, nothing flushed.
func (p *gatewayProc) kill() {
	if p.cmd != nil && p.cmd.Process != nil {
		p.cmd.Process.Kill()
		p.cmd.Wait()
		p.cmd = nil
	}
}

// turn is one answer of the conversation as the client saw it.
type turn struct {
	status         int
	thread         string
	content        string
	prompt, cached int
	code           string
	body           string
}

func chatTurn(t *testing.T, base, model string, messages []map[string]string) turn {
	t.Helper()
	msgs, _ := json.Marshal(messages)
	body := fmt.Sprintf(`{"model":%q,"max_tokens":6,"seed":1,"temperature":0,"tool_choice":"none","messages":%s}`, model, msgs)
	req, _ := http.NewRequest(http.MethodPost, base+"/v1/chat/completions", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Thread-Id", "conversation-1")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var out struct {
		Choices []struct {
			Message struct{ Content string } `json:"message"`
		} `json:"choices"`
		Usage struct {
			PromptTokens        int `json:"prompt_tokens"`
			PromptTokensDetails struct {
				CachedTokens int `json:"cached_tokens"`
			} `json:"prompt_tokens_details"`
		} `json:"usage"`
		Error struct{ Code string } `json:"error"`
	}
	json.Unmarshal(raw, &out)
	tr := turn{status: resp.StatusCode, thread: resp.Header.Get("X-Maskgate-Thread"), prompt: out.Usage.PromptTokens,
		cached: out.Usage.PromptTokensDetails.CachedTokens, code: out.Error.Code, body: string(raw)}
	if len(out.Choices) > 0 {
		tr.content = out.Choices[0].Message.Content
	}
	return tr
}

// sharedConfig is a gateway over llama-server with the e2e catalog under mask, loading
// the top search results for each user message (progressive), so each turn loads tools
// the test knows; state as given.
func sharedConfig(llamaURL, catalog, stateYAML string) string {
	return fmt.Sprintf(`backends:
  - {name: llama, kind: llamacpp, url: '%s', models: ["*"], timeout: 2m}
tools:
  files: [%q]
search:
  progressive: true
  top_k: 3
strategy: mask
thread_salt_env: MASKGATE_TEST_SALT
%s`, llamaURL, catalog, stateYAML)
}

const salt = "MASKGATE_TEST_SALT=a-shared-secret-for-thread-ids-0123456789"

// A conversation served alternately by two gateway processes sharing Redis, over one real
// llama-server: each turn's prompt is the previous one plus the new part (the engine
// reports ≥ 95 % of the previous prompt cached), the loaded set only grows, a kill -9 of
// one instance loses nothing, and Redis killed mid-run gives a clear 503 and then
// recovers with the state intact.
func TestShared_TwoGatewaysOneThreadOverRedis(t *testing.T) {
	ls := enginetest.Llama(t)
	rs := redistest.Start(t, true)
	dir := t.TempDir()
	catalog := filepath.Join(dir, "catalog.json")
	os.WriteFile(catalog, e2eCatalog(), 0o644)
	cfg := filepath.Join(dir, "gw.yaml")
	os.WriteFile(cfg, []byte(sharedConfig(ls.URL, catalog, "state:\n  redis: {url: '"+rs.URL+"', prefix: 'test:', dial_timeout: 30s, read_timeout: 30s}\n")), 0o644)
	a := startGatewayProc(t, cfg, salt)
	b := startGatewayProc(t, cfg, salt)

	// 30 s: limits the reader's calls, which must succeed, never reach.
	reader, err := redisstore.New(redisstore.Options{URL: rs.URL, Prefix: "test:thread:", DialTimeout: 30 * time.Second, ReadTimeout: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer reader.Close()
	loaded := func(thread string) []string {
		t.Helper()
		snap, _, err := reader.Get(context.Background(), thread)
		if err != nil {
			t.Fatal(err)
		}
		return snap.Loaded
	}

	asks := []struct{ text, tool string }{
		{"Post a message to the Slack channel.", "slack_send_message"},
		{"Open a new issue in the GitHub repository.", "github_create_issue"},
		{"Create a calendar event for Friday.", "calendar_create_event"},
		{"What is the current weather in Paris?", "get_weather"},
		{"Post to Slack again, then check the weather.", "slack_send_message"},
		{"Open one more GitHub issue.", "github_create_issue"},
	}
	var msgs []map[string]string
	var prev turn
	var prevLoaded []string
	serve := func(i int, g *gatewayProc, name string) {
		t.Helper()
		msgs = append(msgs, map[string]string{"role": "user", "content": asks[i].text})
		tr := chatTurn(t, g.base, ls.Model, msgs)
		if tr.status != 200 {
			t.Fatalf("turn %d on %s: %d %s\n%s", i+1, name, tr.status, tr.body, g.log.String())
		}
		if i > 0 && float64(tr.cached) < 0.95*float64(prev.prompt) {
			t.Errorf("turn %d on %s: %d of %d prompt tokens cached, under 95%% of the previous prompt (%d): the prefix moved", i+1, name, tr.cached, tr.prompt, prev.prompt)
		}
		got := loaded(tr.thread)
		if len(got) < len(prevLoaded) || strings.Join(got[:len(prevLoaded)], ",") != strings.Join(prevLoaded, ",") {
			t.Errorf("turn %d on %s: loaded %v does not extend %v", i+1, name, got, prevLoaded)
		}
		if !contains(got, asks[i].tool) {
			t.Errorf("turn %d on %s: %s not loaded (%v)", i+1, name, asks[i].tool, got)
		}
		t.Logf("turn %d on %s: prompt %d, cached %d, loaded %d", i+1, name, tr.prompt, tr.cached, len(got))
		msgs = append(msgs, map[string]string{"role": "assistant", "content": tr.content})
		prev, prevLoaded = tr, got
	}
	serve(0, a, "A")
	serve(1, b, "B")
	serve(2, a, "A")
	a.kill() // kill -9 between turns
	serve(3, b, "B")
	a.start()
	serve(4, a, "A (restarted)")

	// Redis down: a clear 503, nothing half-done; back up: the same thread goes on.
	rs.Kill()
	msgs = append(msgs, map[string]string{"role": "user", "content": asks[5].text})
	tr := chatTurn(t, b.base, ls.Model, msgs)
	if tr.status != 503 || tr.code != "state_unavailable" {
		t.Errorf("with Redis down: %d %s, want 503 state_unavailable", tr.status, tr.body)
	}
	msgs = msgs[:len(msgs)-1]
	rs.Restart()
	serve(5, b, "B (Redis restarted)")
}

// Shared limits and replica routing agree across two instances: a key's
// requests_per_minute holds across both, and each thread goes to the same replica from
// either.
func TestShared_LimitsAndReplicasAcrossInstances(t *testing.T) {
	rs := redistest.Start(t, false)
	var ups []string
	for range 2 {
		sc := &chatScript{}
		for range 200 {
			sc.replies = append(sc.replies, doneReply)
		}
		ups = append(ups, sc.serve(t).URL+"/v1")
	}
	dir := t.TempDir()
	cfg := filepath.Join(dir, "gw.yaml")
	os.WriteFile(cfg, []byte(fmt.Sprintf(`backends:
  - {name: pool, kind: vllm, urls: ['%s', '%s'], models: ["*"]}
keys:
  - {name: team, key_env: TEAM_KEY, limits: {requests_per_minute: 6}}
  - {name: free, key_env: FREE_KEY}
thread_salt_env: MASKGATE_TEST_SALT
state:
  redis: {url: '%s', dial_timeout: 30s, read_timeout: 30s}
`, ups[0], ups[1], rs.URL)), 0o644)
	env := []string{salt, "TEAM_KEY=team-key-0123456789abcdef", "FREE_KEY=free-key-0123456789abcdef"}
	a := startGatewayProc(t, cfg, env...)
	b := startGatewayProc(t, cfg, env...)
	ok := 0
	for i := range 12 {
		g := []*gatewayProc{a, b}[i%2]
		code, _ := chat(t, g.base, "team-key-0123456789abcdef", `{"model":"m","messages":[{"role":"user","content":"hi"}]}`)
		if code == 200 {
			ok++
		} else if code != 429 {
			t.Fatalf("request %d: %d", i, code)
		}
	}
	if ok != 6 {
		t.Errorf("%d of 12 requests admitted across two instances, want the key's 6 a minute", ok)
	}
	for i := range 8 {
		thread := fmt.Sprintf("t%d", i)
		var seen []string
		for _, g := range []*gatewayProc{a, b} {
			req, _ := http.NewRequest(http.MethodPost, g.base+"/v1/chat/completions", strings.NewReader(`{"model":"m","messages":[{"role":"user","content":"hi"}]}`))
			req.Header.Set("Authorization", "Bearer free-key-0123456789abcdef")
			req.Header.Set("X-Thread-Id", thread)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			seen = append(seen, resp.Header.Get("X-Maskgate-Replica"))
		}
		if seen[0] == "" || seen[0] != seen[1] {
			t.Errorf("thread %s: replicas %v from the two instances", thread, seen)
		}
	}
}

// The file store: kill -9 between two turns and a restart keep the loaded set and the
// append-only prompt.
func TestShared_FileStoreSurvivesKill9(t *testing.T) {
	ls := enginetest.Llama(t)
	dir := t.TempDir()
	catalog := filepath.Join(dir, "catalog.json")
	os.WriteFile(catalog, e2eCatalog(), 0o644)
	data := filepath.Join(dir, "data")
	cfg := filepath.Join(dir, "gw.yaml")
	os.WriteFile(cfg, []byte(sharedConfig(ls.URL, catalog, "state:\n  data_dir: '"+data+"'\n")), 0o644)
	g := startGatewayProc(t, cfg, salt)
	msgs := []map[string]string{{"role": "user", "content": "Post a message to the Slack channel."}}
	first := chatTurn(t, g.base, ls.Model, msgs)
	if first.status != 200 {
		t.Fatalf("%d %s", first.status, first.body)
	}
	g.kill()
	g.start()
	msgs = append(msgs, map[string]string{"role": "assistant", "content": first.content},
		map[string]string{"role": "user", "content": "Now open a GitHub issue."})
	second := chatTurn(t, g.base, ls.Model, msgs)
	if second.status != 200 || second.thread != first.thread {
		t.Fatalf("after the restart: %d thread %q (was %q) %s", second.status, second.thread, first.thread, second.body)
	}
	if float64(second.cached) < 0.95*float64(first.prompt) {
		t.Errorf("after kill -9 and restart: %d cached of %d; the first prompt had %d", second.cached, second.prompt, first.prompt)
	}
	g.kill()
	f, err := state.OpenFile(filepath.Join(data, "threads"), state.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	snap, ok, err := f.Get(context.Background(), first.thread)
	if err != nil || !ok || !contains(snap.Loaded, "slack_send_message") || !contains(snap.Loaded, "github_create_issue") {
		t.Errorf("the thread after two restarts: %v %v %v", snap.Loaded, ok, err)
	}
}
