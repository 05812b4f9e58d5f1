package masking

import (
	"encoding/json"
	"errors"
)

// ErrToolChoice is a tool_choice the constraint cannot be read from.
var ErrToolChoice = errors.New(`tool_choice must be "auto", "required", "none", {"type":"function",...} or {"type":"allowed_tools",...}`)

// ParseToolChoice reads an OpenAI tool_choice (raw JSON; empty or null means auto) as a
// mode and, for a named function or allowed_tools, the names it narrows the allowed set
// to. none reports "none": no call may be made, so no constraint applies.
func ParseToolChoice(raw []byte) (mode Mode, names []string, none bool, err error) {
	switch string(raw) {
	case "", "null", `"auto"`:
		return ModeAuto, nil, false, nil
	case `"required"`:
		return ModeRequired, nil, false, nil
	case `"none"`:
		return ModeAuto, nil, true, nil
	}
	var c struct {
		Type     string `json:"type"`
		Function struct {
			Name string `json:"name"`
		} `json:"function"`
		AllowedTools struct {
			Mode  string `json:"mode"`
			Tools []struct {
				Function struct {
					Name string `json:"name"`
				} `json:"function"`
			} `json:"tools"`
		} `json:"allowed_tools"`
	}
	if json.Unmarshal(raw, &c) != nil {
		return 0, nil, false, ErrToolChoice
	}
	switch c.Type {
	case "function":
		return ModeRequired, []string{c.Function.Name}, false, nil
	case "allowed_tools":
		for _, t := range c.AllowedTools.Tools {
			names = append(names, t.Function.Name)
		}
		if names == nil {
			names = []string{} // an empty list narrows to nothing, unlike no list
		}
		switch c.AllowedTools.Mode {
		case "required":
			return ModeRequired, names, false, nil
		case "", "auto":
			return ModeAuto, names, false, nil
		}
	}
	return 0, nil, false, ErrToolChoice
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
