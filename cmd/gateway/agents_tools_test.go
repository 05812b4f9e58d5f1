package main

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/maskgate/maskgate/backends/oai"
)

// The agents run a tool: the engine is made to call one on the agent's first turn, the
// agent runs it in its throwaway directory, and its result goes back through the door to
// the engine. The call is forced on the engine side by a grammar: between the gateway and
// llama-server a proxy replaces the grammar fields of the first /completion of the
// agent's turn with a grammar that admits only that one call, written in the tiny
// model's Hermes format (<tool_call>…</tool_call>, two special tokens), so the engine
// itself writes it, token by token, and then can only end. Everything else — the
// gateway's parse of the call, the door's tool_use or function_call, the agent's tool,
// the result's way back and the engine's rendering of it — is the real thing.

// noteText is what the test writes in the agent's file: a string no prompt holds unless
// the file was read.
const noteText = "maskgate-note: the parrot is called Q7-Zephyrine."

// forcedCall is the one call a rig's engine is made to write: in the first /completion
// whose prompt holds ask and declares the tool name, the gateway's grammar fields are
// replaced by a grammar that admits only the Hermes call {"name": name, "arguments": args}.
type forcedCall struct {
	ask  string
	name string
	args string // a JSON object

	mu  sync.Mutex
	seq int // the /completion that was forced; -1 until then
}

func newForcedCall(ask, name, args string) *forcedCall {
	return &forcedCall{ask: ask, name: name, args: args, seq: -1}
}

// text is the call as the engine must write it: the tiny model's template's own
// rendering of an assistant's call (bench/tinymodel/template.go).
func (f *forcedCall) text() string {
	return "<tool_call>\n{\"name\": \"" + f.name + "\", \"arguments\": " + f.args + "}\n</tool_call>"
}

// forced returns the sequence number of the forced /completion, or -1.
func (f *forcedCall) forced() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.seq
}

