package vllm

import (
	"encoding/json"

	"github.com/maskgate/maskgate/backends/oai"
)

// clientConstrains is vLLM's placement conflict: the request carries a structured-output
// constraint of the client's own — a response_format other than text, a
// structured_outputs member, or one of the guided_* parameters vLLM took before
// structured_outputs. vLLM takes one kind of constraint per request (its
// StructuredOutputsParams refuses several: "You can only use one kind of structured
// outputs constraint"), and the structural tag would replace or fight the client's
// schema. The client's wins: the tag stays out, the request goes as the client wrote it
// (Unconstrained), and the gateway's own check answers a call outside the allowed set.
func clientConstrains(obj *oai.Object) bool {
	if rf, ok := obj.Get("response_format"); ok && !textFormat(rf) {
		return true
	}
	for _, k := range []string{"structured_outputs", "guided_json", "guided_regex", "guided_choice", "guided_grammar"} {
		if v, ok := obj.Get(k); ok && string(v) != "null" {
			return true
		}
	}
	return false
}

// textFormat reports a response_format that asks for nothing: null or {"type":"text"}.
func textFormat(rf []byte) bool {
	if string(rf) == "null" {
		return true
	}
	var f struct {
		Type string `json:"type"`
	}
	return json.Unmarshal(rf, &f) == nil && f.Type == "text"
}
