//go:build llamacpp

package gateway_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/maskgate/maskgate/backends/embedded"
	"github.com/maskgate/maskgate/backends/oai"
	"github.com/maskgate/maskgate/bench/tinymodel"
	"github.com/maskgate/maskgate/gateway"
	"github.com/maskgate/maskgate/internal/enginetest"
	"github.com/maskgate/maskgate/internal/nodetest"
	"github.com/maskgate/maskgate/toolsearch"
	"github.com/maskgate/maskgate/toolsearch/state"
)

// traceTools is the agent's catalog: 110 tools, the profile's and the client's alike,
// each with one schema written once so the two copies are the same bytes.
const traceTools = 110

func traceName(i int) string { return fmt.Sprintf("svc%03d_run", i) }
func traceDesc(i int) string { return fmt.Sprintf("Runs service %d and returns its report.", i) }
func traceSchema(i int) string {
	return `{"type":"object","properties":{"q":{"type":"string"}},"required":["q"]}`
}

func traceCatalog(t *testing.T) *toolsearch.Index {
	t.Helper()
	defs := make([]string, traceTools)
	for i := range defs {
		defs[i] = fmt.Sprintf(`{"type":"function","function":{"name":%q,"description":%q,"parameters":%s}}`, traceName(i), traceDesc(i), traceSchema(i))
	}
	tools, err := toolsearch.ParseTools([]byte("["+strings.Join(defs, ",")+"]"), "trace.json")
	if err != nil {
		t.Fatal(err)
	}
	cat, err := toolsearch.New(tools)
	if err != nil {
		t.Fatal(err)
	}
	return toolsearch.NewIndex(cat, toolsearch.Options{})
}

// The turns of a trace: even turns force the client's search tool (which discovers
// the next tool of discover), odd ones let the model call any tool it may.
var discover = []int{40, 77, 103}

const traceTurns = 6

// traceEngine starts the embedded engine behind a recorder and a gateway with the
// 110-tool catalog under strategy ("" for none: tools unmanaged).
func traceEngine(t *testing.T, strategy gateway.Strategy) (*recorder, *httptest.Server) {
	t.Helper()
	dir, err := os.UserCacheDir()
	if err != nil {
		dir = t.TempDir()
	}
	model := enginetest.TinyModelFile(t, filepath.Join(dir, "maskgate", "models"), tinymodel.Options{})
	be, err := embedded.New(embedded.Options{ModelPath: model, NumCtx: 16384, Slots: 1, Threads: enginetest.Threads})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { be.Close() })
	obs := &recorder{Backend: be, prompt: renderedPrompt(be)}
	opt := gateway.Options{Upstreams: []gateway.Upstream{{Name: "embedded", Kind: "embedded", Models: []string{"*"}, Backend: obs}}}
	if strategy != "" { // "": tools pass through as the client sends them
		opt.Tools, opt.State, opt.Strategy = traceCatalog(t), state.NewMemory(state.Options{}), strategy
	}
	gw := httptest.NewServer(gateway.New(opt))
	t.Cleanup(gw.Close)
	return obs, gw
}

