package ollama

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/maskgate/maskgate/backends/oai"
)

// chunksFor runs the chunker over ndjson and returns every chunk it emitted.
func chunksFor(t *testing.T, tr *translated, ndjson string) []string {
	t.Helper()
	c := &chunker{t: tr, m: meta{id: "chatcmpl-1", created: 7, model: "m", newCallID: counterIDs()}}
	var out []string
	for _, l := range lines(t, ndjson) {
		chunks, err := c.add(&l)
		if err != nil {
			t.Fatal(err)
		}
		for _, ch := range chunks {
			out = append(out, string(ch))
		}
	}
	if !c.done() {
		t.Fatal("chunker not done after the done line")
	}
	return out
}

const chunkHead = `{"id":"chatcmpl-1","object":"chat.completion.chunk","created":7,"model":"m","choices":`

func TestStream_TextAsOpenAIStreamsIt(t *testing.T) {
	got := chunksFor(t, translatedFor(t, ""),
		`{"message":{"role":"assistant","content":"Hel"},"done":false}`+"\n"+
			`{"message":{"role":"assistant","content":""},"done":false}`+"\n"+
			`{"message":{"role":"assistant","content":"lo"},"done":false}`+"\n"+
			`{"message":{"role":"assistant","content":""},"done":true,"done_reason":"stop","prompt_eval_count":10,"eval_count":2}`)
	want := []string{
		chunkHead + `[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]}`,
		chunkHead + `[{"index":0,"delta":{"content":"Hel"},"finish_reason":null}]}`,
		chunkHead + `[{"index":0,"delta":{"content":"lo"},"finish_reason":null}]}`,
		chunkHead + `[{"index":0,"delta":{},"finish_reason":"stop"}]}`,
		chunkHead + `[],"usage":{"prompt_tokens":10,"completion_tokens":2,"total_tokens":12,"prompt_tokens_details":{"cached_tokens":0}}}`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("chunks (-want +got):\n%s", diff)
	}
}

func TestStream_RoleOnlyInFirstChunk(t *testing.T) {
	got := chunksFor(t, translatedFor(t, ""),
		`{"message":{"role":"assistant","content":"a"},"done":false}`+"\n"+
			`{"message":{"role":"assistant","content":"b","tool_calls":[{"function":{"name":"get_time","arguments":{}}}]},"done":false}`+"\n"+
			`{"message":{"role":"assistant","content":"c"},"done":true,"done_reason":"stop"}`)
	for i, ch := range got {
		var c oai.Chunk
		if err := json.Unmarshal([]byte(ch), &c); err != nil {
			t.Fatal(err)
		}
		hasRole := len(c.Choices) > 0 && c.Choices[0].Delta.Role != ""
		if hasRole != (i == 0) {
			t.Errorf("chunk %d has role %v: %s", i, hasRole, ch)
		}
	}
}

func TestStream_ToolCallsAsHeaderThenArguments(t *testing.T) {
	got := chunksFor(t, translatedFor(t, ""),
		`{"message":{"role":"assistant","content":"","tool_calls":[{"id":"call_abc","function":{"index":0,"name":"get_weather","arguments":{"city":"Oslo"}}}]},"done":false}`+"\n"+
			`{"message":{"role":"assistant","content":"","tool_calls":[{"function":{"index":1,"name":"get_time","arguments":{}}}]},"done":false}`+"\n"+
			`{"message":{"role":"assistant","content":""},"done":true,"done_reason":"stop","prompt_eval_count":3,"eval_count":4}`)
	want := []string{
		chunkHead + `[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]}`,
		chunkHead + `[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_abc","type":"function","function":{"name":"get_weather","arguments":""}}]},"finish_reason":null}]}`,
		chunkHead + `[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"city\":\"Oslo\"}"}}]},"finish_reason":null}]}`,
		chunkHead + `[{"index":0,"delta":{"tool_calls":[{"index":1,"id":"call_1","type":"function","function":{"name":"get_time","arguments":""}}]},"finish_reason":null}]}`,
		chunkHead + `[{"index":0,"delta":{"tool_calls":[{"index":1,"function":{"arguments":"{}"}}]},"finish_reason":null}]}`,
		chunkHead + `[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`,
		chunkHead + `[],"usage":{"prompt_tokens":3,"completion_tokens":4,"total_tokens":7,"prompt_tokens_details":{"cached_tokens":0}}}`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("chunks (-want +got):\n%s", diff)
	}
}

func TestStream_ForcedCallHeldUntilDone(t *testing.T) {
	got := chunksFor(t, translatedFor(t, `,"tool_choice":"required"`),
		`{"message":{"role":"assistant","content":"{\"name\": \"get_weather\", "},"done":false}`+"\n"+
			`{"message":{"role":"assistant","content":"\"arguments\": {\"city\": \"Oslo\"}}"},"done":false}`+"\n"+
			`{"message":{"role":"assistant","content":""},"done":true,"done_reason":"stop","prompt_eval_count":3,"eval_count":4}`)
	want := []string{
		chunkHead + `[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]}`,
		chunkHead + `[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"get_weather","arguments":""}}]},"finish_reason":null}]}`,
		chunkHead + `[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"city\":\"Oslo\"}"}}]},"finish_reason":null}]}`,
		chunkHead + `[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`,
		chunkHead + `[],"usage":{"prompt_tokens":3,"completion_tokens":4,"total_tokens":7,"prompt_tokens_details":{"cached_tokens":0}}}`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("chunks (-want +got):\n%s", diff)
	}
}

func TestStream_NothingAfterDone(t *testing.T) {
	tr := translatedFor(t, "")
	c := &chunker{t: tr, m: meta{newCallID: counterIDs()}}
	for _, l := range lines(t, `{"message":{"content":"a"},"done":true,"done_reason":"stop"}`+"\n"+`{"message":{"content":"b"},"done":false}`) {
		chunks, err := c.add(&l)
		if err != nil {
			t.Fatal(err)
		}
		if l.Message.Content == "b" && len(chunks) != 0 {
			t.Errorf("a line after done produced %d chunks", len(chunks))
		}
	}
}
