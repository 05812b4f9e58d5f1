package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/maskgate/maskgate/backends/oai"
	"github.com/maskgate/maskgate/internal/nodetest"
)

// The libraries applications are built on, pinned in testdata/libs/package-lock.json and
// unmodified, each run one two-step tool loop through the gateway over a real
// llama-server serving the tiny random-weight model (the agents' engine, its end of turn
// raised): the engine is made to call the library's own tool, lookup_code, with
// {"key": KEY}; the library runs the tool itself and sends its result back; the engine is
// made to answer with a sentence, and the library returns it. Both are forced on the
// engine side (forcedCall's grammar for the call, a literal grammar for the answer), so
// everything between — the door's request and answer, the gateway's reading of the
// call, the library's execution and its way of sending the result, the engine's
// rendering of it — is the real thing. Each case has its own key, result and answer.

// libsDir holds the pinned libraries and one script per library.
const libsDir = "testdata/libs"

// libCase is one library run: what it asks, the call forced on the engine (a tool with
// arguments), what the tool returns and the answer forced once the result is in the
// prompt; sent, when set, is an input item type the library's second request must hold.
type libCase struct {
	key, ask, result, answer string
	tool, args, sent         string
	call                     *forcedCall

	mu       sync.Mutex
	answered int // the /completion that was made to answer; -1 until then
}

// newLibCase is the case key of the library's own tool, lookup_code, called with
// {"key": key}.
func newLibCase(key string) *libCase {
	return newLibCaseOf(key, "lookup_code", `{"key": "`+key+`"}`)
}

// newLibCaseOf is the case key whose forced call is tool with args (a JSON object that
// names key somewhere).
func newLibCaseOf(key, tool, args string) *libCase {
	c := &libCase{
		key:      key,
		ask:      "Which code word is filed under " + key + "? Use " + tool + ".",
		result:   "The code word filed under " + key + " is Zephyrine.",
		answer:   "It is Zephyrine (" + key + ").",
		tool:     tool,
		args:     args,
		answered: -1,
	}
	c.call = newForcedCall(c.ask, tool, args)
	return c
}

// rewrite forces c's answer on the first /completion whose prompt holds the tool's
// result, and c's call (forcedCall.rewrite) on the first that holds the ask.
func (c *libCase) rewrite(t *testing.T, seq int, body []byte) []byte {
	raw, ok := oai.Get(body, "prompt")
	var prompt string
	if !ok || json.Unmarshal(raw, &prompt) != nil {
		return body
	}
	if !strings.Contains(prompt, c.result) {
		return c.call.rewrite(t, seq, body)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.answered >= 0 {
		return body
	}
	c.answered = seq
	grammar, err := json.Marshal("root ::= " + gbnfLiteral(c.answer))
	if err != nil {
		t.Error(err)
		return body
	}
	for _, del := range []string{"grammar_triggers", "logit_bias"} {
		if body, err = oai.Delete(body, del); err != nil {
			t.Errorf("forcing the answer: %v", err)
			return body
		}
	}
	for _, kv := range [][2]string{{"grammar", string(grammar)}, {"grammar_lazy", "false"}} {
		if body, err = oai.Set(body, kv[0], []byte(kv[1])); err != nil {
			t.Errorf("forcing the answer: %v", err)
			return body
		}
	}
	return body
}

func (c *libCase) answeredSeq() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.answered
}

// libRig is an agentRig whose proxy to the engine forces the current case's call and
// answer.
type libRig struct {
	*agentRig
	mu  sync.Mutex
	cur *libCase
}

func newLibRig(t *testing.T) *libRig {
	t.Helper()
	ls := agentEngine(t)
	r := &libRig{}
	log := &wireLog{}
	client := &http.Client{}
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		seq := log.arrive()
		body, err := io.ReadAll(req.Body)
		if err != nil {
			panic(http.ErrAbortHandler)
		}
		r.mu.Lock()
		cur := r.cur
		r.mu.Unlock()
		if req.URL.Path == "/completion" && cur != nil {
			body = cur.rewrite(t, seq, body)
		}
		relay(w, req, body, ls.URL, client, func(got []byte) {
			log.add(wireCall{seq: seq, method: req.Method, path: req.URL.Path, req: body, resp: got})
		})
	}))
	t.Cleanup(proxy.Close)
	gw, logs := startGateway(t, strings.Replace(`backends:
  - name: llama
    kind: llamacpp
    url: URL
    models: ["*"]
    timeout: 2m
`, "URL", proxy.URL, 1), nil)
	front, flog := frontProxy(t, gw)
	r.agentRig = &agentRig{ls: ls, wire: log, front: flog, base: front.URL, logs: logs}
	return r
}

