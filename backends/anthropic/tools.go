package anthropic

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/maskgate/maskgate/backends"
	"github.com/maskgate/maskgate/backends/toolname"
	"github.com/maskgate/maskgate/masking"
)

// nameRule is what the Messages API accepts as a tool name: ^[a-zA-Z0-9_-]{1,64}$
// (API reference, "Create a Message", tools[].name).
var nameRule = toolname.Rule{Max: 64}

// idRule is what it accepts as a tool_use id: ^[a-zA-Z0-9_-]+$, with no length stated.
// Ids other providers made (e.g. "functions.get_weather:0") are mapped the way names
// are, as a function of the id alone, so that a call and its result still pair up and a
// conversation's earlier turns keep their bytes. Anthropic's own ids pass unchanged.
var idRule = toolname.Rule{Max: 256}

// nameMap maps every tool name the request uses (its tools and the calls in its
// history) to a name Anthropic accepts.
func nameMap(r *chatRequest) (*toolname.Map, error) {
	var names []string
	for _, t := range r.Tools {
		names = append(names, t.Function.Name)
	}
	for _, m := range r.Messages {
		for _, c := range m.ToolCalls {
			names = append(names, c.Function.Name)
		}
	}
	m, err := toolname.New(nameRule, names)
	if err != nil {
		return nil, backends.BadRequest("tools", "%v", err)
	}
	return m, nil
}

// toolChoice is a parsed tool_choice.
type toolChoice struct {
	// json is the tool_choice to send; nil sends none, which Anthropic reads as auto.
	json []byte
	// send, when non-nil, names the only tools to send (allowed_tools).
	send map[string]bool
}

// parseToolChoice maps OpenAI's tool_choice onto Anthropic's: "auto" and absent → no
// tool_choice (auto is the default), "none" → none, "required" → any, a function → tool,
// and allowed_tools → auto or any over only the allowed tools, since Anthropic has no
// allowed_tools. parallel_tool_calls false becomes disable_parallel_tool_use.
func parseToolChoice(raw json.RawMessage, tools []inTool, parallel *bool, names *toolname.Map) (toolChoice, error) {
	serial := parallel != nil && !*parallel
	c, err := masking.ParseToolChoiceStrict(raw)
	if err != nil {
		var ce *masking.ToolChoiceError
		if errors.As(err, &ce) {
			return toolChoice{}, backends.BadRequest(ce.Param, "%s", ce.Message)
		}
		return toolChoice{}, backends.BadRequest("tool_choice", "%v", err)
	}
	known := make(map[string]bool, len(tools))
	for _, t := range tools {
		known[t.Function.Name] = true
	}
	kind, name := "auto", ""
	var send map[string]bool
	switch {
	case c.None:
		kind = "none"
	case c.Type == "function":
		if !known[c.Names[0]] {
			return toolChoice{}, backends.BadRequest("tool_choice.function.name", "tool_choice names %q, which is not in tools", c.Names[0])
		}
		kind, name = "tool", c.Names[0]
	case c.Type == "allowed_tools":
		send = make(map[string]bool, len(c.Names))
		for i, n := range c.Names {
			if !known[n] {
				return toolChoice{}, backends.BadRequest(fmt.Sprintf("tool_choice.allowed_tools.tools[%d].function.name", i), "allowed tool %q is not in tools", n)
			}
			send[n] = true
		}
		if c.Mode == masking.ModeRequired {
			kind = "any"
		}
	case c.Mode == masking.ModeRequired:
		kind = "any"
	}
	if len(tools) == 0 {
		if kind == "any" || kind == "tool" {
			return toolChoice{}, backends.BadRequest("tool_choice", "tool_choice requires a tool call, but the request has no tools")
		}
		return toolChoice{}, nil
	}
	if kind == "auto" && !serial {
		return toolChoice{send: send}, nil
	}
	b := []byte(`{"type":`)
	b = appendString(b, kind)
	if kind == "tool" {
		b = append(b, `,"name":`...)
		b = appendString(b, names.Wire(name))
	}
	if serial && kind != "none" {
		b = append(b, `,"disable_parallel_tool_use":true`...)
	}
	return toolChoice{json: append(b, '}'), send: send}, nil
}

// convertTools translates the tools for which send is true (all when send is nil), in
// the client's order: name (mapped), description and input_schema, both as the client
// wrote them. A tool without parameters gets an empty object schema, which the Messages
// API requires. OpenAI's strict is not sent (see the package documentation). A tool
// the gateway marked "defer_loading": true is sent with defer_loading: true.
func convertTools(tools []inTool, send map[string]bool, names *toolname.Map) ([]block, error) {
	var out []block
	for i, t := range tools {
		if send != nil && !send[t.Function.Name] {
			continue
		}
		p := fmt.Sprintf("tools[%d]", i)
		if t.Type != "function" {
			return nil, backends.BadRequest(p+".type", "tool type %q is not supported by the anthropic backend; only function", t.Type)
		}
		if t.Function.Name == "" {
			return nil, backends.BadRequest(p+".function.name", "tool has no function name")
		}
		b := []byte(`{"name":`)
		b = appendString(b, names.Wire(t.Function.Name))
		if d := bytes.TrimSpace(t.Function.Description); !isNull(d) {
			if d[0] != '"' {
				return nil, backends.BadRequest(p+".function.description", "description must be a string")
			}
			if string(d) != `""` {
				b = append(b, `,"description":`...)
				b = append(b, d...)
			}
		}
		b = append(b, `,"input_schema":`...)
		switch s := bytes.TrimSpace(t.Function.Parameters); {
		case isNull(s):
			b = append(b, `{"type":"object","properties":{}}`...)
		case s[0] != '{':
			return nil, backends.BadRequest(p+".function.parameters", "parameters must be a JSON schema object")
		default:
			b = append(b, s...)
		}
		if t.DeferLoading {
			// Sent deferred: the API keeps the definition out of the prompt until a
			// tool_reference in a tool result loads it (deferred.go).
			b = append(b, `,"defer_loading":true`...)
		}
		out = append(out, block{json: append(b, '}'), deferred: t.DeferLoading})
	}
	return out, nil
}
