//go:build llamacpp

package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/maskgate/maskgate/bench/tinymodel"
	"github.com/maskgate/maskgate/internal/enginetest"
	"github.com/maskgate/maskgate/internal/mcptest"
)

// An MCP tool run by the gateway inside a chat completion on a real engine (the embedded
// llama.cpp with a random-weight model): the client forces a call to it, the engine
// makes the call (its arguments held to the tool's schema), the gateway runs it on the
// MCP server and gives the engine the result, and the engine answers; the client gets
// that answer and no call. The model's weights are random, so what it writes depends on
// the seed: with seed 5 its call's arguments end within max_tokens (with seeds 1–3 the
// arguments run on to max_tokens, and the gateway rightly runs nothing: the model gets
// "cut short" as the result).
func TestMCP_ToolRunOnARealEngine(t *testing.T) {
	dir, err := os.UserCacheDir()
	if err != nil {
		dir = t.TempDir()
	}
	model := enginetest.TinyModelFile(t, filepath.Join(dir, "maskgate", "models"), tinymodel.Options{})
	remote := mcptest.HTTP(t)
	g := startRun(t, fmt.Sprintf(`backends:
  - {name: engine, kind: embedded, model: %q, models: ['*']}
mcp_servers:
  - {name: remote, url: '%s', allow: [echo]}
profiles:
  - name: default
    tools: {mcp: [remote]}
    search: {eager_below: 1000, max_rounds: 6}
`, model, remote.URL), nil)
	base := "http://" + g.addr
	before := remote.Requests()
	code, body := chat(t, base, "", `{"model":"demo","max_tokens":400,"seed":5,`+
		`"tool_choice":{"type":"function","function":{"name":"remote_echo"}},`+
		`"messages":[{"role":"user","content":"Echo the word hello."}]}`)
	if code != 200 {
		t.Fatalf("%d %s\n%s", code, body, g.stderr.String())
	}
	var out struct {
		Choices []struct {
			Message struct {
				ToolCalls []json.RawMessage `json:"tool_calls"`
			} `json:"message"`
		} `json:"choices"`
	}
	json.Unmarshal([]byte(body), &out)
	if len(out.Choices) != 1 || len(out.Choices[0].Message.ToolCalls) != 0 || strings.Contains(body, "remote_echo") {
		t.Errorf("the client got the gateway's call: %s", body)
	}
	m := get(t, base+"/metrics")
	if !strings.Contains(m, `maskgate_tool_run_seconds_count{outcome="ok",profile="default"}`) {
		t.Errorf("no tool run counted:\n%s\n%s", grepLines(m, "tool_run_seconds_count"), grepLines(g.stderr.String(), "tool run"))
	}
	if remote.Requests() <= before {
		t.Error("the MCP server saw no request")
	}
}
