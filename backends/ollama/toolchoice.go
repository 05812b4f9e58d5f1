package ollama

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/maskgate/maskgate/backends"
	"github.com/maskgate/maskgate/backends/oai"
	"github.com/maskgate/maskgate/masking"
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
	c, err := masking.ParseToolChoiceStrict(raw)
	if err != nil {
		var ce *masking.ToolChoiceError
		if errors.As(err, &ce) {
			return toolChoice{}, backends.BadRequest(ce.Param, "%s", ce.Message)
		}
		return toolChoice{}, backends.BadRequest("tool_choice", "%v", err)
	}
	has := len(tools) > 0
	switch {
	case c.None:
		return toolChoice{mode: toolsOff}, nil
	case c.Type == "" && c.Mode == masking.ModeAuto:
		if has {
			return toolChoice{mode: toolsAuto}, nil
		}
		return toolChoice{mode: toolsOff}, nil
	case c.Type == "": // "required"
		if !has {
			return toolChoice{}, backends.BadRequest("tool_choice", `tool_choice "required" needs tools`)
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
	}
	known := make(map[string]bool, len(tools))
	for _, t := range tools {
		known[t.Function.Name] = true
	}
	if c.Type == "function" {
		if !known[c.Names[0]] {
			return toolChoice{}, backends.BadRequest("tool_choice.function.name", "tool_choice names %q, which is not in tools", c.Names[0])
		}
		return toolChoice{mode: toolsRequired, names: c.Names}, nil
	}
	var names []string // allowed_tools
	seen := map[string]bool{}
	for i, name := range c.Names {
		if !known[name] {
			return toolChoice{}, backends.BadRequest(fmt.Sprintf("tool_choice.allowed_tools.tools[%d].function.name", i), "allowed tool %q is not in tools", name)
		}
		if !seen[name] {
			seen[name] = true
			names = append(names, name)
		}
	}
	if c.Mode == masking.ModeRequired {
		return toolChoice{mode: toolsRequired, names: names}, nil
	}
	return toolChoice{mode: toolsAuto, names: names}, nil
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
				return nil, backends.BadRequest(fmt.Sprintf("tools[%d].function.parameters", i), "parameters must be a JSON schema object")
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
