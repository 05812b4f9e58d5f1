package toolsearch

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// Tool is one function a model can call.
type Tool struct {
	// Name is the function name: 1–128 bytes of ASCII letters, digits, '_', '-' and '.'.
	Name string
	// Description is the function description, or "" for none.
	Description string
	// Parameters is the JSON schema of the arguments exactly as it was read: the bytes are
	// rendered verbatim, never decoded and re-encoded. Nil for a function without one. A
	// Tool in a Catalog shares these bytes: they must not be modified.
	Parameters json.RawMessage
	// Strict is the function's "strict" flag, or nil where it was not given.
	Strict *bool
	// Summary, when set, is the tool's line in the catalog's index (strategy index) in
	// place of its description's first sentence: a profile's override. Never rendered in
	// the tool's object.
	Summary string
	// Keywords are extra search terms; they are searched but never rendered.
	Keywords []string
	// Category is a free-form label; it is searched like a keyword and never rendered.
	Category string
	// Source says where the tool came from: the profile (zero) or the client's request.
	Source Source
	// Origin says where it was read, for messages: "tools/catalog.json tool 3", "tools[2]".
	Origin string

	rendered []byte // the tool's OpenAI object, set when a Catalog takes it in
}

// Source is where a tool came from.
type Source uint8

const (
	// FromProfile is a tool of the profile: config files, MCP servers. Shared by every
	// request of the profile.
	FromProfile Source = iota
	// FromClient is a tool from the request's own "tools" array. It exists for that request
	// only.
	FromClient
)

func (s Source) String() string {
	switch s {
	case FromProfile:
		return "profile"
	case FromClient:
		return "client"
	}
	return fmt.Sprintf("Source(%d)", uint8(s))
}

// maxNameLen is the longest tool name accepted; MCP allows 128 bytes, OpenAI 64.
const maxNameLen = 128

// check reports what is wrong with t's name and parameters, or nil.
func (t *Tool) check() error {
	if t.Name == "" {
		return fmt.Errorf("function.name is empty")
	}
	if len(t.Name) > maxNameLen {
		return fmt.Errorf("function.name %.40q… is longer than %d bytes", t.Name, maxNameLen)
	}
	for i := 0; i < len(t.Name); i++ {
		if !nameByte(t.Name[i]) {
			return fmt.Errorf("function.name %q: byte %d (%q) is not allowed; use letters, digits, '_', '-' and '.'", t.Name, i, t.Name[i])
		}
	}
	if t.Parameters != nil {
		p := bytes.TrimSpace(t.Parameters)
		if len(p) == 0 || p[0] != '{' || !json.Valid(p) {
			return fmt.Errorf("function %q: parameters must be a JSON object (a JSON schema)", t.Name)
		}
	}
	return nil
}

func nameByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' ||
		c == '_' || c == '-' || c == '.'
}
