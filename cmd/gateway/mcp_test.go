package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/maskgate/maskgate/internal/mcptest"
	"github.com/maskgate/maskgate/internal/nodetest"
)

func TestMain(m *testing.M) {
	mcptest.ServeIfChild() // this binary doubles as a stdio MCP server
	serveIfGatewayChild()  // and as a gateway process of its own
	os.Exit(m.Run())
}

// chatScript is an OpenAI-compatible upstream answering with its replies in turn and
// keeping each request body.
type chatScript struct {
	mu      sync.Mutex
	replies []string
	bodies  []map[string]json.RawMessage
}

func (c *chatScript) serve(t *testing.T) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body map[string]json.RawMessage
		json.NewDecoder(r.Body).Decode(&body)
		c.mu.Lock()
		c.bodies = append(c.bodies, body)
		reply := `{"id":"r","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"script exhausted"},"finish_reason":"stop"}]}`
		if len(c.replies) > 0 {
			reply, c.replies = c.replies[0], c.replies[1:]
		}
		c.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, reply)
	}))
	t.Cleanup(srv.Close)
	return srv
}

func (c *chatScript) body(i int) map[string]json.RawMessage {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.bodies[i]
}

// calls is an answer calling each name with its arguments, ids c0, c1, ...
func calls(pairs ...string) string {
	var b strings.Builder
	for i := 0; i+1 < len(pairs); i += 2 {
		if i > 0 {
			b.WriteString(",")
		}
		args, _ := json.Marshal(pairs[i+1])
		fmt.Fprintf(&b, `{"id":"c%d","type":"function","function":{"name":%q,"arguments":%s}}`, i/2, pairs[i], args)
	}
	return `{"id":"r","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,"message":{"role":"assistant","content":null,"tool_calls":[` +
		b.String() + `]},"finish_reason":"tool_calls"}]}`
}

const doneReply = `{"id":"r","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"done"},"finish_reason":"stop"}]}`

// toolResults are the tool messages' contents of an upstream body, by call id.
func toolResults(t *testing.T, body map[string]json.RawMessage) map[string]string {
	t.Helper()
	var msgs []struct {
		Role, Content string
		ToolCallID    string `json:"tool_call_id"`
	}
	if err := json.Unmarshal(body["messages"], &msgs); err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, m := range msgs {
		if m.Role == "tool" {
			out[m.ToolCallID] = m.Content
		}
	}
	return out
}

