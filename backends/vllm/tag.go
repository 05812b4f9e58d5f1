package vllm

import (
	"encoding/json"
	"errors"

	"github.com/maskgate/maskgate/backends/oai"
	"github.com/maskgate/maskgate/masking"
)

// Outcome says what a structural tag did for a request.
type Outcome int

const (
	// Untouched: no tools, or tool_choice "none"; the body is as it came.
	Untouched Outcome = iota
	// Constrained: the tag goes out with the request.
	Constrained
	// Unconstrained: no tag could go out (nothing allowed in mode auto — no tag says "no
	// call" — or a conflict such as the client's own response_format on SGLang); nothing
	// stops a call outside the allowed set but the gateway's own check afterwards.
	Unconstrained
)

// SchemaFunc reads the names and parameters of a tools array.
type SchemaFunc func(tools []byte) ([]oai.ToolSchema, error)

// Tagged is a request read for a structural tag.
type Tagged struct {
	Object  *oai.Object
	Outcome Outcome
	// Tag is the structural tag's JSON text when Outcome is Constrained.
	Tag []byte
}

// BuildTag reads body and renders the xgrammar structural tag (masking.StructuralTag) for
// the calls it may make in format: allowed (nil: every tool of the request) among the
// request's tools, narrowed by its tool_choice. vLLM and SGLang take the same tag in
// different fields, so both build it here. conflict, when set, is asked once the request
// is known to want a tag; true leaves it Unconstrained.
func BuildTag(body []byte, allowed []string, format masking.Format, schemas SchemaFunc, conflict func(*oai.Object) bool) (Tagged, error) {
	obj, err := oai.ParseObject(body)
	if err != nil {
		return Tagged{}, &oai.RequestError{Message: err.Error()}
	}
	t := Tagged{Object: obj}
	rawTools, ok := obj.Get("tools")
	if !ok || string(rawTools) == "null" {
		return t, nil
	}
	tools, err := schemas(rawTools)
	if err != nil {
		return Tagged{}, &oai.RequestError{Message: "tools: " + err.Error(), Param: "tools"}
	}
	if len(tools) == 0 {
		return t, nil
	}
	choice, _ := obj.Get("tool_choice")
	mode, narrow, none, err := masking.ParseToolChoice(choice)
	if err != nil {
		return Tagged{}, &oai.RequestError{Message: err.Error(), Param: "tool_choice"}
	}
	if none {
		return t, nil
	}
	if conflict != nil && conflict(obj) {
		t.Outcome = Unconstrained
		return t, nil
	}
	params := make(map[string]json.RawMessage, len(tools))
	names := make([]string, 0, len(tools))
	for _, tl := range tools {
		params[tl.Name] = tl.Parameters
		names = append(names, tl.Name)
	}
	if allowed != nil {
		names = masking.Narrow(allowed, names) // a tag for a tool the prompt lacks helps no one
	}
	if narrow != nil {
		if names = masking.Narrow(names, narrow); len(names) == 0 && mode != masking.ModeAuto {
			return Tagged{}, &oai.RequestError{Param: "tool_choice",
				Message: "tool_choice names no tool the model may call now; load it first (search_tools, load_tool) or choose another"}
		}
	}
	if format.Name == "" {
		format = masking.Hermes()
	}
	tag, err := masking.StructuralTag(masking.Spec{Format: format, Allowed: names, Mode: mode}, params)
	if errors.Is(err, masking.ErrNoCallAllowed) {
		// tool_choice "none" instead would change how the template renders the tools.
		t.Outcome = Unconstrained
		return t, nil
	}
	if err != nil {
		return Tagged{}, &oai.RequestError{Message: err.Error(), Param: "tools"}
	}
	t.Outcome, t.Tag = Constrained, tag
	return t, nil
}

// strategyFor is the strategy a tagging backend reports: mask when the tag carried the
// gateway's allowed set, validate when it could not; nothing (the gateway's own label)
// when the gateway sent no allowed set.
func strategyFor(allowed []string, o Outcome) string {
	if allowed == nil {
		return ""
	}
	switch o {
	case Constrained:
		return "mask"
	case Unconstrained:
		return "validate"
	}
	return ""
}
