package openai

import (
	"github.com/maskgate/maskgate/backends/oai"
	"github.com/maskgate/maskgate/masking"
)

// Prepared is a request body made ready for OpenAI.
type Prepared struct {
	// Body is the body to send.
	Body []byte
	// Names maps the answer's wire names back; nil when no name was mapped.
	Names *Names
	// Constrained reports that tool_choice now carries the allowed set (or "none").
	Constrained bool
}

// Prepare edits body for OpenAI, by bytes, touching only what it must:
//
//   - With allowedTools and allowed non-nil, and tools in the body, tool_choice becomes
//     {"type":"allowed_tools","allowed_tools":{"mode":...,"tools":[...]}} listing the
//     names of allowed that the body's tools define, in allowed's order. The client's
//     own tool_choice is honoured: "none" stays (nothing may be called, so nothing is
//     listed); "required" gives mode required; a named function narrows the list to
//     that name, with mode required, and is a 400 when the name may not be called; an
//     allowed_tools of the client's narrows the list and keeps its mode (a list narrowed
//     to nothing is "none" in mode auto, a 400 in mode required).
//   - When a name in the body or in allowed is one OpenAI refuses (e.g. "git.commit"),
//     every tool name is rewritten to its toolname.OpenAI wire name: tools, the calls of
//     earlier assistant messages, and tool_choice. Names.Response and Names.Stream undo
//     it in the answer.
//
// Members OpenAI refuses but other engines take (dropRefused: metadata without store:
// true, top_k) are taken out. A body that needs none of this comes back as the same
// bytes. Errors the client can fix are *oai.RequestError.
func Prepare(body []byte, allowed []string, allowedTools bool) (*Prepared, error) {
	obj, err := oai.ParseObject(body)
	if err != nil {
		return nil, &oai.RequestError{Message: err.Error()}
	}
	names, tools, err := requestNames(obj)
	if err != nil {
		return nil, err
	}
	if allowedTools {
		names = append(names, allowed...)
	}
	n, err := newNames(names)
	if err != nil {
		return nil, &oai.RequestError{Message: err.Error(), Param: "tools"}
	}
	p := &Prepared{Body: body, Names: n}

	var choice []byte
	if allowedTools && allowed != nil && len(tools) > 0 {
		raw, _ := obj.Get("tool_choice")
		if choice, err = allowedChoice(raw, allowed, tools, n); err != nil {
			return nil, err
		}
		p.Constrained = true
	}
	if n != nil {
		if p.Body, err = n.toWire(p.Body); err != nil {
			return nil, err
		}
	}
	if choice != nil {
		if p.Body, err = oai.Set(p.Body, "tool_choice", choice); err != nil {
			return nil, err
		}
	}
	if p.Body, err = dropRefused(obj, p.Body); err != nil {
		return nil, err
	}
	return p, nil
}

// dropRefused takes out of body the members OpenAI refuses that other engines take, so
// that a request the gateway routes to OpenAI is not a 400 for them: metadata unless
// store is true ("The 'metadata' parameter is only allowed when 'store' is enabled"),
// and top_k (no OpenAI model samples with it; the Messages door carries Anthropic's
// top_k for the engines that read it). obj indexes the client's body.
func dropRefused(obj *oai.Object, body []byte) ([]byte, error) {
	var err error
	if _, ok := obj.Get("metadata"); ok {
		if store, _ := obj.Get("store"); string(store) != "true" {
			if body, err = oai.Delete(body, "metadata"); err != nil {
				return nil, err
			}
		}
	}
	if _, ok := obj.Get("top_k"); ok {
		if body, err = oai.Delete(body, "top_k"); err != nil {
			return nil, err
		}
	}
	return body, nil
}

// allowedChoice is the tool_choice that lets the model call allowed (as far as tools
// define them) under the client's own choice raw, in wire names. It is nil when the
// client's choice stays as it is ("none").
func allowedChoice(raw []byte, allowed, tools []string, n *Names) ([]byte, error) {
	mode, narrow, none, err := masking.ParseToolChoice(raw)
	if err != nil {
		return nil, &oai.RequestError{Message: err.Error(), Param: "tool_choice"}
	}
	if none {
		return nil, nil
	}
	// OpenAI refuses an allowed_tools entry that no tool defines, so the set is cut to
	// the tools the body carries.
	names := masking.Narrow(masking.Narrow(allowed, tools), narrow)
	if len(names) == 0 {
		if mode == masking.ModeAuto {
			return []byte(`"none"`), nil
		}
		return nil, &oai.RequestError{Param: "tool_choice",
			Message: "tool_choice names no tool the model may call now; load it first (search_tools, load_tool) or choose another"}
	}
	wire := make([]string, len(names))
	for i, name := range names {
		wire[i] = n.Wire(name)
	}
	return masking.AllowedTools(masking.Spec{Allowed: wire, Mode: mode}), nil
}