func chat(t *testing.T, base, auth, body string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, base+"/v1/chat/completions", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	if auth != "" {
		req.Header.Set("Authorization", "Bearer "+auth)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func getTools(t *testing.T, base, profile string) (int, []string, []byte) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, base+"/v1/tools", nil)
	if profile != "" {
		req.Header.Set("X-Maskgate-Profile", profile)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var list struct {
		Data []struct {
			Function struct{ Name string } `json:"function"`
		} `json:"data"`
	}
	json.Unmarshal(raw, &list)
	var names []string
	for _, d := range list.Data {
		names = append(names, d.Function.Name)
	}
	data := raw
	if i := strings.Index(string(raw), `"data":`); i >= 0 {
		data = raw[i:]
	}
	return resp.StatusCode, names, data
}

// mcpConfig is a gateway in front of up whose default profile takes the tools of a
// stdio MCP server (this test binary) and an HTTP one, both run by the gateway.
func mcpConfig(t *testing.T, up *httptest.Server, remote *mcptest.HTTPServer, extra string) string {
	cmd, args, env := mcptest.StdioCommand(t)
	argsJSON, _ := json.Marshal(args)
	envJSON, _ := json.Marshal(env)
	return fmt.Sprintf(`backends:
  - {name: up, kind: vllm, url: '%s/v1', models: ['*']}
mcp_servers:
  - name: local
    command: %q
    args: %s
    env: %s
    timeout: 20s
  - name: remote
    url: '%s'
    forward_auth: true
    allow: [auth, echo, late]
profiles:
  - name: default
    tools: {mcp: [local, remote]}
    search: {eager_below: 1000}
%s`, up.URL, cmd, argsJSON, envJSON, remote.URL, extra)
}

// Tools of a stdio and an HTTP MCP server, namespaced and allowlisted, run by the
// gateway through a chat completion: concurrent calls, results in call order, the
// caller's token forwarded only to the server told to take it; a server that dies mid
// call gives the model an error result, and the next call reconnects.
func TestMCP_GatewayRunsServerToolsThroughAChat(t *testing.T) {
	sc := &chatScript{replies: []string{
		calls("local_sleep", `{"ms":300}`, "remote_auth", `{}`, "local_echo", `{"text":"hello"}`),
		calls("local_crash", `{}`),
		calls("local_echo", `{"text":"again"}`),
		doneReply,
	}}
	up := sc.serve(t)
	remote := mcptest.HTTP(t)
	g := startRun(t, mcpConfig(t, up, remote, ""), nil)
	base := "http://" + g.addr

	code, names, _ := getTools(t, base, "")
	want := []string{"local_add", "local_add_tool", "local_auth", "local_big", "local_crash", "local_echo", "local_fail", "local_rpc_error", "local_sleep", "remote_auth", "remote_echo"}
	if code != 200 || strings.Join(names, ",") != strings.Join(want, ",") {
		t.Fatalf("/v1/tools: %d %v\nwant %v\n%s", code, names, want, g.stderr.String())
	}

	start := time.Now()
	code, body := chat(t, base, "caller-token", `{"model":"m","messages":[{"role":"user","content":"go"}]}`)
	if code != 200 || !strings.Contains(body, `"content":"done"`) {
		t.Fatalf("client got %d %s\n%s", code, body, g.stderr.String())
	}
	if len(sc.bodies) != 4 {
		t.Fatalf("%d upstream rounds, want 4", len(sc.bodies))
	}
	r1 := toolResults(t, sc.body(1))
	if r1["c0"] != "slept" || r1["c1"] != "Bearer caller-token" || r1["c2"] != "hello" {
		t.Errorf("round 1 results %v", r1)
	}
	// The first three ran together: well under the sleep plus two more calls in turn.
	if el := time.Since(start); el > 5*time.Second {
		t.Errorf("the request took %v", el)
	}
	r2 := toolResults(t, sc.body(2))
	if !strings.Contains(r2["c0"], `"error"`) || !strings.Contains(r2["c0"], "local_crash") {
		t.Errorf("the crashed call's result %q does not tell the model", r2["c0"])
	}
	if r3 := toolResults(t, sc.body(3)); r3["c0"] != "again" {
		t.Errorf("after the crash: %v", r3)
	}
	// The stdio server never saw the caller's token; the client saw none of the calls.
	if strings.Contains(body, "local_") || strings.Contains(body, "remote_") {
		t.Errorf("the gateway's calls reached the client: %s", body)
	}
	metrics := get(t, base+"/metrics")
	if !strings.Contains(metrics, `maskgate_tool_run_seconds_count{outcome="ok",profile="default"} 4`) ||
		!strings.Contains(metrics, `maskgate_tool_run_seconds_count{outcome="error",profile="default"} 1`) {
		t.Errorf("tool run metrics:\n%s", grepLines(metrics, "tool_run_seconds_count"))
	}
}

// A server's tools/list_changed reaches the catalog: the new tool is appended, so the
// catalog the engine had cached stays a byte prefix of the new one.
func TestMCP_ListChangedAppendsAndKeepsThePrefix(t *testing.T) {
	sc := &chatScript{}
	up := sc.serve(t)
	remote := mcptest.HTTP(t)
	g := startRun(t, mcpConfig(t, up, remote, ""), nil)
	base := "http://" + g.addr
	_, before, data := getTools(t, base, "")
	remote.AddTool("late")
	deadline := time.Now().Add(10 * time.Second)
	var after []string
	var data2 []byte
	for {
		_, after, data2 = getTools(t, base, "")
		if len(after) == len(before)+1 || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if len(after) != len(before)+1 || after[len(after)-1] != "remote_late" {
		t.Fatalf("after list_changed: %v\n%s", after, g.stderr.String())
	}
	old := strings.TrimSuffix(strings.TrimSuffix(string(data), "}"), "]")
	if !strings.HasPrefix(string(data2), old) {
		t.Errorf("the old catalog is not a prefix of the new one")
	}
	if m := get(t, base+"/metrics"); !strings.Contains(m, `maskgate_catalog_changes_total{kind="append",profile="default"} 1`) {
		t.Errorf("catalog change not counted:\n%s", grepLines(m, "catalog_changes"))
	}
}

// SIGHUP reloads profiles: a profile added to the file serves without a restart, and a
// file that does not load leaves the running configuration.
func TestMCP_ReloadOnSIGHUP(t *testing.T) {
	sc := &chatScript{}
	up := sc.serve(t)
	remote := mcptest.HTTP(t)
	yaml := mcpConfig(t, up, remote, "")
	g := startRun(t, yaml, nil)
	base := "http://" + g.addr
	if code, _, _ := getTools(t, base, "extra"); code != 404 {
		t.Fatalf("extra before the reload: %d", code)
	}
	path := g.path
	if err := os.WriteFile(path, []byte("profiles: [{name: x, strategy: fast}]\n"+yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	syscall.Kill(os.Getpid(), syscall.SIGHUP)
	waitFor(t, g, "reload refused")
	extra := yaml + "  - name: extra\n    tools:\n      inline:\n        - {type: function, function: {name: kb_search, description: Search the knowledge base.}}\n"
	if err := os.WriteFile(path, []byte(extra), 0o644); err != nil {
		t.Fatal(err)
	}
	syscall.Kill(os.Getpid(), syscall.SIGHUP)
	waitFor(t, g, "configuration reloaded")
	code, names, _ := getTools(t, base, "extra")
	if code != 200 || strings.Join(names, ",") != "kb_search" {
		t.Errorf("extra after the reload: %d %v", code, names)
	}
	if _, names, _ := getTools(t, base, ""); len(names) != 11 {
		t.Errorf("the default profile after the reload: %v", names)
	}
}

// The reference server from npm: its tools found and namespaced, one run through a chat.
func TestMCP_ServerEverythingFromNpm(t *testing.T) {
	node := nodetest.Node(t, "../../toolsearch/mcp/testdata/node")
	entry, err := filepath.Abs("../../toolsearch/mcp/testdata/node/node_modules/@modelcontextprotocol/server-everything/dist/index.js")
	if err != nil {
		t.Fatal(err)
	}
	sc := &chatScript{replies: []string{calls("everything_echo", `{"message":"hi from the model"}`), doneReply}}
	up := sc.serve(t)
	g := startRun(t, fmt.Sprintf(`backends:
  - {name: up, kind: vllm, url: '%s/v1', models: ['*']}
mcp_servers:
  - {name: everything, command: %q, args: [%q, stdio], timeout: 30s}
profiles:
  - name: default
    tools: {mcp: [everything]}
    search: {eager_below: 1000}
`, up.URL, node, entry), nil)
	base := "http://" + g.addr
	_, names, _ := getTools(t, base, "")
	if len(names) < 5 || !contains(names, "everything_echo") || !contains(names, "everything_get-sum") {
		t.Fatalf("tools %v\n%s", names, g.stderr.String())
	}
	code, body := chat(t, base, "", `{"model":"m","messages":[{"role":"user","content":"echo"}]}`)
	if code != 200 || !strings.Contains(body, "done") {
		t.Fatalf("%d %s", code, body)
	}
	if r := toolResults(t, sc.body(1)); !strings.Contains(r["c0"], "hi from the model") {
		t.Errorf("echo result %v", r)
	}
}

func get(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}

func grepLines(s, sub string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// waitFor waits until the gateway's log says line.
func waitFor(t *testing.T, g *running, line string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(g.stderr.String(), line) {
		if time.Now().After(deadline) {
			t.Fatalf("the log never said %q:\n%s", line, g.stderr.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}
