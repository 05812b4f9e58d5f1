package ollama

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/ollama/ollama/api"

	"github.com/maskgate/maskgate/backends"
)

// counterIDs returns call ids call_1, call_2, ... so tests can spell them.
func counterIDs() func() string {
	n := 0
	return func() string { n++; return fmt.Sprintf("call_%d", n) }
}

// lines parses NDJSON as Ollama streams it.
func lines(t *testing.T, ndjson string) []api.ChatResponse {
	t.Helper()
	var out []api.ChatResponse
	for _, l := range strings.Split(strings.TrimSpace(ndjson), "\n") {
		var r api.ChatResponse
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			t.Fatalf("bad test line %s: %v", l, err)
		}
		out = append(out, r)
	}
	return out
}

func translatedFor(t *testing.T, extra string) *translated {
	t.Helper()
	body := `{"model":"m","messages":[{"role":"user","content":"hi"}],"tools":[` + weatherTool + `,` + timeTool + `]` + extra + `}`
	tr, err := translateRequest([]byte(body), "")
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

func TestCompletion_FromOllamaAnswer(t *testing.T) {
	const head = `"id":"chatcmpl-1","object":"chat.completion","created":1700000000,"model":"m"`
	for _, tc := range []struct {
		name   string
		choice string
		ndjson string
		cached int
		want   string
	}{
		{
			name:   "text_stop",
			ndjson: `{"message":{"role":"assistant","content":"Hel"},"done":false}` + "\n" + `{"message":{"role":"assistant","content":"lo"},"done":true,"done_reason":"stop","prompt_eval_count":10,"eval_count":2}`,
			cached: 4,
			want:   `{` + head + `,"choices":[{"index":0,"message":{"role":"assistant","content":"Hello"},"finish_reason":"stop","logprobs":null}],"usage":{"prompt_tokens":10,"completion_tokens":2,"total_tokens":12,"prompt_tokens_details":{"cached_tokens":4}}}`,
		},
		{
			name:   "length",
			ndjson: `{"message":{"role":"assistant","content":"Hel"},"done":true,"done_reason":"length","prompt_eval_count":3,"eval_count":1}`,
			want:   `{` + head + `,"choices":[{"index":0,"message":{"role":"assistant","content":"Hel"},"finish_reason":"length","logprobs":null}],"usage":{"prompt_tokens":3,"completion_tokens":1,"total_tokens":4,"prompt_tokens_details":{"cached_tokens":0}}}`,
		},
		{
			name: "tool_calls_keep_ollama_ids_and_argument_order",
			ndjson: `{"message":{"role":"assistant","content":"","tool_calls":[{"id":"call_abc","function":{"index":0,"name":"get_weather","arguments":{"unit":"c","city":"Oslo"}}},{"function":{"index":1,"name":"get_time","arguments":{}}}]},"done":false}` + "\n" +
				`{"message":{"role":"assistant","content":""},"done":true,"done_reason":"stop","prompt_eval_count":5,"eval_count":9}`,
			want: `{` + head + `,"choices":[{"index":0,"message":{"role":"assistant","content":null,"tool_calls":[` +
				`{"id":"call_abc","type":"function","function":{"name":"get_weather","arguments":"{\"unit\":\"c\",\"city\":\"Oslo\"}"}},` +
				`{"id":"call_1","type":"function","function":{"name":"get_time","arguments":"{}"}}]},"finish_reason":"tool_calls","logprobs":null}],` +
				`"usage":{"prompt_tokens":5,"completion_tokens":9,"total_tokens":14,"prompt_tokens_details":{"cached_tokens":0}}}`,
		},
		{
			name:   "forced_call_from_json_content",
			choice: `,"tool_choice":"required"`,
			ndjson: `{"message":{"role":"assistant","content":"{\"name\": \"get_time\", "},"done":false}` + "\n" +
				`{"message":{"role":"assistant","content":"\"arguments\": {\"tz\": \"UTC\", \"a\": 1}}\n"},"done":true,"done_reason":"stop","prompt_eval_count":5,"eval_count":9}`,
			want: `{` + head + `,"choices":[{"index":0,"message":{"role":"assistant","content":null,"tool_calls":[` +
				`{"id":"call_1","type":"function","function":{"name":"get_time","arguments":"{\"tz\":\"UTC\",\"a\":1}"}}]},"finish_reason":"tool_calls","logprobs":null}],` +
				`"usage":{"prompt_tokens":5,"completion_tokens":9,"total_tokens":14,"prompt_tokens_details":{"cached_tokens":0}}}`,
		},
		{
			name:   "forced_call_parsed_by_ollama",
			choice: `,"tool_choice":{"type":"function","function":{"name":"get_time"}}`,
			ndjson: `{"message":{"role":"assistant","content":"","tool_calls":[{"id":"call_x","function":{"index":0,"name":"get_time","arguments":{"tz":"UTC"}}}]},"done":true,"done_reason":"stop","prompt_eval_count":5,"eval_count":9}`,
			want: `{` + head + `,"choices":[{"index":0,"message":{"role":"assistant","content":null,"tool_calls":[` +
				`{"id":"call_x","type":"function","function":{"name":"get_time","arguments":"{\"tz\":\"UTC\"}"}}]},"finish_reason":"tool_calls","logprobs":null}],` +
				`"usage":{"prompt_tokens":5,"completion_tokens":9,"total_tokens":14,"prompt_tokens_details":{"cached_tokens":0}}}`,
		},
		{
			name:   "forced_call_cut_off_is_length",
			choice: `,"tool_choice":"required"`,
			ndjson: `{"message":{"role":"assistant","content":"{\"name\": \"get_ti"},"done":true,"done_reason":"length","prompt_eval_count":5,"eval_count":4}`,
			want: `{` + head + `,"choices":[{"index":0,"message":{"role":"assistant","content":"{\"name\": \"get_ti"},"finish_reason":"length","logprobs":null}],` +
				`"usage":{"prompt_tokens":5,"completion_tokens":4,"total_tokens":9,"prompt_tokens_details":{"cached_tokens":0}}}`,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr := translatedFor(t, tc.choice)
			var r reply
			for _, l := range lines(t, tc.ndjson) {
				r.add(&l)
			}
			c, err := tr.completion(&r, meta{id: "chatcmpl-1", created: 1700000000, model: "m", newCallID: counterIDs()}, tc.cached)
			if err != nil {
				t.Fatal(err)
			}
			got, _ := json.Marshal(c)
			if diff := cmp.Diff(tc.want, string(got)); diff != "" {
				t.Errorf("completion (-want +got):\n%s", diff)
			}
		})
	}
}

