package masking

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
)

// ErrToolChoice is a tool_choice the constraint cannot be read from. Every error that
// ParseToolChoice and ParseToolChoiceStrict return is a *ToolChoiceError that is
// ErrToolChoice under errors.Is.
var ErrToolChoice = errors.New(`tool_choice must be "auto", "required", "none", {"type":"function",...} or {"type":"allowed_tools",...}`)

// ToolChoiceError is a tool_choice that cannot be read. Param names the field at fault
// the way OpenAI's error envelope does ("tool_choice.allowed_tools.mode"); Message says
// what is wrong with it, for the client.
type ToolChoiceError struct {
	Param, Message string
}

func (e *ToolChoiceError) Error() string { return e.Message }

// Is makes every ToolChoiceError ErrToolChoice, so callers that only need to know
// that tool_choice was unreadable need not know the field.
func (e *ToolChoiceError) Is(target error) bool { return target == ErrToolChoice }

func toolChoiceError(param, format string, args ...any) *ToolChoiceError {
	return &ToolChoiceError{Param: param, Message: fmt.Sprintf(format, args...)}
}

// ToolChoice is an OpenAI tool_choice, read.
type ToolChoice struct {
	// Type is the object's type, "function" or "allowed_tools"; "" for "auto",
	// "required", "none" and an absent or null tool_choice.
	Type string
	// Mode is ModeRequired for "required", a named function and allowed_tools in mode
	// required; ModeAuto otherwise.
	Mode Mode
	// None reports "none": no call may be made, so no constraint applies.
	None bool
	// Names are the names a function (one) or allowed_tools narrows the allowed set to,
	// in the client's order, repeats kept. Nil when nothing narrows it; an empty list
	// narrows to nothing, unlike no list.
	Names []string
}

// ParseToolChoice reads an OpenAI tool_choice (raw JSON; empty or null means auto) as a
// mode and, for a named function or allowed_tools, the names it narrows the allowed set
// to. none reports "none": no call may be made, so no constraint applies.
//
// It is the lenient reading, for callers that only narrow an allowed set by the names
// (the engines, the gateway): a function without a name narrows to "", an
// allowed_tools list may be empty, and its entries' types are not checked (an entry
// without a function narrows to "").
func ParseToolChoice(raw []byte) (mode Mode, names []string, none bool, err error) {
	c, err := readToolChoice(raw, false)
	return c.Mode, c.Names, c.None, err
}

// ParseToolChoiceStrict reads tool_choice as OpenAI defines it for function tools: a
// named function must have a name, and allowed_tools must list at least one tool, each
// of type function. Whether the names are among the request's tools is the caller's
// to check.
func ParseToolChoiceStrict(raw []byte) (ToolChoice, error) {
	return readToolChoice(raw, true)
}

// readToolChoice is the one reader of tool_choice's shape; strict adds the checks of
// ParseToolChoiceStrict.
func readToolChoice(raw []byte, strict bool) (ToolChoice, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return ToolChoice{}, nil
	}
	if raw[0] == '"' {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return ToolChoice{}, toolChoiceError("tool_choice", "tool_choice is not valid JSON: %v", err)
		}
		switch s {
		case "auto":
			return ToolChoice{}, nil
		case "required":
			return ToolChoice{Mode: ModeRequired}, nil
		case "none":
			return ToolChoice{None: true}, nil
		}
		return ToolChoice{}, toolChoiceError("tool_choice", `tool_choice %q is not one of "none", "auto", "required"`, s)
	}
	var c struct {
		Type     string `json:"type"`
		Function struct {
			Name string `json:"name"`
		} `json:"function"`
		AllowedTools struct {
			Mode  string `json:"mode"`
			Tools []struct {
				// Type is raw so that the lenient reading accepts what it never looks at.
				Type     json.RawMessage `json:"type"`
				Function struct {
					Name string `json:"name"`
				} `json:"function"`
			} `json:"tools"`
		} `json:"allowed_tools"`
	}
	if err := json.Unmarshal(raw, &c); err != nil {
		return ToolChoice{}, toolChoiceError("tool_choice", "tool_choice must be a string or an object: %v", err)
	}
	switch c.Type {
	case "function":
		name := c.Function.Name
		if strict && name == "" {
			return ToolChoice{}, toolChoiceError("tool_choice.function.name", "tool_choice names no function")
		}
		return ToolChoice{Type: c.Type, Mode: ModeRequired, Names: []string{name}}, nil
	case "allowed_tools":
		a := c.AllowedTools
		if strict && len(a.Tools) == 0 {
			return ToolChoice{}, toolChoiceError("tool_choice.allowed_tools.tools", "allowed_tools lists no tools")
		}
		names := make([]string, 0, len(a.Tools)) // never nil: see ToolChoice.Names
		for i, t := range a.Tools {
			if strict {
				var typ string
				if len(t.Type) > 0 && json.Unmarshal(t.Type, &typ) != nil {
					typ = string(t.Type) // not a string: say it as written
				}
				if typ != "" && typ != "function" {
					return ToolChoice{}, toolChoiceError(fmt.Sprintf("tool_choice.allowed_tools.tools[%d].type", i),
						"allowed tool type %q is not supported; only function", typ)
				}
			}
			names = append(names, t.Function.Name)
		}
		switch a.Mode {
		case "", "auto":
			return ToolChoice{Type: c.Type, Mode: ModeAuto, Names: names}, nil
		case "required":
			return ToolChoice{Type: c.Type, Mode: ModeRequired, Names: names}, nil
		}
		return ToolChoice{}, toolChoiceError("tool_choice.allowed_tools.mode", `allowed_tools mode %q is not "auto" or "required"`, a.Mode)
	}
	return ToolChoice{}, toolChoiceError("tool_choice.type", `tool_choice type %q is not "function" or "allowed_tools"`, c.Type)
}

// Narrow keeps the names of allowed that narrow lists, in allowed's order; a nil narrow
// keeps them all.
func Narrow(allowed, narrow []string) []string {
	if narrow == nil {
		return allowed
	}
	var out []string
	for _, a := range allowed {
		for _, n := range narrow {
			if a == n {
				out = append(out, a)
				break
			}
		}
	}
	return out
}
