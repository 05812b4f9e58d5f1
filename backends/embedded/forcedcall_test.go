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
// two tools, every one of 20 seeds at temperature 1 (10 per mode: the two modes build the
// same constraint, so each takes seeds of its own) ends in exactly one tool call to an
// allowed tool, finish_reason "tool_calls", whose arguments parse and validate against
// that tool's schema — the random weights sample anything the grammar allows. The test
// logs the completion tokens each call took.
func TestForcedCall_CompletesAsAValidCall(t *testing.T) {
	b := newBackend(t, Options{})
	const seeds, maxTokens = 10, 256
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
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var used []int
			calls := map[string]int{}
			for seed := i * seeds; seed < (i+1)*seeds; seed++ {
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
		})
	}
}

// TestForcedCall_CutShortIsStillACall: a required call that max_tokens cuts comes back,
// whole and streamed, as a tool call to an allowed tool with the arguments so far and
// finish_reason "length" (cut in the name: no call and no content), never as the
// template's text in the content.
func TestForcedCall_CutShortIsStillACall(t *testing.T) {
	b := newBackend(t, Options{})
	partial := 0
	for seed := range 4 {
		for _, stream := range []bool{false, true} {
			body := chatBody(t, map[string]any{
				"messages":    msgs("user", "Do what you must."),
				"tools":       forcedToolsJSON(),
				"tool_choice": "required",
				"max_tokens":  18 + 4*seed,
				"seed":        seed,
				"temperature": 1.0,
				"stream":      stream,
			})
			resp, err := b.ChatCompletion(context.Background(), &backends.Request{Body: body, Model: "tiny", Stream: stream, Allowed: []string{"get_weather", "send_email"}})
			if err != nil {
				t.Fatal(err)
			}
			var content, finish string
			var calls []oai.FunctionCall
			if stream {
				for _, c := range readAll(t, resp.Stream) {
					if len(c.Choices) == 0 {
						continue
					}
					d := c.Choices[0].Delta
					if d.Content != nil {
						content += *d.Content
					}
					for _, tc := range d.ToolCalls {
						if tc.Function.Name != "" {
							calls = append(calls, oai.FunctionCall{Name: tc.Function.Name})
						}
						if n := len(calls); n > 0 {
							calls[n-1].Arguments += tc.Function.Arguments
						}
					}
					if c.Choices[0].FinishReason != nil {
						finish = *c.Choices[0].FinishReason
					}
				}
			} else {
				var cc oai.ChatCompletion
				if err := json.Unmarshal(resp.Body, &cc); err != nil {
					t.Fatal(err)
				}
				ch := cc.Choices[0]
				finish = ch.FinishReason
				if ch.Message.Content != nil {
					content = *ch.Message.Content
				}
				for _, tc := range ch.Message.ToolCalls {
					calls = append(calls, tc.Function)
				}
			}
			where := fmt.Sprintf("seed %d stream %v", seed, stream)
			if finish != oai.FinishLength || content != "" || len(calls) > 1 {
				t.Errorf("%s: finish %q, content %q, %d calls; want length, no content, at most one call", where, finish, content, len(calls))
				continue
			}
			if len(calls) == 1 {
				if !slices.Contains([]string{"get_weather", "send_email"}, calls[0].Name) {
					t.Errorf("%s: called %q", where, calls[0].Name)
				}
				if json.Valid([]byte(calls[0].Arguments)) {
					t.Logf("%s: the call was whole at the limit: %s", where, calls[0].Arguments)
				} else {
					partial++
				}
				t.Logf("%s: %s(%s)", where, calls[0].Name, calls[0].Arguments)
			}
		}
	}
	if partial == 0 {
		t.Error("no run was cut inside the arguments: the test proves nothing")
	}
}