// libResult is what each script prints.
type libResult struct {
	Executed []map[string]any `json:"executed"`
	Text     string           `json:"text"`
	Steps    int              `json:"steps"`
	Error    json.RawMessage  `json:"error"`
}

// run runs script with args for a new case named key, and checks the loop: the script
// exits 0, its requests were POSTs to door answered 200 (two at least), the tool ran
// once with the forced arguments, the library's final text is the forced answer, and
// the engine's side (checkLoop).
func (r *libRig) run(t *testing.T, node, door, key, script string, args ...string) {
	t.Helper()
	r.runCase(t, node, door, newLibCase(key), script, args...)
}

// runCase is run for the case c.
func (r *libRig) runCase(t *testing.T, node, door string, c *libCase, script string, args ...string) {
	t.Helper()
	r.mu.Lock()
	r.cur = c
	r.mu.Unlock()
	from := r.front.len()
	ctx, cancel := context.WithTimeout(t.Context(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, append([]string{script}, args...)...)
	cmd.Dir = libsDir
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(), "NODE_NO_WARNINGS=1",
		"BASE_URL=" + r.base, "MODEL=" + r.ls.Model, "ASK=" + c.ask, "RESULT=" + c.result}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var res libResult
	if jerr := json.Unmarshal(bytes.TrimSpace(stdout.Bytes()), &res); err != nil || jerr != nil || res.Error != nil {
		t.Fatalf("node %s %s: %v (%v)\nstdout: %s\nstderr: %s\ngateway log:\n%s", script, strings.Join(args, " "), err, jerr,
			stdout.Bytes(), stderr.Bytes(), r.logs.String())
	}
	calls := r.front.all()[from:]
	for _, fc := range calls {
		if fc.Method != http.MethodPost || fc.Path != door || fc.Status != http.StatusOK {
			t.Errorf("the library sent %s %s, answered %d; want POST %s answered 200", fc.Method, fc.Path, fc.Status, door)
		}
	}
	if len(calls) < 2 {
		t.Errorf("the library made %d requests of the gateway, want two at least", len(calls))
	}
	var want map[string]any
	if err := json.Unmarshal([]byte(c.args), &want); err != nil {
		t.Fatal(err)
	}
	if len(res.Executed) != 1 || !reflect.DeepEqual(res.Executed[0], want) {
		t.Errorf("the tool ran with %v, want once with %s", res.Executed, c.args)
	}
	if c.sent != "" && !slices.ContainsFunc(calls, func(fc frontCall) bool { return bytes.Contains(fc.Req, []byte(`"type":"`+c.sent+`"`)) }) {
		t.Errorf("no request of the library held a %s item", c.sent)
	}
	if res.Text != c.answer {
		t.Errorf("the library's final text is %q, want %q (%d model turns)", res.Text, c.answer, res.Steps)
	}
	r.checkLoop(t, c)
	t.Logf("%s %s: %d model turns, answer %q", script, strings.Join(args, " "), res.Steps, res.Text)
}

// checkLoop checks the engine's side of c: the call was forced and ended at the end of
// generation; after it a rendered prompt holds the call and then a tool response with
// the tool's result (which no request before the call held), and the answer was forced
// on a /completion carrying that prompt.
func (r *libRig) checkLoop(t *testing.T, c *libCase) {
	t.Helper()
	forced := c.call.forced()
	if forced < 0 {
		t.Fatalf("no /completion held %q with %s declared: the call was never forced; gateway log:\n%s", c.ask, c.tool, r.logs.String())
	}
	if fc, ok := awaitWire(r.wire, forced, "/completion", func(w wireCall) bool { return w.seq == forced }); !ok {
		t.Fatalf("the forced /completion #%d was never answered", forced)
	} else if !bytes.Contains(fc.resp, []byte(`"stop_type":"eos"`)) {
		t.Errorf("the forced /completion did not end at the end of generation: %.600s", fc.resp)
	}
	for _, w := range r.wire.since(0, "/completion") {
		if w.seq < forced && bytes.Contains(w.req, []byte(c.result)) {
			t.Errorf("/completion #%d, before the forced call #%d, already held the tool's result", w.seq, forced)
		}
	}
	call := `{"name": "` + c.tool + `", "arguments": `
	var prompt string
	applied, ok := awaitWire(r.wire, forced, "/apply-template", func(w wireCall) bool {
		p := appliedPrompt(t, w)
		callAt, respAt := strings.Index(p, call), strings.Index(p, "<tool_response>\n")
		if callAt >= 0 && respAt > callAt && strings.Contains(p[callAt:respAt], c.key) && strings.Contains(p[respAt:], c.result) {
			prompt = p
			return true
		}
		return false
	})
	if !ok {
		t.Fatalf("no prompt after the forced call #%d holds the call %s… naming the key and then a tool response with the result; gateway log:\n%s",
			forced, call, r.logs.String())
	}
	answered := c.answeredSeq()
	if _, ok := awaitWire(r.wire, applied.seq, "/completion", func(w wireCall) bool {
		var body struct {
			Prompt string `json:"prompt"`
		}
		return w.seq == answered && json.Unmarshal(w.req, &body) == nil && body.Prompt == prompt
	}); !ok {
		t.Errorf("the answer was forced on /completion #%d, which did not carry the prompt with the tool's response", answered)
	}
}