// checkTrace holds the engine's rounds to the trace's promises: after the first, each
// prompt was served at least 95 % from the cache the previous one left, and every tool
// called was one the client had made callable by then (callable[i] for round i).
func checkTrace(t *testing.T, obs *recorder, callable [][]string) {
	t.Helper()
	if len(obs.rounds) != len(callable) {
		t.Fatalf("%d engine rounds, want %d (one per turn)", len(obs.rounds), len(callable))
	}
	for i, r := range obs.rounds {
		for _, name := range r.called {
			if !slices.Contains(callable[i], name) {
				t.Errorf("turn %d: the engine called %q, which the client had not made callable (%v)", i, name, callable[i])
			}
		}
		if i == 0 {
			continue
		}
		prev := obs.rounds[i-1].prompt
		if float64(r.cached) < 0.95*float64(prev) {
			t.Errorf("turn %d: %d of %d prompt tokens cached, under 95 %% of the previous prompt's %d: the prefix moved", i, r.cached, r.prompt, prev)
		}
		t.Logf("turn %d: prompt %d tokens, %d cached (%.1f %% of the previous prompt); called %v", i, r.prompt, r.cached, 100*float64(r.cached)/float64(prev), r.called)
	}

	// Control: the same engine requests without the constraint, a call still forced
	// ("required") but free to name any tool of the prompt, leave the callable set: the
	// mask, not the model's taste, kept the trace's calls in. Only the called name is
	// graded, and it is whole within the call's first dozen tokens, so the control stops
	// at controlTokens instead of writing the arguments out to the trace's max_tokens.
	strays := 0
	for i, r := range obs.rounds {
		req := r.sent
		req.Allowed = nil
		body, err := oai.Set(req.Body, "tool_choice", []byte(`"required"`))
		for _, k := range []string{"max_tokens", "max_completion_tokens"} { // the Responses door sends the second
			if err == nil {
				body, err = oai.Set(body, k, []byte(strconv.Itoa(controlTokens)))
			}
		}
		if err != nil {
			t.Fatal(err)
		}
		req.Body = body
		for seed := range 5 {
			if req.Body, err = oai.Set(req.Body, "seed", []byte(strconv.Itoa(100*i+seed))); err != nil {
				t.Fatal(err)
			}
			resp, err := obs.Backend.ChatCompletion(t.Context(), &req)
			if err != nil {
				t.Fatalf("control turn %d: %v", i, err)
			}
			a, err := readAnswer(resp.Body)
			if err != nil {
				t.Fatal(err)
			}
			for _, name := range a.called {
				if judgeCall(callable[i], name) == callDisabled {
					strays++
				}
			}
		}
	}
	if strays < 3 {
		t.Errorf("unconstrained, the same requests left the callable set %d times in %d; want ≥ 3, or the trace proves nothing", strays, 5*len(obs.rounds))
	}
	t.Logf("unconstrained control: %d of %d calls outside the callable set", strays, 5*len(obs.rounds))
}

// controlTokens bounds each control request of checkTrace: the call's opening and the
// longest name of the trace's catalog ("svc109_run") take about twelve tokens of the tiny
// model's vocabulary.
const controlTokens = 20

func postJSON(t *testing.T, url string, body any, header ...string) map[string]any {
	t.Helper()
	b, err := json.Marshal(body)
	if err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(string(b)))
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || resp.StatusCode != 200 {
		t.Fatalf("POST %s: status %d, %v: %v", url, resp.StatusCode, out, err)
	}
	return out
}

// TestDoorsEngine_MessagesTraceWithClientToolSearch is an Anthropic-API agent with tool
// search on the embedded engine: it sends 8 core tools and its own ToolSearch, names the
// 102 deferred tools in its system prompt, and each search it runs answers with a
// tool_reference, the found tool then joining its tools with defer_loading. Through the
// Messages door the engine's prompt only grows at the end, and no tool the client has
// not found is ever called.
func TestDoorsEngine_MessagesTraceWithClientToolSearch(t *testing.T) {
	obs, gw := traceEngine(t, gateway.StrategyMask)
	checkTrace(t, obs, messagesTrace(t, gw, discover))
	t.Run("unmanaged_for_contrast", func(t *testing.T) {
		// The same agent with its tools passed as it sends them: each discovery grows
		// the tools array, and the engine's prompt changes before the conversation.
		obs, gw := traceEngine(t, "")
		messagesTrace(t, gw, discover)
		moved := 0
		for i := 1; i < len(obs.rounds); i++ {
			if float64(obs.rounds[i].cached) < 0.95*float64(obs.rounds[i-1].prompt) {
				moved++
			}
			t.Logf("unmanaged turn %d: prompt %d tokens, %d cached", i, obs.rounds[i].prompt, obs.rounds[i].cached)
		}
		if moved < len(discover) {
			t.Errorf("as sent, the prefix moved on %d turns, want ≥ %d (one per discovery)", moved, len(discover))
		}
	})
}

