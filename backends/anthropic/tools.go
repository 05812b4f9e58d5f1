package anthropic

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/maskgate/maskgate/backends/toolname"
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
		return nil, badRequest("tools", "%v", err)
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
	known := make(map[string]bool, len(tools))
	for _, t := range tools {
		known[t.Function.Name] = true
	}
	kind, name := "auto", ""
	var send map[string]bool
	raw = bytes.TrimSpace(raw)
	switch {
	case isNull(raw):
	case raw[0] == '"':
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return toolChoice{}, badRequest("tool_choice", "tool_choice is not valid JSON: %v", err)
		}
		switch s {
		case "auto":
		case "none":
			kind = "none"
		case "required":
			kind = "any"
		default:
			return toolChoice{}, badRequest("tool_choice", `tool_choice %q is not one of "none", "auto", "required"`, s)
		}
	default:
		var c struct {
			Type     string `json:"type"`
			Function *struct {
				Name string `json:"name"`
			} `json:"function"`
			AllowedTools *struct {
				Mode  string `json:"mode"`
				Tools []struct {
					Type     string `json:"type"`
					Function struct {
						Name string `json:"name"`
					} `json:"function"`
				} `json:"tools"`
			} `json:"allowed_tools"`
		}
		if err := json.Unmarshal(raw, &c); err != nil {
			return toolChoice{}, badRequest("tool_choice", "tool_choice must be a string or an object: %v", err)
		}
		switch c.Type {
		case "function":
			if c.Function == nil || c.Function.Name == "" {
				return toolChoice{}, badRequest("tool_choice.function.name", "tool_choice names no function")
			}
			if !known[c.Function.Name] {
				return toolChoice{}, badRequest("tool_choice.function.name", "tool_choice names %q, which is not in tools", c.Function.Name)
			}
			kind, name = "tool", c.Function.Name
		case "allowed_tools":
			a := c.AllowedTools
			if a == nil || len(a.Tools) == 0 {
				return toolChoice{}, badRequest("tool_choice.allowed_tools.tools", "allowed_tools lists no tools")
			}
			send = make(map[string]bool, len(a.Tools))
			for i, t := range a.Tools {
				p := fmt.Sprintf("tool_choice.allowed_tools.tools[%d]", i)
				if t.Type != "" && t.Type != "function" {
					return toolChoice{}, badRequest(p+".type", "allowed tool type %q is not supported; only function", t.Type)
				}
				if !known[t.Function.Name] {
					return toolChoice{}, badRequest(p+".function.name", "allowed tool %q is not in tools", t.Function.Name)
				}
				send[t.Function.Name] = true
			}
			switch a.Mode {
			case "", "auto":
			case "required":
				kind = "any"
			default:
				return toolChoice{}, badRequest("tool_choice.allowed_tools.mode", `allowed_tools mode %q is not "auto" or "required"`, a.Mode)
			}
		default:
			return toolChoice{}, badRequest("tool_choice.type", `tool_choice type %q is not "function" or "allowed_tools"`, c.Type)
		}
	}
	if len(tools) == 0 {
		if kind == "any" || kind == "tool" {
			return toolChoice{}, badRequest("tool_choice", "tool_choice requires a tool call, but the request has no tools")
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
// API requires. OpenAI's strict is not sent (see the package documentation).
func convertTools(tools []inTool, send map[string]bool, names *toolname.Map) ([]block, error) {
	var out []block
	for i, t := range tools {
		if send != nil && !send[t.Function.Name] {
			continue
		}
		p := fmt.Sprintf("tools[%d]", i)
		if t.Type != "function" {
			return nil, badRequest(p+".type", "tool type %q is not supported by the anthropic backend; only function", t.Type)
		}
		if t.Function.Name == "" {
			return nil, badRequest(p+".function.name", "tool has no function name")
		}
		b := []byte(`{"name":`)
		b = appendString(b, names.Wire(t.Function.Name))
		if d := bytes.TrimSpace(t.Function.Description); !isNull(d) {
			if d[0] != '"' {
				return nil, badRequest(p+".function.description", "description must be a string")
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
			return nil, badRequest(p+".function.parameters", "parameters must be a JSON schema object")
		default:
			b = append(b, s...)
		}
		out = append(out, block{json: append(b, '}')})
	}
	return out, nil
}
