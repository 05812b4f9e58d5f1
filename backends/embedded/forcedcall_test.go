//go:build llamacpp

package embedded

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"testing"

	"github.com/maskgate/maskgate/backends"
	"github.com/maskgate/maskgate/backends/oai"
	"github.com/maskgate/maskgate/internal/schemacheck"
)

// forcedTools are small schemas a random-weight model can complete: enums, an integer,
// a boolean, short strings. The catalog holds two more tools that are never allowed.
var forcedTools = []struct{ name, params string }{
	{"get_weather", `{"type":"object","properties":{"city":{"type":"string","maxLength":12},"unit":{"type":"string","enum":["celsius","fahrenheit"]},"days":{"type":"integer"}},"required":["city","unit"]}`},
	{"send_email", `{"type":"object","properties":{"to":{"type":"string","maxLength":16},"urgent":{"type":"boolean"},"priority":{"enum":["low","high"]}},"required":["to","urgent"]}`},
	{"delete_row", `{"type":"object","properties":{"id":{"type":"integer"}},"required":["id"]}`},
	{"get_file", `{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`},
}

func forcedToolsJSON() []map[string]any {
	var out []map[string]any
	for _, t := range forcedTools {
		out = append(out, map[string]any{"type": "function", "function": map[string]any{"name": t.name, "parameters": json.RawMessage(t.params)}})
	}
	return out
}

// TestForcedCall_CompletesAsAValidCall: with tool_choice "required" (the gateway's loaded
// set narrowing the catalog to two tools) and with allowed_tools in mode required naming
// two tools, every one of 20 seeds at temperature 1 ends in exactly one tool call to an
// allowed tool, finish_reason "tool_calls", whose arguments parse and validate against
// that tool's schema — the random weights sample anything the grammar allows. The test
// logs the completion tokens each call took.
func TestForcedCall_CompletesAsAValidCall(t *testing.T) {
	b := newBackend(t, Options{})
	const seeds, maxTokens = 20, 256
	params := map[string]string{}
	for _, tl := range forcedTools {
		params[tl.name] = tl.params
	}
	allowed := []string{"get_weather", "send_email"}
	cases := []struct {
		name       string
		toolChoice any
		allowed    []string // Request.Allowed, as the gateway sends it under mask
	}{
		{"required", "required", allowed},
		{"allowed_tools", map[string]any{"type": "allowed_tools", "allowed_tools": map[string]any{"mode": "required",
			"tools": []map[string]any{{"type": "function", "function": map[string]any{"name": "get_weather"}}, {"type": "function", "function": map[string]any{"name": "send_email"}}}}}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var used []int
			calls := map[string]int{}
			for seed := range seeds {
				body := chatBody(t, map[string]any{
					"messages":    msgs("user", "Do what you must."),
					"tools":       forcedToolsJSON(),
					"tool_choice": c.toolChoice,
					"max_tokens":  maxTokens,
					"seed":        seed,
					"temperature": 1.0,
				})
				resp, err := b.ChatCompletion(context.Background(), &backends.Request{Body: body, Model: "tiny", Allowed: c.allowed, ToolsID: "forced-v1"})
				if err != nil {
					t.Fatal(err)
				}
				var cc oai.ChatCompletion
				if err := json.Unmarshal(resp.Body, &cc); err != nil {
					t.Fatal(err)
				}
				ch := cc.Choices[0]
				used = append(used, cc.Usage.CompletionTokens)
				if ch.FinishReason != oai.FinishToolCalls || len(ch.Message.ToolCalls) != 1 {
					t.Errorf("seed %d: finish %q, %d calls, content %v: not one whole call", seed, ch.FinishReason, len(ch.Message.ToolCalls), ch.Message.Content)
					continue
				}
				call := ch.Message.ToolCalls[0].Function
				if !slices.Contains(allowed, call.Name) {
					t.Errorf("seed %d: called %q, allowed %v", seed, call.Name, allowed)
					continue
				}
				if err := schemacheck.Validate([]byte(params[call.Name]), []byte(call.Arguments)); err != nil {
					t.Errorf("seed %d: %s(%s): %v", seed, call.Name, call.Arguments, err)
					continue
				}
				calls[call.Name]++
			}
			slices.Sort(used)
			t.Logf("%s: %d/%d seeds made one valid call (%v) at max_tokens %d; completion tokens min %d, median %d, max %d",
				c.name, calls["get_weather"]+calls["send_email"], seeds, calls, maxTokens, used[0], used[len(used)/2], used[len(used)-1])
			if fmt.Sprint(used) == "" {
				t.Fatal("no runs")
			}
		})
	}
}