// TestLibs_AISDK: the Vercel AI SDK's generateText and streamText run a tool loop
// (stopWhen: stepCountIs(3)) through each door its providers use: @ai-sdk/openai's
// Responses (its default) and Chat Completions (openai.chat), @ai-sdk/openai-compatible's
// Chat Completions and @ai-sdk/anthropic's Messages.
func TestLibs_AISDK(t *testing.T) {
	node := nodetest.Node(t, libsDir)
	r := newLibRig(t)
	doors := map[string]string{"responses": "/v1/responses", "chat": "/v1/chat/completions",
		"compatible": "/v1/chat/completions", "anthropic": "/v1/messages"}
	for _, provider := range []string{"responses", "chat", "compatible", "anthropic"} {
		for _, mode := range []string{"generate", "stream"} {
			t.Run(provider+"/"+mode, func(t *testing.T) {
				r.run(t, node, doors[provider], fmt.Sprintf("aisdk-%s-%s", provider, mode), "aisdk.mjs", provider, mode)
			})
		}
	}
}

// TestLibs_LangChain: LangChain.js's ChatOpenAI with bindTools runs the loop its
// documentation writes (invoke, the tool's ToolMessage, invoke again), whole and
// streamed, on Chat Completions and with useResponsesApi on Responses.
func TestLibs_LangChain(t *testing.T) {
	node := nodetest.Node(t, libsDir)
	r := newLibRig(t)
	doors := map[string]string{"chat": "/v1/chat/completions", "responses": "/v1/responses"}
	for _, api := range []string{"chat", "responses"} {
		for _, mode := range []string{"invoke", "stream"} {
			t.Run(api+"/"+mode, func(t *testing.T) {
				r.run(t, node, doors[api], fmt.Sprintf("langchain-%s-%s", api, mode), "langchain.mjs", api, mode)
			})
		}
	}
}

// TestLibs_AgentsSDK: the OpenAI Agents SDK's run() of an Agent with a function tool,
// whole and streamed, on Responses (its default) and on Chat Completions.
func TestLibs_AgentsSDK(t *testing.T) {
	node := nodetest.Node(t, libsDir)
	r := newLibRig(t)
	doors := map[string]string{"chat": "/v1/chat/completions", "responses": "/v1/responses"}
	for _, api := range []string{"responses", "chat"} {
		for _, mode := range []string{"run", "stream"} {
			t.Run(api+"/"+mode, func(t *testing.T) {
				r.run(t, node, doors[api], fmt.Sprintf("agents-%s-%s", api, mode), "agents.mjs", api, mode)
			})
		}
	}
}

