//go:build llamacpp

package embedded

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/maskgate/maskgate/backends"
	"github.com/maskgate/maskgate/backends/oai"
	"github.com/maskgate/maskgate/bench/tinymodel"
	"github.com/maskgate/maskgate/internal/schemacheck"
)

// answerSchema has required string, integer, enum and array fields, every string
// bounded so the random-weight model's answer ends within the token limit.
const answerSchema = `{"type":"object","properties":{` +
	`"name":{"type":"string","minLength":1,"maxLength":12},"age":{"type":"integer"},` +
	`"color":{"type":"string","enum":["red","green","blue"]},` +
	`"tags":{"type":"array","items":{"type":"string","maxLength":8},"minItems":1,"maxItems":3}},` +
	`"required":["name","age","color","tags"],"additionalProperties":false}`

func answerFormat() json.RawMessage {
	return json.RawMessage(`{"type":"json_schema","json_schema":{"name":"person","strict":true,"schema":` + answerSchema + `}}`)
}

// answerOf runs req through ChatCompletion (whole or streamed) and returns the content,
// the calls and the finish reason.
func answerOf(t *testing.T, b *Backend, req map[string]any, stream bool) (string, []oai.ToolCall, string) {
	t.Helper()
	req["stream"] = stream
	resp, err := b.ChatCompletion(context.Background(), &backends.Request{Body: chatBody(t, req), Model: "tiny", Stream: stream})
	if err != nil {
		t.Fatal(err)
	}
	if !stream {
		var c oai.ChatCompletion
		if err := json.Unmarshal(resp.Body, &c); err != nil {
			t.Fatal(err)
		}
		content := ""
		if p := c.Choices[0].Message.Content; p != nil {
			content = *p
		}
		return content, c.Choices[0].Message.ToolCalls, c.Choices[0].FinishReason
	}
	var content strings.Builder
	var calls []oai.ToolCall
	finish := ""
	for _, ch := range readAll(t, resp.Stream) {
		for _, c := range ch.Choices {
			if c.Delta.Content != nil {
				content.WriteString(*c.Delta.Content)
			}
			for _, tc := range c.Delta.ToolCalls {
				i := 0
				if tc.Index != nil {
					i = *tc.Index
				}
				for len(calls) <= i {
					calls = append(calls, oai.ToolCall{})
				}
				calls[i].Function.Name += tc.Function.Name
				calls[i].Function.Arguments += tc.Function.Arguments
			}
			if c.FinishReason != nil {
				finish = *c.FinishReason
			}
		}
	}
	return content.String(), calls, finish
}

// TestAnswer_HeldToTheSchema: with response_format json_schema, on every seed, whole and
// streamed, the random-weight model's answer validates against the schema
// (internal/schemacheck, written apart from the renderer) and ends with "stop"; without
// it the same seed does not validate; json_object gives an object; a keyword the grammar
// cannot hold (format) is a 400 on response_format naming it.
func TestAnswer_HeldToTheSchema(t *testing.T) {
	b := newBackend(t, Options{})
	for seed := 1; seed <= 4; seed++ {
		for _, stream := range []bool{false, true} {
			content, calls, finish := answerOf(t, b, map[string]any{"messages": msgs("user", "Describe a person."), "seed": seed,
				"temperature": 1, "max_tokens": 300, "response_format": answerFormat()}, stream)
			if err := schemacheck.Validate([]byte(answerSchema), []byte(content)); err != nil || finish != "stop" || len(calls) != 0 {
				t.Errorf("seed %d stream %v: %q (finish %s) does not validate: %v", seed, stream, content, finish, err)
			}
		}
	}
	content, _, _ := answerOf(t, b, map[string]any{"messages": msgs("user", "Describe a person."), "seed": 1, "temperature": 1, "max_tokens": 60}, false)
	if schemacheck.Validate([]byte(answerSchema), []byte(content)) == nil {
		t.Errorf("without response_format the answer %q validates too: the test shows nothing", content)
	}
	content, _, _ = answerOf(t, b, map[string]any{"messages": msgs("user", "Any JSON."), "seed": 2, "temperature": 1, "max_tokens": 300,
		"response_format": json.RawMessage(`{"type":"json_object"}`)}, false)
	var obj map[string]json.RawMessage
	if err := json.Unmarshal([]byte(content), &obj); err != nil {
		t.Errorf("json_object answer %q: %v", content, err)
	}
	_, err := b.ChatCompletion(context.Background(), &backends.Request{Model: "tiny", Body: chatBody(t, map[string]any{"messages": msgs("user", "x"),
		"response_format": json.RawMessage(`{"type":"json_schema","json_schema":{"name":"x","schema":{"type":"string","format":"email"}}}`)})})
	var be *backends.Error
	if !errors.As(err, &be) || be.Status != 400 || be.Param != "response_format" || !strings.Contains(be.Message, `"format"`) {
		t.Errorf("format: got %v, want a 400 on response_format naming it", err)
	}
}

