//go:build llamacpp

package embedded

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/maskgate/maskgate/backends/oai"
)

func TestParseHermesCalls(t *testing.T) {
	tests := []struct {
		name, text string
		want       []parsedCall
		wantErr    bool
	}{
		{"one, with the model's argument bytes", "<tool_call>\n{\"name\": \"a\", \"arguments\": {\"x\": 1}}\n</tool_call>", []parsedCall{{"a", `{"x": 1}`}}, false},
		{"two", "<tool_call>{\"name\":\"a\",\"arguments\":{}}</tool_call>\n<tool_call>{\"name\":\"b.c\",\"arguments\":{\"y\":[1,2]}}</tool_call>",
			[]parsedCall{{"a", `{}`}, {"b.c", `{"y":[1,2]}`}}, false},
		{"unclosed at end of turn", "<tool_call>\n{\"name\": \"a\", \"arguments\": {}}\n", []parsedCall{{"a", `{}`}}, false},
		{"arguments as a string", `<tool_call>{"name":"a","arguments":"{\"x\":1}"}</tool_call>`, []parsedCall{{"a", `{"x":1}`}}, false},
		{"no arguments", `<tool_call>{"name":"a"}</tool_call>`, []parsedCall{{"a", `{}`}}, false},
		{"no name", `<tool_call>{"arguments":{}}</tool_call>`, nil, true},
		{"not json", `<tool_call>get_weather(Paris)</tool_call>`, nil, true},
		{"text after", "<tool_call>{\"name\":\"a\"}</tool_call> and more", nil, true},
		{"truncated json", `<tool_call>{"name":"a","argu`, nil, true},
		{"a good call then a bad one", `<tool_call>{"name":"a"}</tool_call><tool_call>{oops}</tool_call>`, nil, true},
		{"white space only", " \n", nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseHermesCalls(tt.text)
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, want error %v", err, tt.wantErr)
			}
			if diff := cmp.Diff(tt.want, got, cmp.AllowUnexported(parsedCall{})); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func FuzzParseHermesCalls(f *testing.F) {
	f.Add("<tool_call>\n{\"name\": \"a\", \"arguments\": {\"x\": 1}}\n</tool_call>")
	f.Add("<tool_call>{\"name\":\"a\"}</tool_call><tool_call>")
	f.Fuzz(func(t *testing.T, text string) {
		calls, err := parseHermesCalls(text)
		if err == nil && len(calls) == 0 {
			t.Error("no error and no calls")
		}
		for _, c := range calls {
			if c.name == "" || c.args == "" {
				t.Errorf("empty call %+v", c)
			}
		}
	})
}

// TestAnswer_CutCallIsACallWithFinishLength: a tail max_tokens cut inside a call's
// arguments is a tool call with the arguments so far and finish_reason "length"; cut in
// the name it is nothing; the tail is never content.
func TestAnswer_CutCallIsACallWithFinishLength(t *testing.T) {
	tests := []struct {
		name, tail string
		calls      []oai.ToolCall
	}{
		{"in the arguments", "<tool_call>\n{\"name\": \"send_email\", \"arguments\": {\"to\": \"a@", []oai.ToolCall{{ID: "call_x_0", Type: "function", Function: oai.FunctionCall{Name: "send_email", Arguments: `{"to": "a@`}}}},
		{"before the arguments", "<tool_call>\n{\"name\": \"send_email\", \"argu", []oai.ToolCall{{ID: "call_x_0", Type: "function", Function: oai.FunctionCall{Name: "send_email", Arguments: ""}}}},
		{"in the name", "<tool_call>\n{\"name\": \"send_em", nil},
		{"after a whole call", "<tool_call>\n{\"name\": \"a\", \"arguments\": {}}\n</tool_call>\n<tool_call>\n{\"name\": \"b\", \"arguments\": [", []oai.ToolCall{
			{ID: "call_x_0", Type: "function", Function: oai.FunctionCall{Name: "a", Arguments: `{}`}},
			{ID: "call_x_1", Type: "function", Function: oai.FunctionCall{Name: "b", Arguments: `[`}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := &textFilter{trigger: "<tool_call>"}
			f.push("Sure. ")
			f.push(tt.tail)
			r := &result{finish: oai.FinishLength, text: f, format: "hermes"}
			_, content, calls, finish, rest := r.answer("chatcmpl-x", true, false)
			if diff := cmp.Diff(tt.calls, calls); diff != "" {
				t.Errorf("calls (-want +got):\n%s", diff)
			}
			if finish != oai.FinishLength || rest != "" || content == nil || *content != "Sure. " {
				t.Errorf("finish %q, rest %q, content %v; want length, none, %q", finish, rest, content, "Sure. ")
			}
		})
	}
}
