package vllm

import (
	"bytes"
	"encoding/json"

	"github.com/maskgate/maskgate/backends/oai"
	"github.com/maskgate/maskgate/masking"
)

// clientConstrains is vLLM's placement conflict: the request carries a structured-output
// constraint of the client's own — a response_format other than text, a
// structured_outputs member, or one of the guided_* parameters vLLM took before
// structured_outputs. vLLM takes one kind of constraint per request (its
// StructuredOutputsParams refuses several: "You can only use one kind of structured
// outputs constraint"). A json_schema or json_object response_format joins the tag
// (clientAnswer, answerTag); any other constraint wins: the tag stays out, the request
// goes as the client wrote it (Unconstrained), and the gateway's own check answers a
// call outside the allowed set.
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

// clientAnswer is the schema of the client's structured output when it is one the tag
// can carry beside the calls: a response_format json_schema (its schema) or json_object
// ({"type":"object"}), and no other constraint of the client's (structured_outputs,
// guided_*). Otherwise false: the client's constraint goes alone.
func clientAnswer(obj *oai.Object) ([]byte, bool) {
	for _, k := range []string{"structured_outputs", "guided_json", "guided_regex", "guided_choice", "guided_grammar"} {
		if v, ok := obj.Get(k); ok && string(v) != "null" {
			return nil, false
		}
	}
	rf, ok := obj.Get("response_format")
	if !ok {
		return nil, false
	}
	var f struct {
		Type       string `json:"type"`
		JSONSchema struct {
			Schema json.RawMessage `json:"schema"`
		} `json:"json_schema"`
	}
	if json.Unmarshal(rf, &f) != nil {
		return nil, false
	}
	switch s := bytes.TrimSpace(f.JSONSchema.Schema); {
	case f.Type == "json_object":
		return []byte(`{"type":"object"}`), true
	case f.Type == "json_schema" && len(s) > 0 && s[0] == '{':
		return s, true
	}
	return nil, false
}

// answerTag renders the tag of a request whose client also asked for a structured
// output: the calls spec allows, required, or the answer held to schema
// (masking.StructuralTagOrAnswer) where calls are optional; the calls alone where one is
// required. With no call allowed in mode auto no tag goes: the client's response_format
// holds the answer alone (Unconstrained: calls are left to the gateway's check).
func answerTag(t Tagged, spec masking.Spec, params map[string]json.RawMessage, schema []byte) (Tagged, error) {
	auto := spec.Mode == masking.ModeAuto
	if auto {
		spec.Mode = masking.ModeRequired
		if len(spec.Allowed) == 0 {
			t.Outcome = Unconstrained
			return t, nil
		}
	}
	tag, err := masking.StructuralTag(spec, params)
	if err == nil && auto {
		tag, err = masking.StructuralTagOrAnswer(spec.Format, tag, schema)
	}
	if err != nil {
		return Tagged{}, &oai.RequestError{Message: err.Error(), Param: "tools"}
	}
	t.Outcome, t.Tag, t.Answer = Constrained, tag, true
	return t, nil
}

// answerEdit takes the client's response_format out of the body when the tag holds it
// and goes elsewhere (vLLM's structured_outputs); where the tag itself is the
// response_format (SGLang) the tag's edit replaces it.
func answerEdit(edits []oai.Edit, t Tagged) []oai.Edit {
	if !t.Answer {
		return edits
	}
	for _, e := range edits {
		if e.Key == "response_format" {
			return edits
		}
	}
	return append(edits, oai.Edit{Key: "response_format", Delete: true})
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
