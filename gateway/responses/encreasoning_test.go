package responses

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/maskgate/maskgate/backends/oai"
	"github.com/maskgate/maskgate/gateway/door"
)

// TestEncryptedReasoning_RoundTrip: a client that keeps no state (the AI SDK with
// store: false) asks for include: ["reasoning.encrypted_content"] and sends reasoning
// back only as that; the gateway gave none, so the engine lost its reasoning from the
// history. Now each reasoning item carries its text sealed, whole and streamed, and a
// reasoning item holding only that reaches the engine as the assistant's reasoning;
// another's ciphertext or a damaged seal reaches nothing.
func TestEncryptedReasoning_RoundTrip(t *testing.T) {
	const thought = "The user wants the sum; 2 and 2 make 4."
	for _, stream := range []bool{false, true} {
		rec := &recorder{}
		w := newTestWriter(t, rec, stream, `{"model":"m","input":"hi","include":["reasoning.encrypted_content"]}`)
		if err := w.Begin(door.Head{Created: 1}); err != nil {
			t.Fatal(err)
		}
		if err := w.Reasoning(thought); err != nil {
			t.Fatal(err)
		}
		if err := w.Text("4"); err != nil {
			t.Fatal(err)
		}
		if err := w.End(oai.FinishStop, nil); err != nil {
			t.Fatal(err)
		}
		var body struct {
			Output []struct {
				Type             string `json:"type"`
				EncryptedContent string `json:"encrypted_content"`
			} `json:"output"`
		}
		if err := json.Unmarshal(w.Body(), &body); err != nil {
			t.Fatal(err)
		}
		if len(body.Output) != 2 || body.Output[0].Type != "reasoning" {
			t.Fatalf("stream %v: output %s", stream, w.Body())
		}
		enc := body.Output[0].EncryptedContent
		if got, ok := DecodeReasoning(enc); !ok || got != thought {
			t.Errorf("stream %v: encrypted_content %q reads back as %q, %v", stream, enc, got, ok)
		}
		if stream && !strings.Contains(string(rec.data[len(rec.data)-1]), enc) {
			t.Errorf("the completed event does not carry the sealed reasoning")
		}

		// The next turn sends the item back with nothing but the seal.
		item := `{"type":"reasoning","id":"rs_1","summary":[],"encrypted_content":` + quoteJSON(enc) + `}`
		r := mustDecode(t, `{"model":"m","store":false,"input":[{"role":"user","content":"hi"},`+item+`,{"role":"assistant","content":"4"},{"role":"user","content":"and 3+3?"}]}`, Options{})
		if got := joinMsgs(r.InputMessages); !strings.Contains(got, `"reasoning_content":"The user wants the sum; 2 and 2 make 4."`) {
			t.Errorf("stream %v: the history sent on %s", stream, got)
		}
	}
	// Without include, no seal; another's ciphertext and a damaged seal give nothing.
	rec := &recorder{}
	w := newTestWriter(t, rec, false, `{"model":"m","input":"hi"}`)
	_ = w.Begin(door.Head{Created: 1})
	_ = w.Reasoning(thought)
	_ = w.End(oai.FinishStop, nil)
	if strings.Contains(string(w.Body()), "encrypted_content") {
		t.Errorf("sealed without include: %s", w.Body())
	}
	good := EncodeReasoning(thought)
	for _, enc := range []string{"gAAAAABopaque", good[:len(good)-1] + "x", EncodeCompaction(thought)} {
		r := mustDecode(t, `{"model":"m","input":[{"type":"reasoning","id":"rs_1","summary":[],"encrypted_content":`+quoteJSON(enc)+`}]}`, Options{})
		if got := joinMsgs(r.InputMessages); got != `[]` {
			t.Errorf("encrypted_content %q gave %s, want nothing", enc, got)
		}
	}
}

func quoteJSON(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