// TestAnswer_OrAnAllowedCall: a schema beside tools the model may call: on every seed the
// output is a call of an allowed tool whose arguments validate, or an answer that
// validates against the schema; a call of the tool the gateway did not allow never
// comes; tool_choice required gives calls only. parallel_tool_calls is false: the random
// model would otherwise chain calls up to the token limit.
func TestAnswer_OrAnAllowedCall(t *testing.T) {
	b := newBackend(t, Options{})
	params := map[string]string{}
	for _, tl := range forcedTools {
		params[tl.name] = tl.params
	}
	var answers, calls int
	for seed := 1; seed <= 8; seed++ {
		for _, choice := range []string{"auto", "required"} {
			req := map[string]any{"messages": msgs("user", "Weather or a person?"), "tools": forcedToolsJSON(), "tool_choice": choice,
				"parallel_tool_calls": false, "seed": seed, "temperature": 1, "max_tokens": 300, "response_format": answerFormat()}
			resp, err := b.ChatCompletion(context.Background(), &backends.Request{Body: chatBody(t, req), Model: "tiny", Allowed: []string{"get_weather", "send_email"}})
			if err != nil {
				t.Fatal(err)
			}
			var c oai.ChatCompletion
			if err := json.Unmarshal(resp.Body, &c); err != nil {
				t.Fatal(err)
			}
			m, finish := c.Choices[0].Message, c.Choices[0].FinishReason
			switch {
			case len(m.ToolCalls) > 0:
				for _, tc := range m.ToolCalls {
					p, ok := params[tc.Function.Name]
					if tc.Function.Name != "get_weather" && tc.Function.Name != "send_email" || !ok {
						t.Errorf("seed %d %s: call of %q, not allowed", seed, choice, tc.Function.Name)
						continue
					}
					if err := schemacheck.Validate([]byte(p), []byte(tc.Function.Arguments)); err != nil {
						t.Errorf("seed %d %s: %s(%s): %v", seed, choice, tc.Function.Name, tc.Function.Arguments, err)
					}
				}
				if finish != "tool_calls" {
					t.Errorf("seed %d %s: finish %s after calls", seed, choice, finish)
				}
				calls++
			case choice == "required":
				t.Errorf("seed %d: tool_choice required answered %v", seed, m.Content)
			default:
				content := ""
				if m.Content != nil {
					content = *m.Content
				}
				if err := schemacheck.Validate([]byte(answerSchema), []byte(content)); err != nil || finish != "stop" {
					t.Errorf("seed %d: neither a call nor the schema's answer: %q (finish %s): %v", seed, content, finish, err)
				}
				answers++
			}
		}
	}
	t.Logf("%d calls, %d schema answers", calls, answers)
	if answers == 0 {
		t.Error("no seed answered in the schema beside optional calls: the alternation is not exercised")
	}
}

// TestAnswer_ClosesAnOpenThinkBlock: under a thinking template (tinymodel's, whose
// generation prompt opens <think>), the answer's grammar first closes the block, so the
// schema-valid answer comes back as content, with no reasoning, whole and streamed.
func TestAnswer_ClosesAnOpenThinkBlock(t *testing.T) {
	b := newBackend(t, Options{})
	tmpl, err := compileTemplate(tinymodel.ThinkingTemplate)
	if err != nil {
		t.Fatal(err)
	}
	b.tmpl = tmpl
	for _, stream := range []bool{false, true} {
		content, _, finish := answerOf(t, b, map[string]any{"messages": msgs("user", "Describe a person."), "seed": 3,
			"temperature": 1, "max_tokens": 300, "response_format": answerFormat()}, stream)
		if err := schemacheck.Validate([]byte(answerSchema), []byte(content)); err != nil || finish != "stop" {
			t.Errorf("stream %v: %q (finish %s): %v", stream, content, finish, err)
		}
	}
}
