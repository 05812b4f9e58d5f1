package toolsearch

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
)

// wireTool is an OpenAI tool object as it appears in a tools file or a request, plus the
// two members a tools file may add.
type wireTool struct {
	Type     string        `json:"type"`
	Function *wireFunction `json:"function"`
	Keywords []string      `json:"keywords"`
	Category string        `json:"category"`
}

type wireFunction struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters"`
	Strict      *bool           `json:"strict"`
}

// ParseTools reads a tools file: a JSON array of OpenAI tool objects
// ({"type":"function","function":{"name","description","parameters"}}), each with optional
// top-level "keywords" (array of strings) and "category" (string). Unknown members are
// errors, so a misspelt "keyword" is caught at start-up. Errors name origin (the file) and
// the tool's index. The tools come back with Source FromProfile, in file order.
func ParseTools(data []byte, origin string) ([]Tool, error) {
	return parseTools(data, origin, true)
}

// ParseClientTools reads the "tools" member of a client's request. It is lenient where
// OpenAI is (unknown members are ignored) and strict where the catalog must be (names,
// parameters that are a JSON object, "function" tools only). Errors name the tool as
// "tools[i]", the request parameter the client can fix. The tools come back with Source
// FromClient, in request order, and share no memory with data.
func ParseClientTools(data []byte) ([]Tool, error) {
	return parseTools(data, "", false)
}

// ReadFiles reads tools files in order with ParseTools.
func ReadFiles(paths ...string) ([]Tool, error) {
	var all []Tool
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			return nil, fmt.Errorf("tools file: %w", err)
		}
		ts, err := ParseTools(data, p)
		if err != nil {
			return nil, err
		}
		all = append(all, ts...)
	}
	return all, nil
}

func parseTools(data []byte, origin string, strict bool) ([]Tool, error) {
	where := func(i int) string {
		if strict {
			return fmt.Sprintf("%s tool %d", origin, i)
		}
		return fmt.Sprintf("tools[%d]", i)
	}
	var items []json.RawMessage
	if err := json.Unmarshal(data, &items); err != nil {
		if strict {
			return nil, fmt.Errorf("%s: want a JSON array of tool objects: %w", origin, err)
		}
		return nil, fmt.Errorf("tools: want an array of tool objects: %w", err)
	}
	tools := make([]Tool, 0, len(items))
	for i, raw := range items {
		var w wireTool
		dec := json.NewDecoder(bytes.NewReader(raw))
		if strict {
			dec.DisallowUnknownFields()
		}
		if err := dec.Decode(&w); err != nil {
			return nil, fmt.Errorf("%s: %w", where(i), err)
		}
		if w.Type != "function" {
			return nil, fmt.Errorf("%s: type %q is not supported; only \"function\" tools can be searched", where(i), w.Type)
		}
		if w.Function == nil {
			return nil, fmt.Errorf("%s: function is missing", where(i))
		}
		t := Tool{
			Name:        w.Function.Name,
			Description: w.Function.Description,
			Parameters:  w.Function.Parameters,
			Strict:      w.Function.Strict,
			Keywords:    w.Keywords,
			Category:    w.Category,
			Origin:      where(i),
		}
		if !strict {
			t.Source = FromClient
		}
		if bytes.Equal(bytes.TrimSpace(t.Parameters), []byte("null")) {
			t.Parameters = nil
		}
		if err := t.check(); err != nil {
			return nil, fmt.Errorf("%s: %w", where(i), err)
		}
		tools = append(tools, t)
	}
	return tools, nil
}
