package state

import (
	"bytes"
	"encoding/json"
	"strings"
)

// Meta-tool names, as the model calls them.
const (
	SearchTools = "search_tools"
	LoadTool    = "load_tool"
)

// FromMessages derives the loaded tools of storage "context" from a chat request's
// messages, in first-load order.
//
// A tool is loaded while both the assistant's load_tool call and that call's tool result
// (matched by tool_call_id) remain in messages: a call without its result, or a result
// whose call has left the history, loads nothing, so a client that trims its history
// unloads what it trimmed. The call's arguments name the tools: {"toolName": "a"},
// {"toolNames": ["a", "b"]} or both; the arguments may be a JSON string (as OpenAI sends
// them) or an object. A result that is an error (see below) loads nothing. A result that is
// a JSON object with a "loaded" array of names is authoritative: those names load, not the
// arguments' (the gateway reports there what it actually loaded, after policy).
//
// With autoLoad, search_tools results load the tools they name too: the result's "loaded"
// array when it has one, else the "name" of each element of its "results" (or "tools")
// array, or of a top-level array.
//
// A result is an error when its text (the content string, or its text parts joined)
// begins with "error" followed by ':' (any case), or is a JSON object with an "error"
// member that is not null or false.
//
// Loads happen in the order of the results in messages. Malformed messages and arguments
// are ignored; FromMessages never fails and never panics.
func FromMessages(messages []json.RawMessage, autoLoad bool) []string {
	calls := map[string]call{}
	var out []string
	seen := map[string]bool{}
	add := func(names []string) {
		for _, n := range names {
			if n != "" && !seen[n] {
				seen[n] = true
				out = append(out, n)
			}
		}
	}
	for _, raw := range messages {
		var m message
		if json.Unmarshal(raw, &m) != nil {
			continue
		}
		switch m.Role {
		case "assistant":
			for _, tc := range m.ToolCalls {
				name := tc.Function.Name
				if tc.ID == "" || (name != LoadTool && (name != SearchTools || !autoLoad)) {
					continue
				}
				if _, dup := calls[tc.ID]; !dup {
					calls[tc.ID] = call{name: name, args: tc.Function.Arguments}
				}
			}
		case "tool":
			c, ok := calls[m.ToolCallID]
			if !ok {
				continue
			}
			delete(calls, m.ToolCallID) // one result per call
			text := contentText(m.Content)
			if isError(text) {
				continue
			}
			if names, ok := reportedLoads(text, c.name == LoadTool); ok {
				add(names)
				continue
			}
			if c.name == LoadTool {
				add(loadArgs(c.args))
			} else {
				add(searchResults(text))
			}
		}
	}
	return out
}

type message struct {
	Role       string          `json:"role"`
	Content    json.RawMessage `json:"content"`
	ToolCallID string          `json:"tool_call_id"`
	ToolCalls  []struct {
		ID       string `json:"id"`
		Function struct {
			Name      string          `json:"name"`
			Arguments json.RawMessage `json:"arguments"`
		} `json:"function"`
	} `json:"tool_calls"`
}

type call struct {
	name string
	args json.RawMessage
}

// contentText is a message content's text: the string, or its text parts joined.
// Anything else is "".
func contentText(content json.RawMessage) string {
	content = bytes.TrimSpace(content)
	if len(content) == 0 {
		return ""
	}
	switch content[0] {
	case '"':
		var s string
		if json.Unmarshal(content, &s) == nil {
			return s
		}
	case '[':
		var parts []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		}
		if json.Unmarshal(content, &parts) == nil {
			var b strings.Builder
			for _, p := range parts {
				if p.Type == "text" {
					b.WriteString(p.Text)
				}
			}
			return b.String()
		}
	}
	return ""
}

func isError(text string) bool {
	t := strings.TrimSpace(text)
	if len(t) >= 6 && strings.EqualFold(t[:5], "error") && t[5] == ':' {
		return true
	}
	if !strings.HasPrefix(t, "{") {
		return false
	}
	var obj struct {
		Error json.RawMessage `json:"error"`
	}
	if json.Unmarshal([]byte(t), &obj) != nil {
		return false
	}
	e := string(bytes.TrimSpace(obj.Error))
	return e != "" && e != "null" && e != "false"
}

// reportedLoads returns the names a JSON object result says were loaded, if it says:
// its "loaded" array, or, for load_tool, the toolName and toolNames that toolsearch/meta
// reports as callable after the call (a result with "success" and neither names none).
func reportedLoads(text string, loadTool bool) ([]string, bool) {
	t := strings.TrimSpace(text)
	if !strings.HasPrefix(t, "{") {
		return nil, false
	}
	var obj struct {
		Loaded    []json.RawMessage `json:"loaded"`
		Success   json.RawMessage   `json:"success"`
		ToolName  json.RawMessage   `json:"toolName"`
		ToolNames []json.RawMessage `json:"toolNames"`
	}
	if json.Unmarshal([]byte(t), &obj) != nil {
		return nil, false
	}
	if obj.Loaded != nil {
		return stringsOf(obj.Loaded), true
	}
	if !loadTool || (obj.Success == nil && obj.ToolName == nil && obj.ToolNames == nil) {
		return nil, false
	}
	return stringsOf(append([]json.RawMessage{obj.ToolName}, obj.ToolNames...)), true
}

// loadArgs returns the names load_tool's arguments ask for.
func loadArgs(args json.RawMessage) []string {
	args = bytes.TrimSpace(args)
	if len(args) > 0 && args[0] == '"' {
		var s string
		if json.Unmarshal(args, &s) != nil {
			return nil
		}
		args = []byte(s)
	}
	var a struct {
		ToolName  json.RawMessage   `json:"toolName"`
		ToolNames []json.RawMessage `json:"toolNames"`
	}
	if json.Unmarshal(args, &a) != nil {
		// toolNames may be a lone string or hold non-strings: take what is readable.
		var loose struct {
			ToolName  json.RawMessage `json:"toolName"`
			ToolNames json.RawMessage `json:"toolNames"`
		}
		if json.Unmarshal(args, &loose) != nil {
			return nil
		}
		a.ToolName = loose.ToolName
		a.ToolNames = []json.RawMessage{loose.ToolNames}
	}
	return stringsOf(append([]json.RawMessage{a.ToolName}, a.ToolNames...))
}

// searchResults returns the tool names a search_tools result lists.
func searchResults(text string) []string {
	t := []byte(strings.TrimSpace(text))
	var list []json.RawMessage
	if len(t) > 0 && t[0] == '{' {
		var obj struct {
			Results []json.RawMessage `json:"results"`
			Tools   []json.RawMessage `json:"tools"`
		}
		if json.Unmarshal(t, &obj) != nil {
			return nil
		}
		list = obj.Results
		if list == nil {
			list = obj.Tools
		}
	} else if json.Unmarshal(t, &list) != nil {
		return nil
	}
	var names []string
	for _, item := range list {
		var r struct {
			Name string `json:"name"`
		}
		if json.Unmarshal(item, &r) == nil && r.Name != "" {
			names = append(names, r.Name)
		}
	}
	return names
}

// stringsOf returns the JSON strings among vs; other values are skipped.
func stringsOf(vs []json.RawMessage) []string {
	var out []string
	for _, v := range vs {
		var s string
		if len(v) > 0 && json.Unmarshal(v, &s) == nil && s != "" {
			out = append(out, s)
		}
	}
	return out
}
