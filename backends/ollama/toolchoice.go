package ollama

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/maskgate/maskgate/backends/oai"
)

// toolChoice is a parsed tool_choice.
type toolChoice struct {
	mode toolMode
	// names are the tools the model may call, in the order the client gave them: for
	// toolsRequired always set; for toolsAuto nil means every tool.
	names []string
}

// parseToolChoice reads tool_choice against the request's tools.
func parseToolChoice(raw json.RawMessage, tools []oai.Tool) (toolChoice, error) {
	raw = bytes.TrimSpace(raw)
	has := len(tools) > 0
	if len(raw) == 0 || string(raw) == "null" {
		if has {
			return toolChoice{mode: toolsAuto}, nil
		}
		return toolChoice{mode: toolsOff}, nil
	}
	if raw[0] == '"' {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return toolChoice{}, badRequest("tool_choice", "tool_choice is not valid JSON: %v", err)
		}
		switch s {
		case "none":
			return toolChoice{mode: toolsOff}, nil
		case "auto":
			if has {
				return toolChoice{mode: toolsAuto}, nil
			}
			return toolChoice{mode: toolsOff}, nil
		case "required":
			if !has {
				return toolChoice{}, badRequest("tool_choice", `tool_choice "required" needs tools`)
			}
			var names []string
			seen := map[string]bool{}
			for _, t := range tools {
				if !seen[t.Function.Name] {
					seen[t.Function.Name] = true
					names = append(names, t.Function.Name)
				}
			}
			return toolChoice{mode: toolsRequired, names: names}, nil
		default:
			return toolChoice{}, badRequest("tool_choice", `tool_choice %q is not one of "none", "auto", "required"`, s)
		}
	}
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
	known := make(map[string]bool, len(tools))
	for _, t := range tools {
		known[t.Function.Name] = true
	}
	switch c.Type {
	case "function":
		if c.Function == nil || c.Function.Name == "" {
			return toolChoice{}, badRequest("tool_choice.function.name", "tool_choice names no function")
		}
		if !known[c.Function.Name] {
			return toolChoice{}, badRequest("tool_choice.function.name", "tool_choice names %q, which is not in tools", c.Function.Name)
		}
		return toolChoice{mode: toolsRequired, names: []string{c.Function.Name}}, nil
	case "allowed_tools":
		a := c.AllowedTools
		if a == nil || len(a.Tools) == 0 {
			return toolChoice{}, badRequest("tool_choice.allowed_tools.tools", "allowed_tools lists no tools")
		}
		var names []string
		seen := map[string]bool{}
		for i, t := range a.Tools {
			param := fmt.Sprintf("tool_choice.allowed_tools.tools[%d]", i)
			if t.Type != "" && t.Type != "function" {
				return toolChoice{}, badRequest(param+".type", "allowed tool type %q is not supported; only function", t.Type)
			}
			if !known[t.Function.Name] {
				return toolChoice{}, badRequest(param+".function.name", "allowed tool %q is not in tools", t.Function.Name)
			}
			if !seen[t.Function.Name] {
				seen[t.Function.Name] = true
				names = append(names, t.Function.Name)
			}
		}
		switch a.Mode {
		case "", "auto":
			return toolChoice{mode: toolsAuto, names: names}, nil
		case "required":
			return toolChoice{mode: toolsRequired, names: names}, nil
		default:
			return toolChoice{}, badRequest("tool_choice.allowed_tools.mode", `allowed_tools mode %q is not "auto" or "required"`, a.Mode)
		}
	default:
		return toolChoice{}, badRequest("tool_choice.type", `tool_choice type %q is not "function" or "allowed_tools"`, c.Type)
	}
}

// callFormat is the JSON schema that makes the model answer with one call to one of
// names: {"name": <one of names>, "arguments": <the tool's parameters when only one tool
// is allowed, else any object>}. Its bytes depend only on names and the tools' schemas.
func callFormat(names []string, tools []oai.Tool) (json.RawMessage, error) {
	args := []byte(`{"type":"object"}`)
	if len(names) == 1 {
		for i, t := range tools {
			if t.Function.Name != names[0] {
				continue
			}
			p := bytes.TrimSpace(t.Function.Parameters)
			if len(p) == 0 || string(p) == "null" {
				break
			}
			var buf bytes.Buffer
			if err := json.Compact(&buf, p); err != nil || buf.Bytes()[0] != '{' {
				return nil, badRequest(fmt.Sprintf("tools[%d].function.parameters", i), "parameters must be a JSON schema object")
			}
			args = buf.Bytes()
			break
		}
	}
	enum, err := json.Marshal(names)
	if err != nil { // strings only: cannot fail
		return nil, err
	}
	var b bytes.Buffer
	b.WriteString(`{"type":"object","properties":{"name":{"type":"string","enum":`)
	b.Write(enum)
	b.WriteString(`},"arguments":`)
	b.Write(args)
	b.WriteString(`},"required":["name","arguments"]}`)
	return b.Bytes(), nil
}
