package anthropic

import (
	"bytes"
	"encoding/json"

	"github.com/maskgate/maskgate/backends"
	"github.com/maskgate/maskgate/backends/oai"
	"github.com/maskgate/maskgate/backends/toolname"
)

// Strategy index on the Messages API (backends.LoadDeferred): the gateway sends the
// catalog's tools that are not callable yet with "defer_loading": true, and the backend
// sends them so. Anthropic keeps a deferred tool's definition out of the prompt and
// expands it, inline, where a tool_result holds a tool_reference to it ("Tool search
// tool": custom tool search implementation, client tools returning tool_reference
// blocks; "Tool use with prompt caching": deferred tools are not in the cached prefix).
// Loading a tool therefore appends to the conversation and leaves every earlier byte,
// the tools array included, as it was.

var _ backends.ToolLoader = (*Backend)(nil)

// LoadsTools: Anthropic loads deferred tools natively, through tool_reference blocks.
func (b *Backend) LoadsTools() backends.LoadKind { return backends.LoadDeferred }

// betaToolSearch is the anthropic-beta flag a request with deferred tools carries on the
// Claude API: tool search, defer_loading and tool_reference shipped under "advanced tool
// use" (Vertex AI and Bedrock name it tool-search-tool-2025-10-19; this backend speaks
// to the Claude API).
const betaToolSearch = "advanced-tool-use-2025-11-20"

// The gateway's meta-tools whose results load tools (toolsearch/meta): load_tool, and
// search_tools under search.auto_load, whose result carries the definitions it loaded.
const (
	loadTool    = "load_tool"
	searchTools = "search_tools"
)

// loads reports whether a call of this name may answer with a load result.
func loads(name string) bool { return name == loadTool || name == searchTools }

// deferredTools returns the client names of the tools marked defer_loading, or nil when
// there are none.
func deferredTools(tools []inTool) map[string]bool {
	var out map[string]bool
	for _, t := range tools {
		if t.DeferLoading && t.Function.Name != "" {
			if out == nil {
				out = make(map[string]bool)
			}
			out[t.Function.Name] = true
		}
	}
	return out
}

// loadResult turns a tool message answering a load_tool call (or search_tools under
// auto_load) into a tool_result whose
// content is one tool_reference per deferred tool its load result lists (in the
// result's order, once each), then the result's text without those definitions:
//
//	{"type":"tool_result","tool_use_id":ID,"content":[
//	  {"type":"tool_reference","tool_name":"github_create_issue"},
//	  {"type":"text","text":"{\"success\":true,\"message\":\"Loaded ...\",\"toolName\":...}"}]}
//
// The text stays inside the tool_result rather than beside it in the user turn: a text
// block after a tool_result that holds references ends the expanded definitions with
// what reads as a new human turn. A definition of a tool that is not deferred (a
// callable tool, or one the request does not carry) stays in the text, as the model
// could not load it by reference. ok is false when the message is not a load result
// with a deferred tool to reference; the caller then sends it as any tool result.
func loadResult(m *inMessage, names *toolname.Map, deferred map[string]bool) (b block, ok bool) {
	var text string
	if m.ToolCallID == "" || json.Unmarshal(m.Content, &text) != nil {
		return block{}, false
	}
	result := []byte(text)
	tools, found, isObject := oai.Member(result, "tools")
	if !found || !isObject {
		return block{}, false
	}
	var refs []string
	var kept [][]byte
	seen := make(map[string]bool)
	err := oai.Elements(tools, func(elem []byte) error {
		var def struct {
			Function struct {
				Name string `json:"name"`
			} `json:"function"`
		}
		if err := json.Unmarshal(elem, &def); err != nil {
			return err
		}
		switch n := def.Function.Name; {
		case !deferred[n]:
			kept = append(kept, elem)
		case !seen[n]:
			seen[n] = true
			refs = append(refs, n)
		}
		return nil
	})
	if err != nil || len(refs) == 0 {
		return block{}, false
	}
	if len(kept) == 0 {
		result, err = oai.Delete(result, "tools")
	} else {
		result, err = oai.Set(result, "tools", append(append([]byte{'['}, bytes.Join(kept, []byte{','})...), ']'))
	}
	if err != nil {
		return block{}, false
	}
	out := []byte(`{"type":"tool_result","tool_use_id":`)
	out = appendString(out, idRule.Wire(m.ToolCallID))
	out = append(out, `,"content":[`...)
	for _, n := range refs {
		out = append(out, `{"type":"tool_reference","tool_name":`...)
		out = appendString(out, names.Wire(n))
		out = append(out, `},`...)
	}
	out = append(out, `{"type":"text","text":`...)
	out = appendString(out, string(result))
	return block{json: append(out, "}]}"...)}, true
}
