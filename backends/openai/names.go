package openai

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/maskgate/maskgate/backends/oai"
	"github.com/maskgate/maskgate/backends/toolname"
)

// Names is one request's mapping between real tool names and the names OpenAI sees.
// A nil *Names maps nothing: every name of the request was already valid.
type Names struct {
	m *toolname.Map
	// wires are the wire names that differ from their real name, for the stream,
	// which must tell whether a partial name may still become one of them.
	wires []string
}

// newNames returns the mapping for names, or nil when none needs one.
func newNames(names []string) (*Names, error) {
	kept := names[:0:0]
	for _, name := range names {
		if name != "" { // absent, not a name: the API answers for it
			kept = append(kept, name)
		}
	}
	names = kept
	m, err := toolname.New(toolname.OpenAI, names)
	if err != nil || m.Empty() {
		return nil, err
	}
	n := &Names{m: m}
	seen := map[string]bool{}
	for _, name := range names {
		if w := m.Wire(name); w != name && !seen[w] {
			seen[w] = true
			n.wires = append(n.wires, w)
		}
	}
	return n, nil
}

// Wire returns the name OpenAI sees for a real name.
func (n *Names) Wire(name string) string {
	if n == nil {
		return name
	}
	return n.m.Wire(name)
}

// Real returns the real name for a wire name; other names come back unchanged.
func (n *Names) Real(wire string) string {
	if n == nil {
		return wire
	}
	return n.m.Real(wire)
}

// mayBecome reports whether the partial name p is a prefix of a mapped wire name, and
// whether it is one exactly with no longer mapped name starting with it.
func (n *Names) mayBecome(p string) (prefix, final bool) {
	final = true
	exact := false
	for _, w := range n.wires {
		switch {
		case w == p:
			prefix, exact = true, true
		case strings.HasPrefix(w, p):
			prefix, final = true, false
		}
	}
	return prefix, exact && final
}

// Where real names sit in a request, and where wire names sit in an answer.
var (
	requestPaths = [][]string{
		{"tools", each, "function", "name"},
		{"messages", each, "tool_calls", each, "function", "name"},
		{"tool_choice", "function", "name"},
		{"tool_choice", "allowed_tools", "tools", each, "function", "name"},
	}
	responsePath = []string{"choices", each, "message", "tool_calls", each, "function", "name"}
	chunkPath    = []string{"choices", each, "delta", "tool_calls", each, "function", "name"}
)

// toWire rewrites every real name of a request body to its wire name.
func (n *Names) toWire(body []byte) ([]byte, error) {
	f := func(_ []int, s string) (string, op) { return n.Wire(s), replace }
	for _, p := range requestPaths {
		var err error
		if body, _, err = rewrite(body, p, f); err != nil {
			return nil, err
		}
	}
	return body, nil
}

// Response maps the wire names of a whole chat.completion back to real names. A body
// with no mapped name comes back as it is.
func (n *Names) Response(body []byte) ([]byte, error) {
	if n == nil || !bytes.Contains(body, []byte(`"tool_calls"`)) {
		return body, nil
	}
	out, _, err := rewrite(body, responsePath, func(_ []int, s string) (string, op) { return n.Real(s), replace })
	return out, err
}

// requestNames lists every tool name a request mentions: its tools, the calls in its
// messages and its tool_choice. Duplicates are harmless.
func requestNames(obj *oai.Object) ([]string, []string, error) {
	var names, tools []string
	if raw, ok := obj.Get("tools"); ok && string(raw) != "null" {
		// A scan, not json.Unmarshal: a whole catalog can be 300 KB on every request.
		ts, err := oai.ToolSchemas(raw)
		if err != nil {
			return nil, nil, &oai.RequestError{Message: "tools: " + err.Error(), Param: "tools"}
		}
		for _, t := range ts {
			tools = append(tools, t.Name)
		}
		names = append(names, tools...)
	}
	if raw, ok := obj.Get("messages"); ok && bytes.Contains(raw, []byte(`"tool_calls"`)) {
		var ms []struct {
			ToolCalls []struct {
				Function struct {
					Name string `json:"name"`
				} `json:"function"`
			} `json:"tool_calls"`
		}
		if json.Unmarshal(raw, &ms) == nil { // a malformed history is the API's to refuse
			for _, m := range ms {
				for _, c := range m.ToolCalls {
					names = append(names, c.Function.Name)
				}
			}
		}
	}
	if raw, ok := obj.Get("tool_choice"); ok && len(raw) > 0 && raw[0] == '{' {
		var c struct {
			Function struct {
				Name string `json:"name"`
			} `json:"function"`
			AllowedTools struct {
				Tools []struct {
					Function struct {
						Name string `json:"name"`
					} `json:"function"`
				} `json:"tools"`
			} `json:"allowed_tools"`
		}
		if json.Unmarshal(raw, &c) == nil {
			names = append(names, c.Function.Name)
			for _, t := range c.AllowedTools.Tools {
				names = append(names, t.Function.Name)
			}
		}
	}
	return names, tools, nil
}
