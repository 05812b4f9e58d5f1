//go:build llamacpp

package embedded

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

const (
	callOpen  = "<tool_call>"
	callClose = "</tool_call>"
)

// parsedCall is one Hermes tool call: a name and its arguments as compact JSON text.
type parsedCall struct {
	name, args string
}

// parseHermesCalls parses text that starts with <tool_call>: one or more blocks
// <tool_call>{"name": ..., "arguments": ...}</tool_call>, separated by white space. The
// last block may lack its closing tag (the model stopped at its end-of-turn token).
func parseHermesCalls(text string) ([]parsedCall, error) {
	var calls []parsedCall
	rest := text
	for {
		rest = strings.TrimSpace(rest)
		if rest == "" {
			break
		}
		if !strings.HasPrefix(rest, callOpen) {
			return nil, fmt.Errorf("text after tool call %d: %.40q", len(calls), rest)
		}
		rest = rest[len(callOpen):]
		body := rest
		if i := strings.Index(rest, callClose); i >= 0 {
			body, rest = rest[:i], rest[i+len(callClose):]
		} else {
			rest = ""
		}
		c, err := parseCallBody(body)
		if err != nil {
			return nil, fmt.Errorf("tool call %d: %w", len(calls), err)
		}
		calls = append(calls, c)
	}
	if len(calls) == 0 {
		return nil, errors.New("no tool call")
	}
	return calls, nil
}

func parseCallBody(body string) (parsedCall, error) {
	var v struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	}
	dec := json.NewDecoder(strings.NewReader(body))
	if err := dec.Decode(&v); err != nil {
		return parsedCall{}, err
	}
	if dec.More() {
		return parsedCall{}, errors.New("text after the call's JSON")
	}
	if v.Name == "" {
		return parsedCall{}, errors.New(`no "name"`)
	}
	args := "{}"
	switch {
	case len(v.Arguments) == 0 || string(v.Arguments) == "null":
	case v.Arguments[0] == '"': // some models write the arguments as a JSON string
		if err := json.Unmarshal(v.Arguments, &args); err != nil {
			return parsedCall{}, err
		}
	default:
		var buf bytes.Buffer
		if err := json.Compact(&buf, v.Arguments); err != nil {
			return parsedCall{}, err
		}
		args = buf.String()
	}
	return parsedCall{name: v.Name, args: args}, nil
}