func TestCompletion_ForcedCallThatIsNotACallIs502(t *testing.T) {
	for _, content := range []string{`I will not`, `{"name":"get_time"}`, `{"arguments":{}}`, `{"name":"get_time","arguments":[1]}`} {
		tr := translatedFor(t, `,"tool_choice":"required"`)
		var r reply
		r.add(&api.ChatResponse{Message: api.Message{Content: content}, Done: true, DoneReason: "stop"})
		_, err := tr.completion(&r, meta{newCallID: counterIDs()}, 0)
		var be *backends.Error
		if !errors.As(err, &be) || be.Status != http.StatusBadGateway {
			t.Errorf("%s: err = %v, want a 502", content, err)
		}
	}
}

func TestReply_IgnoresLinesAfterDone(t *testing.T) {
	var r reply
	r.add(&api.ChatResponse{Message: api.Message{Content: "a"}, Done: true, DoneReason: "stop", Metrics: api.Metrics{EvalCount: 1}})
	r.add(&api.ChatResponse{Message: api.Message{Content: "b"}, Done: true, DoneReason: "length", Metrics: api.Metrics{EvalCount: 7}})
	if r.content.String() != "a" || r.reason != "stop" || r.metrics.EvalCount != 1 {
		t.Errorf("reply = %q %q %d", r.content.String(), r.reason, r.metrics.EvalCount)
	}
}
