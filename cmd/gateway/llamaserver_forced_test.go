package main

import (
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/maskgate/maskgate/backends"
	"github.com/maskgate/maskgate/backends/oai"
	"github.com/maskgate/maskgate/config"
	"github.com/maskgate/maskgate/internal/enginetest"
	"github.com/maskgate/maskgate/internal/schemacheck"
)

// forcedToolsBody are small schemas a random-weight model can complete (enums, an
// integer, a boolean, short strings), and two tools that are never allowed.
const forcedToolsBody = `[
 {"type":"function","function":{"name":"get_weather","parameters":{"type":"object","properties":{"city":{"type":"string","maxLength":12},"unit":{"type":"string","enum":["celsius","fahrenheit"]},"days":{"type":"integer"}},"required":["city","unit"]}}},
 {"type":"function","function":{"name":"send_email","parameters":{"type":"object","properties":{"to":{"type":"string","maxLength":16},"urgent":{"type":"boolean"},"priority":{"enum":["low","high"]}},"required":["to","urgent"]}}},
 {"type":"function","function":{"name":"delete_row","parameters":{"type":"object","properties":{"id":{"type":"integer"}},"required":["id"]}}},
 {"type":"function","function":{"name":"get_file","parameters":{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}}}]`

// TestLlamaServer_ForcedCallCompletesAsAValidCall: against a real llama-server serving
// the tiny random-weight model, through the llamacpp backend as the gateway wires it
// (format detected from /props, the grammar from grammarFor), a call forced by
// tool_choice "required" with the loaded set narrowed to two tools, and by allowed_tools
// in mode required naming two tools, ends in one call to an allowed tool whose arguments
// parse and validate against its schema, for each of 20 seeds at temperature 1 (10 per
// mode: the two build the same grammar, so each takes seeds of its own).
// parallel_tool_calls is false: the grammar otherwise lets the random weights go on with
// more calls (as many as six of twenty seeds did, one of them to max_tokens).
func TestLlamaServer_ForcedCallCompletesAsAValidCall(t *testing.T) {
	srv := enginetest.Llama(t)
	be, err := newBackend(config.Backend{Name: "llama", Kind: "llamacpp", URL: srv.URL, Models: []string{"*"}}, "", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	var tools []struct {
		Function struct {
			Name       string          `json:"name"`
			Parameters json.RawMessage `json:"parameters"`
		} `json:"function"`
	}
	if err := json.Unmarshal([]byte(forcedToolsBody), &tools); err != nil {
		t.Fatal(err)
	}
	params := map[string][]byte{}
	for _, tl := range tools {
		params[tl.Function.Name] = tl.Function.Parameters
	}
	allowed := []string{"get_weather", "send_email"}
	const seeds, maxTokens = 10, 256
	cases := []struct {
		name, toolChoice string
		allowed          []string
	}{
		{"required", `"required"`, allowed},
		{"allowed_tools", `{"type":"allowed_tools","allowed_tools":{"mode":"required","tools":[{"type":"function","function":{"name":"get_weather"}},{"type":"function","function":{"name":"send_email"}}]}}`, nil},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var used []int
			valid := 0
			for seed := i * seeds; seed < (i+1)*seeds; seed++ {
				body := `{"model":"tiny","messages":[{"role":"user","content":"Do what you must."}],"tools":` + forcedToolsBody +
					`,"tool_choice":` + c.toolChoice + `,"parallel_tool_calls":false,"max_tokens":256,"temperature":1,"seed":` + itoa(seed) + `}`
				start := time.Now()
				resp, err := be.ChatCompletion(t.Context(), &backends.Request{Body: []byte(body), Model: "tiny", Allowed: c.allowed, ToolsID: "forced-v1"})
				if err != nil {
					t.Fatal(err)
				}
				var cc oai.ChatCompletion
				if err := json.Unmarshal(resp.Body, &cc); err != nil {
					t.Fatal(err)
				}
				ch := cc.Choices[0]
				used = append(used, cc.Usage.CompletionTokens)
				t.Logf("seed %d: %d tokens, %s", seed, cc.Usage.CompletionTokens, time.Since(start).Round(time.Millisecond))
				if ch.FinishReason != oai.FinishToolCalls || len(ch.Message.ToolCalls) != 1 {
					t.Errorf("seed %d: finish %q, %d calls, content %v: not one whole call", seed, ch.FinishReason, len(ch.Message.ToolCalls), ch.Message.Content)
					continue
				}
				call := ch.Message.ToolCalls[0].Function
				if !slices.Contains(allowed, call.Name) {
					t.Errorf("seed %d: called %q, allowed %v", seed, call.Name, allowed)
					continue
				}
				if err := schemacheck.Validate(params[call.Name], []byte(call.Arguments)); err != nil {
					t.Errorf("seed %d: %s(%s): %v", seed, call.Name, call.Arguments, err)
					continue
				}
				valid++
			}
			slices.Sort(used)
			t.Logf("%s: %d/%d seeds made one valid call at max_tokens %d; completion tokens min %d, median %d, max %d",
				c.name, valid, seeds, maxTokens, used[0], used[len(used)/2], used[len(used)-1])
		})
	}
}

func itoa(i int) string { b, _ := json.Marshal(i); return string(b) }