// TestLibs_AgentsSDKBuiltins: the Agents SDK's client-run built-ins on Responses, whole
// and streamed: shellTool (its Shell gets the forced commands) and applyPatchTool (its
// Editor gets the forced create_file operation). The gateway offers each to the engine
// as a function, writes the engine's call as a shell_call or apply_patch_call, and reads
// the SDK's shell_call_output or apply_patch_call_output back into the engine's prompt.
//
// Unforced, the gateway's own grammar reaches the engine: apply_patch forced by
// tool_choice, the /completion carries the diff's grammar, which llama-server takes
// (it answers a completion, not an error), and a whole apply_patch_call that comes back
// has a diff in that language.
func TestLibs_AgentsSDKBuiltins(t *testing.T) {
	node := nodetest.Node(t, libsDir)
	r := newLibRig(t)
	t.Run("apply_patch/grammar", func(t *testing.T) {
		from := r.wire.len()
		resp, raw := postJSON(t, r.base+"/v1/responses", `{"model":"`+r.ls.Model+`","input":"Patch it.","max_output_tokens":160,`+
			`"tools":[{"type":"apply_patch"}],"tool_choice":{"type":"apply_patch"}}`)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("%d: %s", resp.StatusCode, raw)
		}
		got := r.wire.awaitSome(from, "/completion")
		if len(got) != 1 || !bytes.Contains(got[0].req, []byte("End of File")) || !bytes.Contains(got[0].resp, []byte(`"stop_type"`)) {
			t.Fatalf("the engine's /completion (%d) did not carry the diff grammar or was not answered: %.400s … %.400s", len(got), got[0].req, got[0].resp)
		}
		var out struct {
			Output []struct {
				Type      string `json:"type"`
				Operation struct {
					Type, Path string
					Diff       *string
				} `json:"operation"`
			} `json:"output"`
		}
		if err := json.Unmarshal(raw, &out); err != nil {
			t.Fatal(err)
		}
		for _, it := range out.Output {
			if it.Type != "apply_patch_call" || it.Operation.Diff == nil {
				continue
			}
			for _, line := range strings.SplitAfter(*it.Operation.Diff, "\n") {
				if line != "" && !strings.HasSuffix(line, "\n") || line != "" && !strings.ContainsAny(line[:1], "@+- *") {
					t.Errorf("the diff's line %q is outside the V4A grammar", line)
				}
			}
			t.Logf("the engine wrote an apply_patch_call %s %q with a diff of %d bytes", it.Operation.Type, it.Operation.Path, len(*it.Operation.Diff))
		}
		t.Logf("output: %.600s", raw)
	})
	for _, mode := range []string{"run", "stream"} {
		t.Run("shell/"+mode, func(t *testing.T) {
			key := "agents-shell-" + mode
			c := newLibCaseOf(key, "shell", `{"commands": ["echo `+key+`"]}`)
			c.sent = "shell_call_output"
			r.runCase(t, node, "/v1/responses", c, "agents.mjs", "responses", mode, "shell")
		})
		t.Run("apply_patch/"+mode, func(t *testing.T) {
			key := "agents-patch-" + mode
			c := newLibCaseOf(key, "apply_patch", `{"type": "create_file", "path": "`+key+`.txt", "diff": "+hello\n"}`)
			c.sent = "apply_patch_call_output"
			r.runCase(t, node, "/v1/responses", c, "agents.mjs", "responses", mode, "apply_patch")
		})
	}
}

// TestLibs_AISDKBuiltins: the AI SDK's OpenAI built-ins on its Responses provider,
// generateText and streamText: openai.tools.shell, localShell and applyPatch, each
// executed by the SDK with the forced call's action or operation, its output sent back
// as the built-in's output item and read into the engine's next prompt.
func TestLibs_AISDKBuiltins(t *testing.T) {
	node := nodetest.Node(t, libsDir)
	r := newLibRig(t)
	for _, mode := range []string{"generate", "stream"} {
		for _, b := range []struct{ name, args string }{
			{"shell", `{"commands": ["echo KEY"]}`},
			{"local_shell", `{"command": ["echo", "KEY"]}`},
			{"apply_patch", `{"type": "create_file", "path": "KEY.txt", "diff": "+hello\n"}`},
		} {
			t.Run(b.name+"/"+mode, func(t *testing.T) {
				key := "aisdk-" + strings.ReplaceAll(b.name, "_", "-") + "-" + mode
				c := newLibCaseOf(key, b.name, strings.ReplaceAll(b.args, "KEY", key))
				c.sent = b.name + "_call_output"
				r.runCase(t, node, "/v1/responses", c, "aisdk.mjs", "responses", mode, b.name)
			})
		}
	}
}

// TestLibs_LangChainBuiltins: @langchain/openai's tools.shell and localShell bound to
// ChatOpenAI on Responses, whole and streamed, and tools.applyPatch whole: the call is
// read from the answer's tool_outputs, the tool runs its action, and its result goes
// back as a ToolMessage (a function_call_output for the built-in's call, which the
// gateway reads as that call's result). @langchain/openai 1.6.0 cannot send the
// built-in's own output item (its message coercion refuses a raw item, though its
// documentation shows one) and keeps no streamed apply_patch_call (its stream reader
// lists shell_call and local_shell_call, not apply_patch_call).
func TestLibs_LangChainBuiltins(t *testing.T) {
	node := nodetest.Node(t, libsDir)
	r := newLibRig(t)
	for _, b := range []struct{ name, mode, args string }{
		{"shell", "invoke", `{"commands": ["echo KEY"]}`},
		{"shell", "stream", `{"commands": ["echo KEY"]}`},
		{"local_shell", "invoke", `{"command": ["echo", "KEY"]}`},
		{"local_shell", "stream", `{"command": ["echo", "KEY"]}`},
		{"apply_patch", "invoke", `{"type": "create_file", "path": "KEY.txt", "diff": "+hello\n"}`},
	} {
		t.Run(b.name+"/"+b.mode, func(t *testing.T) {
			key := "langchain-" + strings.ReplaceAll(b.name, "_", "-") + "-" + b.mode
			c := newLibCaseOf(key, b.name, strings.ReplaceAll(b.args, "KEY", key))
			c.sent = b.name + "_call"
			r.runCase(t, node, "/v1/responses", c, "langchain.mjs", "responses", b.mode, b.name)
		})
	}
}
