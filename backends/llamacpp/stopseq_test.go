package llamacpp

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/maskgate/maskgate/backends"
	"github.com/maskgate/maskgate/backends/oai"
)

// llama-server's stop_type "word" and stopping_word become the choice's stop_reason
// (vLLM's name), whole and on the streamed finish chunk; an end of turn has none.
func TestStopReason_StoppingWord(t *testing.T) {
	for _, tc := range []struct{ final, want string }{
		{strings.Replace(defaultFinal, `"stop_type":"eos"`, `"stop_type":"word","stopping_word":"END"`, 1), `"END"`},
		{defaultFinal, ``},
	} {
		f := newFake(t, "one,", " two")
		f.final = tc.final
		b := newTestBackend(t, f.URL, nil)
		body := `{"model":"q","messages":[{"role":"user","content":"hi"}],"stop":["END"]}`
		resp, err := b.ChatCompletion(background(t), &backends.Request{Body: []byte(body), Model: "q"})
		if err != nil {
			t.Fatal(err)
		}
		var whole oai.ChatCompletion
		if err := json.Unmarshal(resp.Body, &whole); err != nil || len(whole.Choices) != 1 {
			t.Fatalf("%s: %v", resp.Body, err)
		}
		if got := string(whole.Choices[0].StopReason); got != tc.want || whole.Choices[0].FinishReason != "stop" {
			t.Errorf("whole: stop_reason %q finish %q, want %q", got, whole.Choices[0].FinishReason, tc.want)
		}
		resp, err = b.ChatCompletion(background(t), &backends.Request{Body: []byte(streamBody(body)), Model: "q", Stream: true})
		if err != nil {
			t.Fatal(err)
		}
		got := ""
		for _, c := range readStream(t, resp.Stream) {
			for _, ch := range c.Choices {
				if ch.FinishReason != nil {
					got = string(ch.StopReason)
				}
			}
		}
		if got != tc.want {
			t.Errorf("streamed: stop_reason %q, want %q", got, tc.want)
		}
	}
}
