//go:build llamacpp

package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/maskgate/maskgate/bench/tinymodel"
	"github.com/maskgate/maskgate/internal/enginetest"
	"github.com/maskgate/maskgate/internal/mcptest"
)

// An MCP tool run by the gateway inside a chat completion on a real engine (the embedded
// llama.cpp with a random-weight model): the client forces a call to it, the engine
// makes the call (its arguments held to the tool's schema), and the engine answers; the
// client gets that answer and no call. The model's weights are random, so what it writes
// depends on the seed, and the test runs seeds 3 and 4 and asserts, for each, what its
// outcome must be. Either the call's arguments ended within max_tokens: the gateway ran
// it on the MCP server (a run counted "ok", a request to the server). Or they ran on to
// max_tokens: the gateway rightly ran nothing (a run counted "error", no request to the
// server; the model gets "cut short" as the result). Each request is one or the other,
// never a mix; over the two seeds both happen (of seeds 1–5, 1–3 were cut short and 4–5
// ran), so neither branch is untested. Seeds 3 and 4 are the pair that has both: a
// seed cut short decodes 800 tokens (the call's 400 under its grammar, then the
// answer's 400), seed 3 6m42s and seed 4 (608 tokens) 11m36s on a two-core machine at
// load 18–25; seeds 1–5 took 683 s in the whole suite's run.
func TestMCP_ToolRunOnARealEngine(t *testing.T) {
	dir, err := os.UserCacheDir()
	if err != nil {
		dir = t.TempDir()
	}
	model := enginetest.TinyModelFile(t, filepath.Join(dir, "maskgate", "models"), tinymodel.Options{})
	remote := mcptest.HTTP(t)
	g := startRun(t, fmt.Sprintf(`backends:
  - {name: engine, kind: embedded, model: %q, threads: %d, models: ['*']}
mcp_servers:
  - {name: remote, url: '%s', allow: [echo]}
profiles:
  - name: default
    tools: {mcp: [remote]}
    search: {eager_below: 1000, max_rounds: 6}
`, model, enginetest.Threads, remote.URL), nil)
	base := "http://" + g.addr
	runs := func() (ok, failed float64) {
		m := get(t, base+"/metrics")
		return metricValue(m, `maskgate_tool_run_seconds_count{outcome="ok",profile="default"}`),
			metricValue(m, `maskgate_tool_run_seconds_count{outcome="error",profile="default"}`)
	}
	ran, cut := 0, 0
	const first, last = 3, 4
	for seed := first; seed <= last; seed++ {
		began := time.Now()
		okBefore, errBefore := runs()
		reqBefore := remote.Requests()
		code, body := chat(t, base, "", fmt.Sprintf(`{"model":"demo","max_tokens":400,"seed":%d,`, seed)+
			`"tool_choice":{"type":"function","function":{"name":"remote_echo"}},`+
			`"messages":[{"role":"user","content":"Echo the word hello."}]}`)
		if code != 200 {
			t.Fatalf("seed %d: %d %s\n%s", seed, code, body, g.stderr.String())
		}
		var out struct {
			Choices []struct {
				Message struct {
					ToolCalls []json.RawMessage `json:"tool_calls"`
				} `json:"message"`
			} `json:"choices"`
		}
		json.Unmarshal([]byte(body), &out)
		t.Logf("seed %d: %v, usage %s", seed, time.Since(began).Round(time.Second), usageOf(body))
		if len(out.Choices) != 1 || len(out.Choices[0].Message.ToolCalls) != 0 || strings.Contains(body, "remote_echo") {
			t.Errorf("seed %d: the client got the gateway's call: %s", seed, body)
		}
		okAfter, errAfter := runs()
		served := remote.Requests() - reqBefore
		switch {
		case okAfter > okBefore && errAfter == errBefore && served > 0:
			ran++
		case okAfter == okBefore && errAfter > errBefore && served == 0:
			cut++
		default:
			t.Errorf("seed %d: runs counted ok %+.0f, error %+.0f, %d requests to the MCP server: want a run (ok, requests) or a call cut short (error, none)\n%s",
				seed, okAfter-okBefore, errAfter-errBefore, served, grepLines(g.stderr.String(), "tool run"))
		}
	}
	t.Logf("of seeds %d–%d, %d ran the tool and %d were cut short by max_tokens", first, last, ran, cut)
	if ran == 0 || cut == 0 {
		t.Errorf("%d seeds ran the tool, %d were cut short: want both outcomes among seeds %d–%d", ran, cut, first, last)
	}
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
