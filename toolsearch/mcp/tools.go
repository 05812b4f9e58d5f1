package mcp

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/maskgate/maskgate/toolsearch"
)

// maxTools bounds one server's listing: a server paging forever is cut
// there (and by the timeout).
const maxTools = 4096

// listing is what one tools/list made: the allowed tools, converted, and
// every id back to the server's own name.
type listing struct {
	tools []toolsearch.Tool
	ids   map[string]entry // namespaced id → the server's tool
}

type entry struct {
	name    string // the server's own tool name
	allowed bool
}

// sanitize replaces every byte outside [A-Za-z0-9_.-] with '_'.
func sanitize(name string) string {
	b := []byte(name)
	for i, c := range b {
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '.' || c == '-') {
			b[i] = '_'
		}
	}
	return string(b)
}

// convert turns a server's tool listing into toolsearch tools, in listing
// order: named server + "_" + the sanitized tool name, allowlisted (allow nil
// allows all), with the input schema as Parameters. Tools that cannot be
// named, whose schema is not a JSON object, or whose id another tool already
// took (the first listed keeps it) are left out and logged.
//
// Parameters are deterministic: the SDK decodes a listed inputSchema into a
// map[string]any, and encoding/json marshals maps with sorted keys, so the
// same listing gives byte-identical Parameters every time (keys sorted, not
// in the server's order). The prompt the gateway renders from them never
// moves between reconnects, restarts or replicas.
func convert(server string, listed []*sdk.Tool, allow map[string]bool, log *slog.Logger) listing {
	l := listing{ids: map[string]entry{}}
	// Allowed tools first, so that a tool left out by the allowlist never
	// takes an id from one the allowlist keeps.
	for _, t := range listed {
		if t == nil || (allow != nil && !allow[t.Name]) {
			continue
		}
		id := server + "_" + sanitize(t.Name)
		if t.Name == "" || len(id) > maxNameLen {
			log.Warn("mcp: tool left out: its name is empty or too long", "server", server, "tool", t.Name, "limit", maxNameLen)
			continue
		}
		if prev, ok := l.ids[id]; ok {
			log.Warn("mcp: tool left out: its name collides with another tool's after sanitizing", "server", server, "tool", t.Name, "kept", prev.name, "id", id)
			continue
		}
		params, err := schema(t.InputSchema)
		if err != nil {
			log.Warn("mcp: tool left out", "server", server, "tool", t.Name, "error", err)
			continue
		}
		l.ids[id] = entry{name: t.Name, allowed: true}
		l.tools = append(l.tools, toolsearch.Tool{
			Name:        id,
			Description: description(t),
			Parameters:  params,
			Keywords:    keywords(t),
			Category:    server,
			Source:      toolsearch.FromProfile,
			Origin:      fmt.Sprintf("mcp server %s tool %s", server, t.Name),
		})
	}
	for _, t := range listed {
		if t == nil || allow == nil || allow[t.Name] || t.Name == "" {
			continue
		}
		id := server + "_" + sanitize(t.Name)
		if _, ok := l.ids[id]; !ok && len(id) <= maxNameLen {
			l.ids[id] = entry{name: t.Name}
		}
	}
	return l
}

// schema returns the JSON of an input schema, nil for none.
func schema(s any) (json.RawMessage, error) {
	if s == nil {
		return nil, nil
	}
	b, err := json.Marshal(s)
	if err != nil {
		return nil, fmt.Errorf("inputSchema: %v", err)
	}
	if string(b) == "null" {
		return nil, nil
	}
	if len(b) == 0 || b[0] != '{' {
		return nil, fmt.Errorf("inputSchema is not a JSON object: %.60s", b)
	}
	return b, nil
}

func description(t *sdk.Tool) string {
	switch {
	case t.Description != "":
		return t.Description
	case t.Title != "":
		return t.Title
	case t.Annotations != nil:
		return t.Annotations.Title
	}
	return ""
}

// keywords are the tool's titles, searched but never rendered.
func keywords(t *sdk.Tool) []string {
	var k []string
	add := func(s string) {
		if s != "" && s != t.Description && !slices.Contains(k, s) {
			k = append(k, s)
		}
	}
	add(t.Title)
	if t.Annotations != nil {
		add(t.Annotations.Title)
	}
	return k
}

// sameTools reports whether a and b would render and search alike.
func sameTools(a, b []toolsearch.Tool) bool {
	return slices.EqualFunc(a, b, func(x, y toolsearch.Tool) bool {
		return x.Name == y.Name && x.Description == y.Description && bytes.Equal(x.Parameters, y.Parameters) &&
			slices.Equal(x.Keywords, y.Keywords) && x.Origin == y.Origin
	})
}
