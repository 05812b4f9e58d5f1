package oai

import (
	"bytes"
	"encoding/json"
	"errors"
	"sync"
)

var errNotArray = errors.New("expected a JSON array")

// Elements calls visit with the bytes of each element of the JSON array arr, in order,
// checking the array strictly as it goes. It allocates nothing of its own; visit's error
// stops the walk and is returned.
func Elements(arr []byte, visit func(elem []byte) error) error {
	i := skipSpace(arr, 0)
	if i >= len(arr) || arr[i] != '[' {
		return errNotArray
	}
	s := scanner{b: arr, depth: 1}
	i = skipSpace(arr, i+1)
	if i < len(arr) && arr[i] == ']' {
		return trailing(arr, i+1)
	}
	for {
		e, err := s.value(i)
		if err != nil {
			return err
		}
		if err := visit(arr[i:e]); err != nil {
			return err
		}
		i = skipSpace(arr, e)
		if i >= len(arr) {
			return s.fail(i, "unexpected end of JSON input in array")
		}
		switch arr[i] {
		case ',':
			i = skipSpace(arr, i+1)
		case ']':
			return trailing(arr, i+1)
		default:
			return s.fail(i, "expected ',' or ']' after array element")
		}
	}
}

func trailing(b []byte, end int) error {
	if rest := skipSpace(b, end); rest != len(b) {
		return &SyntaxError{Offset: rest, Msg: "invalid character after top-level value"}
	}
	return nil
}

// ToolSchema is one function tool's name and its parameters' bytes, as the client sent
// them.
type ToolSchema struct {
	Name       string
	Parameters json.RawMessage
}

// ToolSchemas reads the name and parameters of each tool of a tools array without
// decoding the rest: a 500-tool catalog is read in one scan rather than unmarshalled.
// A tool that is not a function tool (no "function" member, e.g. OpenAI's custom tools)
// is skipped; a function without a string name is an error.
func ToolSchemas(tools []byte) ([]ToolSchema, error) {
	var out []ToolSchema
	err := Elements(tools, func(elem []byte) error {
		t, err := ParseObject(elem)
		if err != nil {
			return err
		}
		fn, ok := t.Get("function")
		if !ok {
			return nil
		}
		f, err := ParseObject(fn)
		if err != nil {
			return errors.New("a tool's function is not an object")
		}
		raw, ok := f.Get("name")
		if !ok || len(raw) < 2 || raw[0] != '"' {
			return errors.New("a tool's function has no string name")
		}
		name := string(raw[1 : len(raw)-1])
		if bytes.IndexByte(raw, '\\') >= 0 {
			if err := json.Unmarshal(raw, &name); err != nil {
				return err
			}
		}
		params, _ := f.Get("parameters")
		out = append(out, ToolSchema{Name: name, Parameters: params})
		return nil
	})
	return out, err
}

// SchemaCache keeps ToolSchemas results by an identifier of the tools bytes, for a
// caller that sees the same large tools array on every request (the gateway's whole
// catalog under mask) and says so with an ID. It holds a few entries and is safe for
// concurrent use; the zero value is ready.
type SchemaCache struct {
	mu      sync.Mutex
	entries map[string][]ToolSchema
}

const schemaCacheEntries = 8

// Get returns ToolSchemas(tools), remembered under id. An empty id means the bytes have
// no identity: they are read every time. The returned slice is shared: do not change it.
func (c *SchemaCache) Get(id string, tools []byte) ([]ToolSchema, error) {
	if id == "" {
		return ToolSchemas(tools)
	}
	c.mu.Lock()
	s, ok := c.entries[id]
	c.mu.Unlock()
	if ok {
		return s, nil
	}
	s, err := ToolSchemas(tools)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	if c.entries == nil || len(c.entries) >= schemaCacheEntries {
		c.entries = make(map[string][]ToolSchema, schemaCacheEntries)
	}
	c.entries[id] = s
	c.mu.Unlock()
	return s, nil
}