// TestDoorsEngine_MessagesTraceWithAToolTheCatalogLacks is the Messages agent whose
// client tools differ from the catalog: its second discovery is a tool the profile's
// catalog does not hold. The README: "A tool the catalog lacks joins it when it is first
// shown: that is one move of the prefix". So the turn that first shows it recomputes
// part of the previous prompt, every other turn keeps at least 95 % of it cached, and
// no call leaves what the client made callable.
func TestDoorsEngine_MessagesTraceWithAToolTheCatalogLacks(t *testing.T) {
	obs, gw := traceEngine(t, gateway.StrategyMask)
	extra := traceName(traceTools) // svc110_run: the catalog has svc000–svc109
	callable := messagesTrace(t, gw, []int{discover[0], traceTools, discover[2]})
	shown := slices.IndexFunc(callable, func(c []string) bool { return slices.Contains(c, extra) })
	if shown < 1 || len(obs.rounds) != len(callable) {
		t.Fatalf("%s first callable on turn %d of %d (%d engine rounds)", extra, shown, len(callable), len(obs.rounds))
	}
	for i, r := range obs.rounds {
		for _, name := range r.called {
			if !slices.Contains(callable[i], name) {
				t.Errorf("turn %d: the engine called %q, which the client had not made callable", i, name)
			}
		}
		if i == 0 {
			continue
		}
		prev := obs.rounds[i-1].prompt
		t.Logf("turn %d: prompt %d tokens, %d cached (%.1f %% of the previous prompt)", i, r.prompt, r.cached, 100*float64(r.cached)/float64(prev))
		switch {
		case i == shown && r.cached >= prev:
			t.Errorf("turn %d shows %s first, yet all %d tokens of the previous prompt were cached: the tool did not join the prompt's catalog", i, extra, prev)
		case i != shown && float64(r.cached) < 0.95*float64(prev):
			t.Errorf("turn %d: %d of the previous prompt's %d tokens cached: the prefix moved again after turn %d", i, r.cached, prev, shown)
		}
	}
}

// messagesTrace runs the Messages agent's turns against gw, its searches finding the
// tools disc numbers in turn, and returns, per turn, what the client had made callable.
func messagesTrace(t *testing.T, gw *httptest.Server, disc []int) [][]string {
	t.Helper()
	anthropicTool := func(i int, deferred bool) map[string]any {
		m := map[string]any{"name": traceName(i), "description": traceDesc(i), "input_schema": json.RawMessage(traceSchema(i))}
		if deferred {
			m["defer_loading"] = true
		}
		return m
	}
	tools := []any{map[string]any{"name": "ToolSearch", "description": "Search the deferred tools by keyword.",
		"input_schema": json.RawMessage(`{"type":"object","properties":{"query":{"type":"string"}},"required":["query"]}`)}}
	callable := []string{"ToolSearch"}
	for i := range 8 {
		tools = append(tools, anthropicTool(i, false))
		callable = append(callable, traceName(i))
	}
	var deferredNames []string
	for i := 8; i < traceTools; i++ {
		deferredNames = append(deferredNames, traceName(i))
	}
	for _, i := range disc {
		if i >= traceTools { // a tool the catalog lacks
			deferredNames = append(deferredNames, traceName(i))
		}
	}
	system := []any{map[string]any{"type": "text", "text": "You are a coding agent."},
		map[string]any{"type": "text", "text": "Deferred tools, found with ToolSearch: " + strings.Join(deferredNames, ", "), "cache_control": map[string]any{"type": "ephemeral"}}}
	messages := []any{map[string]any{"role": "user", "content": "Run the services the task needs."}}

	var perTurn [][]string
	found := 0
	for turn := range traceTurns {
		choice := map[string]any{"type": "any", "disable_parallel_tool_use": true}
		if turn%2 == 0 {
			choice = map[string]any{"type": "tool", "name": "ToolSearch", "disable_parallel_tool_use": true}
		}
		perTurn = append(perTurn, slices.Clone(callable))
		out := postJSON(t, gw.URL+"/v1/messages?beta=true", map[string]any{"model": "tiny", "max_tokens": 48, "system": system,
			"messages": messages, "tools": tools, "tool_choice": choice, "temperature": 1.0, "metadata": map[string]any{"user_id": "agent-1"}})
		content, _ := out["content"].([]any)
		messages = append(messages, map[string]any{"role": "assistant", "content": content})
		var results []any
		for _, b := range content {
			block := b.(map[string]any)
			if block["type"] != "tool_use" {
				continue
			}
			result := map[string]any{"type": "tool_result", "tool_use_id": block["id"], "content": "done"}
			if block["name"] == "ToolSearch" && found < len(disc) {
				i := disc[found]
				found++
				result["content"] = []any{map[string]any{"type": "tool_reference", "tool_name": traceName(i)}}
				tools = append(tools, anthropicTool(i, true))
				callable = append(callable, traceName(i))
			}
			results = append(results, result)
		}
		if len(results) == 0 {
			t.Fatalf("turn %d: no tool_use in %v", turn, out)
		}
		messages = append(messages, map[string]any{"role": "user", "content": results})
	}
	if found != len(disc) {
		t.Errorf("the agent found %d tools, want %d", found, len(disc))
	}
	return perTurn
}

