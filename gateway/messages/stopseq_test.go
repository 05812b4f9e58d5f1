package messages

import (
	"strings"
	"testing"

	"github.com/maskgate/maskgate/backends/oai"
	"github.com/maskgate/maskgate/gateway/door"
)

// stop_sequence: the client's sequence the backend named, else one the text ends with
// (an engine that kept it); never one the client did not send, nor after a cut or a call.
func TestWriter_StopSequence(t *testing.T) {
	for _, tc := range []struct {
		name, text, matched, finish, want string
	}{
		{"named", "one, two", "three", oai.FinishStop, `"stop_reason":"stop_sequence","stop_sequence":"three"`},
		{"kept in the text", "one, two, three", "", oai.FinishStop, `"stop_reason":"stop_sequence","stop_sequence":"three"`},
		{"named but not the client's", "one, two, three", "<|im_end|>", oai.FinishStop, `"stop_reason":"end_turn","stop_sequence":null`},
		{"end of turn", "one, two", "", oai.FinishStop, `"stop_reason":"end_turn","stop_sequence":null`},
		{"cut", "one, two, three", "", oai.FinishLength, `"stop_reason":"max_tokens","stop_sequence":null`},
	} {
		w := NewWriter(nil, false, "msg_1", &Request{Model: "m", Stop: []byte(`["three","END"]`)})
		if err := w.Begin(door.Head{}); err != nil {
			t.Fatal(err)
		}
		if err := w.Text(tc.text); err != nil {
			t.Fatal(err)
		}
		if tc.matched != "" {
			w.StopSequence(tc.matched)
		}
		if err := w.End(tc.finish, nil); err != nil {
			t.Fatal(err)
		}
		if got := string(w.Body()); !strings.Contains(got, tc.want) {
			t.Errorf("%s: %s, want %s", tc.name, got, tc.want)
		}
	}
}
