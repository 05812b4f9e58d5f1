package main

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/maskgate/maskgate/internal/enginetest"
	"github.com/maskgate/maskgate/internal/mcptest"
)

// mcpCutWords is the text remote_echo's arguments must hold in TestMCP_ToolRunOnARealEngine:
// 60 words, so that the call, which the grammar makes write them, takes at least 60
// tokens however the model splits them (a token of the engine's byte-level BPE never
// spans two words), more than mcpCutTokens.
var mcpCutWords = strings.TrimSpace(strings.Repeat("alpha bravo charlie delta echo foxtrot golf hotel india juliet ", 6))

// The max_tokens of the two requests in TestMCP_ToolRunOnARealEngine, from the bytes of
// the calls the grammar allows (masking's GBNF for Hermes, each ws at most 21 bytes),
// which bound their tokens from above whatever the model samples:
//   - mcpCutTokens: `<tool_call>` `\n{"name": "remote_echo"` is 34 bytes, so within 40
//     tokens the call's name is whole and the gateway reads a call, cut in its
//     arguments (mcpCutWords needs 60 tokens more).
//   - mcpRunTokens: the longest call to remote_add, whose arguments are {"a": 2, "b": 3}
//     with 8 places for whitespace, is 243 bytes; 300 tokens always finish it.
const (
	mcpCutTokens = 40
	mcpRunTokens = 300
)

// mcpSeed is the seed of both requests. Each outcome is made by max_tokens and the
// schema's grammar, not by the seed: seeds 1, 2 and 7 gave the same outcomes (see the
// commit that brought them in).
const mcpSeed = 7