// TestDoorsEngine_ResponsesTraceWithClientToolSearch is a Responses-API agent with a
// client-executed tool_search: each search's tool_search_output brings the found tool
// with defer_loading, and every turn continues the last with previous_response_id,
// sending only its new items.
func TestDoorsEngine_ResponsesTraceWithClientToolSearch(t *testing.T) {
	obs, gw := traceEngine(t, gateway.StrategyMask)
	fn := func(i int, deferred bool) map[string]any {
		m := map[string]any{"type": "function", "name": traceName(i), "description": traceDesc(i), "parameters": json.RawMessage(traceSchema(i)), "strict": false}
		if deferred {
			m["defer_loading"] = true
		}
		return m
	}
	tools := []any{map[string]any{"type": "tool_search", "execution": "client"}}
	callable := []string{"tool_search"}
	for i := range 8 {
		tools = append(tools, fn(i, false))
		callable = append(callable, traceName(i))
	}
	input := []any{map[string]any{"role": "developer", "content": "You are a coding agent; find more tools with tool_search."},
		map[string]any{"role": "user", "content": "Run the services the task needs."}}
	previous := ""
	var perTurn [][]string
	found := 0
	for turn := range traceTurns {
		choice := any("required")
		if turn%2 == 0 {
			choice = map[string]any{"type": "function", "name": "tool_search"}
		}
		perTurn = append(perTurn, slices.Clone(callable))
		body := map[string]any{"model": "tiny", "input": input, "tools": tools, "tool_choice": choice, "parallel_tool_calls": false,
			"max_output_tokens": 48, "temperature": 1.0, "prompt_cache_key": "agent-2"}
		if previous != "" {
			body["previous_response_id"] = previous
		}
		out := postJSON(t, gw.URL+"/v1/responses", body)
		previous, _ = out["id"].(string)
		input = nil
		for _, it := range out["output"].([]any) {
			item := it.(map[string]any)
			switch item["type"] {
			case "tool_search_call":
				result := map[string]any{"type": "tool_search_output", "call_id": item["call_id"], "execution": "client", "status": "completed", "tools": []any{}}
				if found < len(discover) {
					i := discover[found]
					found++
					result["tools"] = []any{fn(i, true)}
					callable = append(callable, traceName(i))
				}
				input = append(input, result)
			case "function_call":
				input = append(input, map[string]any{"type": "function_call_output", "call_id": item["call_id"], "output": "done"})
			}
		}
		if len(input) == 0 {
			t.Fatalf("turn %d: no call in %v", turn, out)
		}
	}
	if found != len(discover) {
		t.Errorf("the agent found %d tools, want %d", found, len(discover))
	}
	checkTrace(t, obs, perTurn)
}

