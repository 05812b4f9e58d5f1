package gateway_test

import (
	"net/http"
	"strings"
	"testing"
)

// A stop sequence of the client's that the engine says ended the answer (stop_reason,
// as vLLM and the llama-server backend write it) is the Messages answer's
// stop_sequence, with stop_reason "stop_sequence", whole and streamed; a stop_reason
// that is not one of the client's, or none, leaves end_turn.
func TestMessages_StopSequenceReported(t *testing.T) {
	whole := func(stop string) http.HandlerFunc {
		return replyJSON(http.StatusOK, `{"id":"c","object":"chat.completion","created":1,"model":"m1","choices":[{"index":0,"message":{"role":"assistant","content":"one, two"},"finish_reason":"stop","stop_reason":`+stop+`}],"usage":{"prompt_tokens":5,"completion_tokens":3,"total_tokens":8}}`)
	}
	streamed := func(stop string) http.HandlerFunc {
		return replySSE([]string{
			`{"id":"c","object":"chat.completion.chunk","created":1,"model":"m1","choices":[{"index":0,"delta":{"role":"assistant","content":"one, two"},"finish_reason":null}]}`,
			`{"id":"c","object":"chat.completion.chunk","created":1,"model":"m1","choices":[{"index":0,"delta":{},"finish_reason":"stop","stop_reason":` + stop + `}]}`,
			`{"id":"c","object":"chat.completion.chunk","created":1,"model":"m1","choices":[],"usage":{"prompt_tokens":5,"completion_tokens":3,"total_tokens":8}}`,
		}, true)
	}
	body := `{"model":"m1","max_tokens":20,"stop_sequences":["three","END"],"messages":[{"role":"user","content":"count"}]`
	for _, tc := range []struct {
		name, stop, want string
	}{
		{"named", `"three"`, `"stop_reason":"stop_sequence","stop_sequence":"three"`},
		{"not the client's", `"<|im_end|>"`, `"stop_reason":"end_turn","stop_sequence":null`},
		{"a token id", `151645`, `"stop_reason":"end_turn","stop_sequence":null`},
		{"none", `null`, `"stop_reason":"end_turn","stop_sequence":null`},
	} {
		up := newUpstream(t, whole(tc.stop))
		gw := gatewayFor(t, up)
		status, _, out := call(t, gw.Server, "POST", "/v1/messages", "", body+`}`)
		if status != http.StatusOK || !strings.Contains(out, tc.want) {
			t.Errorf("%s, whole: %d %s, want %s", tc.name, status, out, tc.want)
		}
		up = newUpstream(t, streamed(tc.stop))
		gw = gatewayFor(t, up)
		status, _, out = call(t, gw.Server, "POST", "/v1/messages", "", body+`,"stream":true}`)
		want := strings.Replace(tc.want, `,"stop_sequence"`, `,"stop_sequence"`, 1)
		if status != http.StatusOK || !strings.Contains(out, `"delta":{`+want+`}`) {
			t.Errorf("%s, streamed: %d %s, want %s", tc.name, status, out, want)
		}
	}
}