// An MCP tool run by the gateway inside a chat completion on a real engine (llama-server
// with the tiny random-weight model, behind a proxy that records what it is sent): the
// client forces a call to an MCP tool, the engine makes it under the grammar of the
// tool's schema, and the engine answers after the gateway has handled the call; the
// client gets that answer and no call. The profiles' overrides give each tool a schema
// whose every value is a const, so the grammar writes the whole call and only max_tokens
// decides how it ends, for any seed:
//   - cut: remote_echo must echo mcpCutWords, and max_tokens (mcpCutTokens) ends the
//     call after its name, inside its arguments. The gateway runs nothing (a run counted
//     "error", no request to the MCP server) and the engine's next prompt holds the
//     gateway's "cut short … nothing ran" as the call's result.
//   - run: remote_add must add 2 and 3, and max_tokens (mcpRunTokens) finishes any call
//     the grammar allows. The gateway runs it on the MCP server (a run counted "ok") and
//     the engine's next prompt holds the call with those arguments and the server's
//     result, 5.
//
// Each profile holds its one tool, so a call the model starts again in its answer is the
// same outcome again.
func TestMCP_ToolRunOnARealEngine(t *testing.T) {
	ls := enginetest.Llama(t)
	proxy, wire := recordingProxy(t, ls.URL)
	remote := mcptest.HTTP(t)
	g := startRun(t, fmt.Sprintf(`backends:
  - {name: llama, kind: llamacpp, url: '%s', models: ['*'], timeout: 2m}
mcp_servers:
  - {name: remote, url: '%s', allow: [echo, add]}
profiles:
  - name: cut
    aliases: {cut: %q}
    tools:
      mcp: [remote]
      allow: [remote_echo]
      overrides:
        - tool: remote_echo
          parameters: {"type": "object", "properties": {"text": {"const": %q}}, "required": ["text"], "additionalProperties": false}
    search: {eager_below: 1000, max_rounds: 6}
  - name: run
    aliases: {run: %q}
    tools:
      mcp: [remote]
      allow: [remote_add]
      overrides:
        - tool: remote_add
          parameters: {"type": "object", "properties": {"a": {"const": 2}, "b": {"const": 3}}, "required": ["a", "b"], "additionalProperties": false}
    search: {eager_below: 1000, max_rounds: 6}
`, proxy.URL, remote.URL, ls.Model, mcpCutWords, ls.Model), nil)
	base := "http://" + g.addr
	runs := func(profile string) (ok, failed float64) {
		m := get(t, base+"/metrics")
		return metricValue(m, `maskgate_tool_run_seconds_count{outcome="ok",profile="`+profile+`"}`),
			metricValue(m, `maskgate_tool_run_seconds_count{outcome="error",profile="`+profile+`"}`)
	}
	// ask sends the forced call and returns the client's answer, what the runs metric
	// and the MCP server counted meanwhile, and the engine's rounds: each one's prompt
	// (/apply-template's answer) and completion (/completion's answer).
	type round struct {
		prompt     string
		completion struct {
			Content         string `json:"content"`
			StopType        string `json:"stop_type"`
			TokensPredicted int    `json:"tokens_predicted"`
		}
	}
	type answer struct {
		finish, content  string
		toolCalls        int
		ok, failed       float64
		served           int
		completionTokens int
		rounds           []round
	}
	ask := func(profile, tool string, maxTokens int) answer {
		t.Helper()
		okBefore, errBefore := runs(profile)
		reqBefore := remote.Requests()
		from := wire.len()
		began := time.Now()
		code, body := chat(t, base, "", fmt.Sprintf(`{"model":%q,"max_tokens":%d,"seed":%d,"temperature":1,"parallel_tool_calls":false,`,
			profile, maxTokens, mcpSeed)+
			`"tool_choice":{"type":"function","function":{"name":"`+tool+`"}},`+
			`"messages":[{"role":"user","content":"Call the tool."}]}`)
		if code != 200 {
			t.Fatalf("%s: %d %s\n%s", profile, code, body, g.stderr.String())
		}
		var out struct {
			Choices []struct {
				FinishReason string `json:"finish_reason"`
				Message      struct {
					Content   string            `json:"content"`
					ToolCalls []json.RawMessage `json:"tool_calls"`
				} `json:"message"`
			} `json:"choices"`
			Usage struct {
				CompletionTokens int `json:"completion_tokens"`
			} `json:"usage"`
		}
		if err := json.Unmarshal([]byte(body), &out); err != nil || len(out.Choices) != 1 {
			t.Fatalf("%s: the answer %s (%v): want one choice", profile, body, err)
		}
		if strings.Contains(body, tool) {
			t.Errorf("%s: the client got the gateway's call: %s", profile, body)
		}
		a := answer{finish: out.Choices[0].FinishReason, content: out.Choices[0].Message.Content,
			toolCalls: len(out.Choices[0].Message.ToolCalls), completionTokens: out.Usage.CompletionTokens}
		a.ok, a.failed = runs(profile)
		a.ok -= okBefore
		a.failed -= errBefore
		a.served = remote.Requests() - reqBefore
		wire.settle(t, from)
		done := wire.since(from, "/completion")
		applied := wire.since(from, "/apply-template")
		if len(applied) != len(done) {
			t.Fatalf("%s: %d /apply-template and %d /completion calls: want one of each a round", profile, len(applied), len(done))
		}
		for i := range done {
			var r round
			r.prompt = appliedPrompt(t, applied[i])
			if err := json.Unmarshal(done[i].resp, &r.completion); err != nil {
				t.Fatalf("%s: round %d's completion %.300s: %v", profile, i+1, done[i].resp, err)
			}
			a.rounds = append(a.rounds, r)
		}
		t.Logf("%s: %v, %d rounds, finish %s, usage %s", profile, time.Since(began).Round(time.Millisecond), len(a.rounds), a.finish, usageOf(body))
		return a
	}
	// common holds for both: the client gets the engine's last answer, with its finish
	// reason, and every round's tokens; the first round is the call, at least one more
	// answers after the gateway handled it.
	common := func(profile string, a answer) {
		t.Helper()
		if a.toolCalls != 0 {
			t.Errorf("%s: the client got %d tool calls, want none: the gateway handles the calls to its tools", profile, a.toolCalls)
		}
		if len(a.rounds) < 2 {
			t.Fatalf("%s: %d rounds on the engine, want the call and an answer after it", profile, len(a.rounds))
		}
		last := a.rounds[len(a.rounds)-1].completion
		want := "stop" // the end of generation, or a stop word
		if last.StopType == "limit" {
			want = "length"
		}
		if a.finish != want {
			t.Errorf("%s: finish_reason %q; the engine's last round stopped with %q, which is %q", profile, a.finish, last.StopType, want)
		}
		if a.content != last.Content {
			t.Errorf("%s: the client got %q; the engine's last round wrote %q", profile, a.content, last.Content)
		}
		sum := 0
		for _, r := range a.rounds {
			sum += r.completion.TokensPredicted
		}
		if a.completionTokens != sum {
			t.Errorf("%s: usage.completion_tokens %d; the engine predicted %d over %d rounds", profile, a.completionTokens, sum, len(a.rounds))
		}
	}

	// Run: the grammar finishes the call within max_tokens, and the gateway runs it.
	run := ask("run", "remote_add", mcpRunTokens)
	common("run", run)
	if run.ok < 1 || run.failed != 0 || run.served == 0 {
		t.Errorf("run: runs counted ok %+.0f, error %+.0f, %d requests to the MCP server: want a run (ok, requests)\n%s",
			run.ok, run.failed, run.served, grepLines(g.stderr.String(), "tool run"))
	}
	if first := run.rounds[0].completion; first.StopType == "limit" || first.TokensPredicted >= mcpRunTokens {
		t.Errorf("run: the first round stopped with %q after %d tokens: %q; want the whole call, ended by the grammar before max_tokens",
			first.StopType, first.TokensPredicted, first.Content)
	}
	p := run.rounds[1].prompt
	if args := promptCallArgs(p, "remote_add"); !reflect.DeepEqual(args, map[string]any{"a": 2.0, "b": 3.0}) {
		t.Errorf("run: the call in the engine's second prompt has arguments %v, want a 2 and b 3:\n%s", args, p)
	}
	if want := "<tool_response>\n5\n</tool_response>"; !strings.Contains(p, want) {
		t.Errorf("run: the engine's second prompt lacks the MCP server's result %q:\n%s", want, p)
	}

	// Cut: max_tokens ends the call inside its arguments.
	cut := ask("cut", "remote_echo", mcpCutTokens)
	common("cut", cut)
	if cut.ok != 0 || cut.failed < 1 || cut.served != 0 {
		t.Errorf("cut: runs counted ok %+.0f, error %+.0f, %d requests to the MCP server: want no run (error, no request)\n%s",
			cut.ok, cut.failed, cut.served, grepLines(g.stderr.String(), "tool run"))
	}
	if first := cut.rounds[0].completion; first.StopType != "limit" || first.TokensPredicted != mcpCutTokens ||
		!strings.Contains(first.Content, `"name": "remote_echo"`) || strings.Contains(first.Content, "</tool_call>") {
		t.Errorf("cut: the first round stopped with %q after %d tokens: %q; want the call cut by max_tokens (%d) after its name",
			first.StopType, first.TokensPredicted, first.Content, mcpCutTokens)
	}
	const cutResult = "<tool_response>\n" + `{"error":"the call to remote_echo was cut short by max_tokens before its arguments ended; nothing ran"}` + "\n</tool_response>"
	if p := cut.rounds[1].prompt; !strings.Contains(p, cutResult) {
		t.Errorf("cut: the engine's second prompt lacks the gateway's result %q:\n%s", cutResult, p)
	}
}