// TestDoorsEngine_SDKs drives the official openai and @anthropic-ai/sdk Node packages
// through the Responses (HTTP and WebSocket) and Messages doors to the embedded engine:
// what a random-weight model says is noise, so the test holds the shapes the SDKs
// parsed, the forced calls' names and arguments, and the engine's own usage.
func TestDoorsEngine_SDKs(t *testing.T) {
	node := nodetest.Node(t, nodeDir)
	dir, err := os.UserCacheDir()
	if err != nil {
		dir = t.TempDir()
	}
	model := enginetest.TinyModelFile(t, filepath.Join(dir, "maskgate", "models"), tinymodel.Options{})
	be, err := embedded.New(embedded.Options{ModelPath: model, NumCtx: 4096, Slots: 1, Threads: enginetest.Threads})
	if err != nil {
		t.Fatal(err)
	}
	defer be.Close()
	gw := httptest.NewServer(gateway.New(gateway.Options{
		Upstreams: []gateway.Upstream{{Name: "embedded", Kind: "embedded", Models: []string{"*"}, Backend: be}},
	}))
	defer gw.Close()
	run := func(t *testing.T, scenario string) map[string]any {
		t.Helper()
		code, out := runDoors(t, node, gw.URL, scenario, "MODEL=tiny", "FORCE=1")
		if code != 0 {
			t.Fatalf("%s: exit %d: %v", scenario, code, out)
		}
		return out
	}
	// city reads a forced get_weather call's arguments: a JSON object with a string city.
	city := func(t *testing.T, args any) {
		t.Helper()
		var a struct {
			City *string `json:"city"`
		}
		s, ok := args.(string)
		if !ok {
			b, _ := json.Marshal(args)
			s = string(b)
		}
		if err := json.Unmarshal([]byte(s), &a); err != nil || a.City == nil {
			t.Errorf("arguments %v are not get_weather's: %v", args, err)
		}
	}
	positive := func(t *testing.T, u any, keys ...string) {
		t.Helper()
		m, _ := u.(map[string]any)
		for _, k := range keys {
			if n, _ := m[k].(float64); n <= 0 {
				t.Errorf("usage %s = %v in %v, want the engine's count", k, m[k], m)
			}
		}
	}

	t.Run("responses", func(t *testing.T) {
		out := run(t, "responses-text")
		if out["status"] != "completed" && out["status"] != "incomplete" {
			t.Errorf("status %v", out["status"])
		}
		positive(t, out["usage"], "input_tokens", "output_tokens")
		out = run(t, "responses-stream")
		if out["deltas"] != out["output_text"] {
			t.Errorf("streamed deltas %q, final text %q", out["deltas"], out["output_text"])
		}
		types := toStrings(out["types"])
		if types[0] != "response.created" || !slices.Contains(types, "response.output_text.delta") {
			t.Errorf("events %v", types)
		}
	})
	t.Run("responses_tools", func(t *testing.T) {
		out := run(t, "responses-tools")
		first := out["first"].([]any)
		call := first[len(first)-1].(map[string]any)
		if call["type"] != "function_call" || call["name"] != "get_weather" {
			t.Fatalf("forced call %v", first)
		}
		city(t, call["arguments"])
		// The second turn continued the first by id: the engine's cache held its prompt.
		positive(t, out["usage"], "input_tokens", "cached_tokens")
		if out["fetched_id"] == nil || out["deleted"] == nil {
			t.Errorf("retrieve/delete %v", out)
		}
	})
	t.Run("responses_websocket", func(t *testing.T) {
		out := run(t, "responses-ws")
		// A random model runs to max_output_tokens as often as not: incomplete is an end.
		ended := []any{"response.completed", "response.incomplete"}
		if !slices.Contains(ended, out["first"]) || !slices.Contains(ended, out["second"]) {
			t.Errorf("summary %v", out)
		}
		positive(t, out["second_usage"], "input_tokens", "cached_tokens")
	})
	t.Run("messages", func(t *testing.T) {
		out := run(t, "messages-text")
		if out["type"] != "message" || out["role"] != "assistant" {
			t.Errorf("message %v", out)
		}
		positive(t, out["usage"], "input_tokens", "output_tokens")
		out = run(t, "messages-stream")
		if out["deltas"] != out["text"] {
			t.Errorf("streamed deltas %q, final text %q", out["deltas"], out["text"])
		}
		out = run(t, "messages-tools")
		use, _ := out["tool_use"].(map[string]any)
		if out["stop_reason"] != "tool_use" || use == nil || use["name"] != "get_weather" {
			t.Fatalf("forced tool_use %v", out)
		}
		city(t, use["input"])
		positive(t, out["usage"], "cache_read_input_tokens")
		out = run(t, "messages-count")
		if n, _ := out["input_tokens"].(float64); n <= 0 {
			t.Errorf("count_tokens %v", out)
		}
	})
}