// rewrite returns the /completion body the engine gets: body itself, or, once, for the
// first prompt that holds f.ask and declares f.name, body with the grammar that forces
// f's call (not lazy: the output starts with the call; once it is closed llama.cpp
// allows only the end of generation). A logit_bias the gateway set goes too: it could
// ban the call's first token.
func (f *forcedCall) rewrite(t *testing.T, seq int, body []byte) []byte {
	raw, ok := oai.Get(body, "prompt")
	var prompt string
	if !ok || json.Unmarshal(raw, &prompt) != nil {
		return body
	}
	if !strings.Contains(prompt, f.ask) || !hasTool(prompt, f.name) {
		return body
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.seq >= 0 {
		return body
	}
	f.seq = seq
	grammar, err := json.Marshal("root ::= " + gbnfLiteral(f.text()))
	if err != nil {
		t.Error(err)
		return body
	}
	for _, del := range []string{"grammar_triggers", "logit_bias"} {
		if body, err = oai.Delete(body, del); err != nil {
			t.Errorf("forcing the call: %v", err)
			return body
		}
	}
	for _, kv := range [][2]string{{"grammar", string(grammar)}, {"grammar_lazy", "false"},
		{"preserved_tokens", `["<tool_call>","</tool_call>"]`}} {
		if body, err = oai.Set(body, kv[0], []byte(kv[1])); err != nil {
			t.Errorf("forcing the call: %v", err)
			return body
		}
	}
	return body
}

// gbnfLiteral writes s as a GBNF string literal (llama.cpp's grammars/README.md).
func gbnfLiteral(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`, "\r", `\r`, "\t", `\t`)
	return `"` + r.Replace(s) + `"`
}

// forcingProxy is recordingProxy with f's rewrite of each /completion; the log holds
// what the engine was sent.
func forcingProxy(t *testing.T, target string, f *forcedCall) (*httptest.Server, *wireLog) {
	log := &wireLog{}
	client := &http.Client{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seq := log.arrive()
		body, err := io.ReadAll(r.Body)
		if err != nil {
			panic(http.ErrAbortHandler)
		}
		if r.URL.Path == "/completion" {
			body = f.rewrite(t, seq, body)
		}
		relay(w, r, body, target, client, func(got []byte) {
			log.add(wireCall{seq: seq, method: r.Method, path: r.URL.Path, req: body, resp: got})
		})
	}))
	t.Cleanup(srv.Close)
	return srv, log
}

// writeNote writes noteText into name in a new throwaway directory and returns the
// directory and the file's absolute path.
func writeNote(t *testing.T, name string) (dir, path string) {
	t.Helper()
	dir = t.TempDir()
	path = filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(noteText+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir, path
}

// awaitWire returns the first exchange with path, of the requests that arrived from
// number from on, for which ok holds, waiting up to 10 s for it (a recording proxy logs
// an exchange after its last byte, which the gateway may have read and acted on already,
// and the agent exited after); false if none came.
func awaitWire(l *wireLog, from int, path string, ok func(wireCall) bool) (wireCall, bool) {
	deadline := time.Now().Add(10 * time.Second)
	for {
		for _, c := range l.since(from, path) {
			if ok(c) {
				return c, true
			}
		}
		if time.Now().After(deadline) {
			return wireCall{}, false
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// checkResultReachedEngine checks the engine's side of a tool's round trip: the forced
// /completion ended at the end of generation, no request before it held noteText (only
// the tool could bring it), and after it a rendered prompt holds the call, then a tool
// response with noteText in it, and a /completion carried that prompt.
func (g *agentRig) checkResultReachedEngine(t *testing.T, f *forcedCall, call string) {
	t.Helper()
	forced := f.forced()
	if forced < 0 {
		t.Fatalf("no /completion held %q with %s declared: the call was never forced; gateway log:\n%s", f.ask, f.name, g.logs.String())
	}
	c, ok := awaitWire(g.wire, forced, "/completion", func(c wireCall) bool { return c.seq == forced })
	if !ok {
		t.Fatalf("the forced /completion #%d was never answered", forced)
	}
	if !bytes.Contains(c.resp, []byte(`"stop_type":"eos"`)) {
		t.Errorf("the forced /completion did not end at the end of generation: %.600s", c.resp)
	}
	for _, path := range []string{"/apply-template", "/completion"} {
		for _, c := range g.wire.since(0, path) {
			if c.seq < forced && bytes.Contains(c.req, []byte(noteText)) {
				t.Errorf("%s #%d, before the forced call #%d, already held the note", path, c.seq, forced)
			}
		}
	}
	var prompt string
	applied, ok := awaitWire(g.wire, forced, "/apply-template", func(c wireCall) bool {
		p := appliedPrompt(t, c)
		callAt, respAt := strings.Index(p, call), strings.Index(p, "<tool_response>\n")
		if callAt >= 0 && respAt > callAt && strings.Contains(p[respAt:], noteText) {
			prompt = p
			return true
		}
		return false
	})
	if !ok {
		t.Fatalf("no prompt after the forced call #%d holds the call %q and then a tool response with the note; gateway log:\n%s",
			forced, call, g.logs.String())
	}
	if _, ok := awaitWire(g.wire, applied.seq, "/completion", func(c wireCall) bool {
		var body struct {
			Prompt string `json:"prompt"`
		}
		return json.Unmarshal(c.req, &body) == nil && body.Prompt == prompt
	}); !ok {
		t.Errorf("no /completion carried the prompt with the tool's response")
	}
	at := strings.Index(prompt, "<tool_response>\n")
	t.Logf("the engine's prompt #%d after the call: %q", applied.seq, prompt[at:min(len(prompt), at+240)])
}

// TestAgents_ClaudeCodeReadsAFile: Claude Code, asked about a file in its throwaway
// directory, with Read its only tool (--tools Read, allowed without a prompt), gets from
// the engine a Read of that file's absolute path on its first turn. It runs Read and
// exits 0 with a result; its next /v1/messages request carries the assistant's tool_use
// of Read with that path and, in the next user message, the tool_result for that
// tool_use's id holding the file's text; and the engine's next prompt holds the call and
// then the file's text as a tool response, where no engine request before the call held
// it.
func TestAgents_ClaudeCodeReadsAFile(t *testing.T) {
	claude := agentBinary(t, "claude")
	dir, path := writeNote(t, "parrot-note.txt")
	const ask = "What is the parrot called? The answer is in parrot-note.txt."
	args, err := json.Marshal(map[string]string{"file_path": path})
	if err != nil {
		t.Fatal(err)
	}
	f := newForcedCall(ask, "Read", string(args))
	g := newAgentRigForcing(t, "", f)
	g.runClaudeAsking(t, claude, dir, claudeEnv(t.TempDir(), g.base), ask, "--tools", "Read", "--allowedTools", "Read")

	// Through the door: the request after the call.
	type block struct {
		Type      string          `json:"type"`
		ID        string          `json:"id"`
		Name      string          `json:"name"`
		Input     json.RawMessage `json:"input"`
		ToolUseID string          `json:"tool_use_id"`
		Content   json.RawMessage `json:"content"`
	}
	type message struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	}
	found := false
	for _, c := range g.front.all() {
		var body struct {
			Messages []message `json:"messages"`
		}
		if c.Path != "/v1/messages" || json.Unmarshal(c.Req, &body) != nil {
			continue
		}
		for i, m := range body.Messages {
			var blocks []block
			if m.Role != "assistant" || json.Unmarshal(m.Content, &blocks) != nil {
				continue
			}
			for _, b := range blocks {
				if b.Type != "tool_use" || b.Name != "Read" {
					continue
				}
				var in struct {
					FilePath string `json:"file_path"`
				}
				if err := json.Unmarshal(b.Input, &in); err != nil || in.FilePath != path {
					t.Errorf("Claude Code's tool_use of Read has input %s, want file_path %q", b.Input, path)
				}
				if i+1 == len(body.Messages) || body.Messages[i+1].Role != "user" {
					t.Errorf("no user message follows the tool_use of Read")
					continue
				}
				var results []block
				if err := json.Unmarshal(body.Messages[i+1].Content, &results); err != nil {
					t.Errorf("the message after the tool_use: %v: %.300s", err, body.Messages[i+1].Content)
				}
				for _, r := range results {
					if r.Type == "tool_result" && r.ToolUseID == b.ID {
						found = true
						if !bytes.Contains(r.Content, []byte(noteText)) {
							t.Errorf("the tool_result of Read does not hold the file's text: %.600s", r.Content)
						}
					}
				}
			}
		}
		if found {
			t.Logf("Claude Code sent the Read's result in a %s %s answered %d, strategy %q", c.Method, c.Path, c.Status, c.Strategy)
			break
		}
	}
	if !found {
		t.Fatalf("no /v1/messages request carried a tool_result for a tool_use of Read: %d requests", g.front.len())
	}

	// To the engine.
	g.checkResultReachedEngine(t, f, `{"name": "Read", "arguments": `)
}

// TestAgents_CodexRunsACommand: Codex exec, asked about a file in its throwaway
// directory (read-only sandbox, over HTTP), gets from the engine a call of its shell
// tool, exec_command, with cmd "cat parrot-note.txt" on its first turn. It runs the
// command in its sandbox and exits 0; its next POST /v1/responses carries the
// function_call with those arguments and the function_call_output for its call_id
// holding the file's text; and the engine's next prompt holds the call and then the
// file's text as a tool response, where no engine request before the call held it.
func TestAgents_CodexRunsACommand(t *testing.T) {
	codex := agentBinary(t, "codex")
	dir, _ := writeNote(t, "parrot-note.txt")
	const ask, cmd = "What is the parrot called? The answer is in parrot-note.txt.", "cat parrot-note.txt"
	args := `{"cmd": ` + strconv.Quote(cmd) + `}`
	f := newForcedCall(ask, "exec_command", args)
	g := newAgentRigForcing(t, "", f)
	g.runAgent(t, 90*time.Second, dir, g.codexEnv(t, "", ""), codex, "exec", "--sandbox", "read-only", "--skip-git-repo-check", ask)

	// Through the door: the request after the call.
	type item struct {
		Type      string          `json:"type"`
		Name      string          `json:"name"`
		Arguments string          `json:"arguments"`
		CallID    string          `json:"call_id"`
		Output    json.RawMessage `json:"output"`
	}
	found := false
	for _, c := range g.front.all() {
		var body struct {
			Input []item `json:"input"`
		}
		if c.Method != http.MethodPost || c.Path != "/v1/responses" || json.Unmarshal(c.Req, &body) != nil {
			continue
		}
		for _, call := range body.Input {
			if call.Type != "function_call" || call.Name != "exec_command" {
				continue
			}
			var in struct {
				Cmd string `json:"cmd"`
			}
			if err := json.Unmarshal([]byte(call.Arguments), &in); err != nil || in.Cmd != cmd {
				t.Errorf("Codex's function_call of exec_command has arguments %s, want cmd %q", call.Arguments, cmd)
			}
			for _, out := range body.Input {
				if out.Type == "function_call_output" && out.CallID == call.CallID {
					found = true
					if !bytes.Contains(out.Output, []byte(noteText)) {
						t.Errorf("the function_call_output of exec_command does not hold the file's text: %.600s", out.Output)
					}
				}
			}
		}
		if found {
			t.Logf("Codex sent the command's output in a %s %s answered %d, strategy %q", c.Method, c.Path, c.Status, c.Strategy)
			break
		}
	}
	if !found {
		t.Fatalf("no POST /v1/responses carried a function_call_output for a function_call of exec_command: %d requests", g.front.len())
	}

	// To the engine.
	g.checkResultReachedEngine(t, f, `{"name": "exec_command", "arguments": `)
}
