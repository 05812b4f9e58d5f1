package anthropic

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/maskgate/maskgate/backends/toolname"
)

// Answers follow the Messages API reference, "Create a Message" response: id, type
// "message", role, model, content blocks, stop_reason, usage with input_tokens,
// output_tokens, cache_creation_input_tokens and cache_read_input_tokens.
func TestCompletion_FromMessage(t *testing.T) {
	const head = `"id":"chatcmpl-msg_01","object":"chat.completion","created":1700000000,"model":"claude-sonnet-4-5-20250929"`
	names, err := toolname.New(nameRule, []string{"git.commit", "search"})
	if err != nil {
		t.Fatal(err)
	}
	wire := names.Wire("git.commit")
	for _, tc := range []struct {
		name, body, want string
	}{
		{
			name: "text_end_turn_with_cache",
			body: `{"id":"msg_01","type":"message","role":"assistant","model":"claude-sonnet-4-5-20250929","content":[{"type":"text","text":"Hel"},{"type":"text","text":"lo"}],"stop_reason":"end_turn","stop_sequence":null,` +
				`"usage":{"input_tokens":12,"cache_creation_input_tokens":100,"cache_read_input_tokens":2000,"output_tokens":3}}`,
			want: `{` + head + `,"choices":[{"index":0,"message":{"role":"assistant","content":"Hello"},"finish_reason":"stop","logprobs":null}],` +
				`"usage":{"prompt_tokens":2112,"completion_tokens":3,"total_tokens":2115,"prompt_tokens_details":{"cached_tokens":2000}}}`,
		},
		{
			name: "tool_use_names_mapped_back_input_kept",
			body: `{"id":"msg_01","type":"message","role":"assistant","model":"claude-sonnet-4-5-20250929","content":[{"type":"thinking","thinking":"hmm","signature":"sig"},` +
				`{"type":"tool_use","id":"toolu_A","name":"` + wire + `","input":{"message":"fix: typo","amend":false}},{"type":"tool_use","id":"toolu_B","name":"search","input":{}}],"stop_reason":"tool_use",` +
				`"usage":{"input_tokens":5,"output_tokens":9}}`,
			want: `{` + head + `,"choices":[{"index":0,"message":{"role":"assistant","content":null,"tool_calls":[` +
				`{"id":"toolu_A","type":"function","function":{"name":"git.commit","arguments":"{\"message\":\"fix: typo\",\"amend\":false}"}},` +
				`{"id":"toolu_B","type":"function","function":{"name":"search","arguments":"{}"}}]},"finish_reason":"tool_calls","logprobs":null}],` +
				`"usage":{"prompt_tokens":5,"completion_tokens":9,"total_tokens":14,"prompt_tokens_details":{"cached_tokens":0}}}`,
		},
		{
			name: "text_and_call",
			body: `{"id":"msg_01","type":"message","model":"claude-sonnet-4-5-20250929","content":[{"type":"text","text":"Let me look."},{"type":"tool_use","id":"toolu_A","name":"search","input":{"q":"go"}}],"stop_reason":"tool_use","usage":{"input_tokens":1,"output_tokens":1}}`,
			want: `{` + head + `,"choices":[{"index":0,"message":{"role":"assistant","content":"Let me look.","tool_calls":[` +
				`{"id":"toolu_A","type":"function","function":{"name":"search","arguments":"{\"q\":\"go\"}"}}]},"finish_reason":"tool_calls","logprobs":null}],` +
				`"usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2,"prompt_tokens_details":{"cached_tokens":0}}}`,
		},
		{
			name: "max_tokens_is_length",
			body: `{"id":"msg_01","type":"message","model":"claude-sonnet-4-5-20250929","content":[{"type":"text","text":"Once upon"}],"stop_reason":"max_tokens","usage":{"input_tokens":4,"output_tokens":2}}`,
			want: `{` + head + `,"choices":[{"index":0,"message":{"role":"assistant","content":"Once upon"},"finish_reason":"length","logprobs":null}],` +
				`"usage":{"prompt_tokens":4,"completion_tokens":2,"total_tokens":6,"prompt_tokens_details":{"cached_tokens":0}}}`,
		},
		{
			name: "stop_sequence_is_stop_and_model_falls_back",
			body: `{"id":"msg_01","type":"message","content":[],"stop_reason":"stop_sequence","usage":{"input_tokens":4,"output_tokens":0}}`,
			want: `{"id":"chatcmpl-msg_01","object":"chat.completion","created":1700000000,"model":"asked","choices":[{"index":0,"message":{"role":"assistant","content":""},"finish_reason":"stop","logprobs":null}],` +
				`"usage":{"prompt_tokens":4,"completion_tokens":0,"total_tokens":4,"prompt_tokens_details":{"cached_tokens":0}}}`,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := completion("claude", []byte(tc.body), names, meta{created: 1700000000, model: "asked"})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, string(got)); diff != "" {
				t.Errorf("chat.completion (-want +got):\n%s", diff)
			}
		})
	}
}

func TestCompletion_RefusesWhatIsNotAMessage(t *testing.T) {
	for _, body := range []string{
		`<html>`,
		`{"type":"error","error":{"type":"api_error","message":"x"}}`,
		`{"type":"message","content":[{"type":"tool_use","input":{}}]}`,
	} {
		_, err := completion("claude", []byte(body), nil, meta{})
		if be := asError(t, err); be.Status != 502 || be.Code != "upstream_invalid_response" {
			t.Errorf("%s: got %d %q", body, be.Status, be.Code)
		}
	}
}

func TestFinishReason(t *testing.T) {
	for in, want := range map[string]string{"end_turn": "stop", "stop_sequence": "stop", "max_tokens": "length",
		"tool_use": "tool_calls", "refusal": "content_filter", "pause_turn": "stop", "model_context_window_exceeded": "length", "": "stop"} {
		if got := finishReason(in); got != want {
			t.Errorf("finishReason(%q) = %q, want %q", in, got, want)
		}
	}
}
