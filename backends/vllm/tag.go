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
	// Answer says the tag also holds the client's structured output (its
	// response_format json_schema or json_object, clientAnswer): the allowed calls or the
	// answer, or the calls alone where one is required. The response_format must then
	// leave the body (answerEdit), since the engine takes one constraint.
	Answer bool
}

// BuildTag reads body and renders the xgrammar structural tag (masking.StructuralTag) for
// the calls it may make in format: allowed (nil: every tool of the request) among the
// request's tools, narrowed by its tool_choice. vLLM and SGLang take the same tag in
// different fields, so both build it here. conflict, when set, is asked once the request
// is known to want a tag; true leaves it Unconstrained.
func BuildTag(body []byte, allowed []string, format masking.Format, schemas SchemaFunc, conflict func(*oai.Object) bool) (Tagged, error) {
	return buildTag(body, allowed, format, schemas, conflict, nil)
}

// catalogTag renders a request's tag from its tools' catalog, kept across requests:
// catalog returns it for the request's tools, and the tag is appended to dst, as a JSON
// string when str (masking.Catalog.AppendStructuralTagString).
type catalogTag struct {
	catalog func(tools []oai.ToolSchema) *masking.Catalog
	dst     []byte
	str     bool
	known   oai.Known // vouches for the tools array the request's ToolsID names
}

// buildTag is BuildTag; with ct the tag comes from the tools' catalog (the same bytes, or
// their JSON string) instead of being rendered from the schemas.
func buildTag(body []byte, allowed []string, format masking.Format, schemas SchemaFunc, conflict func(*oai.Object) bool, ct *catalogTag) (Tagged, error) {
	var known oai.Known
	if ct != nil {
		known = ct.known
	}
	obj, err := oai.ParseObjectKnown(body, known, "tools")
	if err != nil {
		return Tagged{}, &oai.RequestError{Message: err.Error()}
	}
	return objectTag(obj, allowed, format, schemas, conflict, ct)
}

// objectTag is buildTag once the body is parsed.
func objectTag(obj *oai.Object, allowed []string, format masking.Format, schemas SchemaFunc, conflict func(*oai.Object) bool, ct *catalogTag) (Tagged, error) {
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
	var answer []byte
	if conflict != nil && conflict(obj) {
		var ok bool
		if answer, ok = clientAnswer(obj); !ok {
			t.Outcome = Unconstrained
			return t, nil
		}
		ct = nil // the combined tag is rendered whole, from the request's schemas
	}
	var (
		cat    *masking.Catalog
		params map[string]json.RawMessage
		names  []string
	)
	if ct != nil {
		cat = ct.catalog(tools)
	} else {
		params = make(map[string]json.RawMessage, len(tools))
		for _, tl := range tools {
			params[tl.Name] = tl.Parameters
		}
	}
	switch {
	case allowed == nil:
		names = make([]string, 0, len(tools))
		for _, tl := range tools {
			names = append(names, tl.Name)
		}
	case cat != nil: // a tag for a tool the prompt lacks helps no one
		for _, n := range allowed {
			if cat.Has(n) {
				names = append(names, n)
			}
		}
	default:
		for _, n := range allowed {
			if _, ok := params[n]; ok {
				names = append(names, n)
			}
		}
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
	// parallel_tool_calls: false is one call: the tag then stops after the first.
	pc, _ := obj.Get("parallel_tool_calls")
	spec := masking.Spec{Format: format, Allowed: names, Mode: mode, OneCall: string(pc) == "false"}
	if answer != nil {
		return answerTag(t, spec, params, answer)
	}
	var tag []byte
	switch {
	case ct == nil:
		tag, err = masking.StructuralTag(spec, params)
	case ct.str:
		tag, err = cat.AppendStructuralTagString(ct.dst, spec)
	default:
		tag, err = cat.AppendStructuralTag(ct.dst, spec)
	}
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