// settle waits up to 10s until every request that arrived from number from on is
// logged: the proxy logs an exchange after its last byte, which the gateway may have
// read and answered the client on already.
func (l *wireLog) settle(t *testing.T, from int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		l.mu.Lock()
		logged := 0
		for _, c := range l.calls {
			if c.seq >= from {
				logged++
			}
		}
		arrived := l.next - from
		l.mu.Unlock()
		if logged == arrived {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d requests to the engine logged after 10s", logged, arrived)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// promptCallArgs is the arguments of the first call to name in a Hermes prompt, nil if
// there is none or they do not parse.
func promptCallArgs(prompt, name string) map[string]any {
	_, rest, ok := strings.Cut(prompt, `<tool_call>`+"\n"+`{"name": "`+name+`", "arguments": `)
	if !ok {
		return nil
	}
	body, _, ok := strings.Cut(rest, "}\n</tool_call>")
	if !ok {
		return nil
	}
	var args map[string]any
	if json.Unmarshal([]byte(body), &args) != nil {
		return nil
	}
	return args
}

// usageOf is the usage object of a chat completion's body, for the log.
func usageOf(body string) string {
	var out struct {
		Usage json.RawMessage `json:"usage"`
	}
	json.Unmarshal([]byte(body), &out)
	return string(out.Usage)
}

// metricValue is the value of the exposition line that starts with series, 0 if none.
func metricValue(exposition, series string) float64 {
	for _, line := range strings.Split(exposition, "\n") {
		if rest, ok := strings.CutPrefix(line, series+" "); ok {
			v, _ := strconv.ParseFloat(strings.TrimSpace(rest), 64)
			return v
		}
	}
	return 0
}
