package openai

import (
	"bytes"
	"encoding/json"
	"strconv"

	"github.com/maskgate/maskgate/backends"
	"github.com/maskgate/maskgate/backends/oai"
)

// Strategy index on OpenAI (backends.LoadDeferred) goes through the Responses API's
// tool search with client execution ("Tool search" guide: only gpt-5.4 and later
// models). Chat Completions has no deferred tools, so a request whose tools carry
// "defer_loading": true is translated to POST /responses (responsesRequest) and its
// answer, whole or streamed, back into a chat completion (answer.go, events.go):
//
//   - the gateway's load_tool (search_tools under search.auto_load, where it loads what
//     it finds) becomes the request's {"type":"tool_search","execution":"client"} tool,
//     with its description (which ends with the catalog's index) and parameters; the
//     model's tool_search_call comes back as a call of it;
//   - a deferred tool is not sent in tools: its definition reaches the model only in the
//     tool_search_output that answers the load that added it, a function tool with
//     defer_loading: true, which the API injects at the end of the context;
//   - so every request of a session sends the same tools bytes, and a load appends.
//
// Everything else of the Chat body maps onto its Responses counterpart as described at
// responsesRequest; what has none is a 400 naming the member.

var _ backends.ToolLoader = (*Backend)(nil)

// LoadsTools: OpenAI loads deferred tools through the Responses API's client-executed
// tool search, unless the API is declared without allowed_tools (an OpenAI-compatible
// server, which has no Responses tool search either).
func (b *Backend) LoadsTools() backends.LoadKind {
	if b.opt.NoAllowedTools {
		return backends.LoadNone
	}
	return backends.LoadDeferred
}

// StrategyIndex is Response.Strategy for a request served through tool search.
const StrategyIndex = "index"

// The gateway's meta-tools whose results load tools (toolsearch/meta): load_tool, or,
// under search.auto_load where there is no load_tool, search_tools, whose result carries
// the definitions it loaded. The loader is the one the request's tools define; it
// becomes the tool search.
const (
	loadTool    = "load_tool"
	searchTools = "search_tools"
)

// loaderOf is the request's loader: load_tool when its tools define it, else
// search_tools, else "".
func loaderOf(tools []chatTool) string {
	loader := ""
	for _, t := range tools {
		switch t.Function.Name {
		case loadTool:
			return loadTool
		case searchTools:
			loader = searchTools
		}
	}
	return loader
}

// isLoad reports whether a call of name loads tools: the loader's, or a load_tool call
// (progressive loading's hidden exchange) in history.
func isLoad(name, loader string) bool { return name == loadTool || (name == loader && loader != "") }

// chatRequest is what responsesRequest reads of a Chat Completions body. Strings that
// travel on stay raw, so the client's bytes go as written.
type chatRequest struct {
	Model               json.RawMessage `json:"model"`
	Messages            []chatMessage   `json:"messages"`
	Tools               []chatTool      `json:"tools"`
	ToolChoice          json.RawMessage `json:"tool_choice"`
	ParallelToolCalls   json.RawMessage `json:"parallel_tool_calls"`
	Stream              bool            `json:"stream"`
	MaxTokens           json.RawMessage `json:"max_tokens"`
	MaxCompletionTokens json.RawMessage `json:"max_completion_tokens"`
	Temperature         json.RawMessage `json:"temperature"`
	TopP                json.RawMessage `json:"top_p"`
	User                json.RawMessage `json:"user"`
	PromptCacheKey      json.RawMessage `json:"prompt_cache_key"`
	SafetyIdentifier    json.RawMessage `json:"safety_identifier"`
	ServiceTier         json.RawMessage `json:"service_tier"`
	ReasoningEffort     json.RawMessage `json:"reasoning_effort"`

	N              *int            `json:"n"`
	Logprobs       *bool           `json:"logprobs"`
	Stop           json.RawMessage `json:"stop"`
	ResponseFormat json.RawMessage `json:"response_format"`
	Audio          json.RawMessage `json:"audio"`
	Functions      json.RawMessage `json:"functions"`
}

type chatMessage struct {
	Role       string          `json:"role"`
	Content    json.RawMessage `json:"content"`
	ToolCalls  []chatToolCall  `json:"tool_calls"`
	ToolCallID string          `json:"tool_call_id"`
}

type chatToolCall struct {
	ID       string `json:"id"`
	Type     string `json:"type"`
	Function struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	} `json:"function"`
}

type chatTool struct {
	Type         string       `json:"type"`
	DeferLoading bool         `json:"defer_loading"`
	Function     chatFunction `json:"function"`
}

type chatFunction struct {
	Name        string          `json:"name"`
	Description json.RawMessage `json:"description"`
	Parameters  json.RawMessage `json:"parameters"`
	Strict      json.RawMessage `json:"strict"`
}

// deferred reports whether body's tools array holds a tool with "defer_loading": true
// beside a loader (load_tool or search_tools): a request under strategy index for this
// backend.
func deferred(body []byte) bool {
	tools, ok := oai.Get(body, "tools")
	if !ok || !bytes.Contains(tools, []byte(`"defer_loading"`)) {
		return false
	}
	var ts []chatTool
	if json.Unmarshal(tools, &ts) != nil {
		return false
	}
	d := false
	for _, t := range ts {
		d = d || t.DeferLoading
	}
	return d && loaderOf(ts) != ""
}

// isNull reports whether raw is absent or null.
func isNull(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) == 0 || string(raw) == "null"
}

// appendString appends s as a JSON string; encoding/json's escaping is deterministic.
func appendString(out []byte, s string) []byte {
	b, _ := json.Marshal(s) // a string always marshals
	return append(out, b...)
}

// refuse names the Chat members whose meaning a Responses request cannot carry.
func (r *chatRequest) refuse() error {
	switch {
	case r.N != nil && *r.N != 1:
		return backends.BadRequest("n", "under strategy index the openai backend returns one choice; set n to 1 or leave it out")
	case r.Logprobs != nil && *r.Logprobs:
		return backends.BadRequest("logprobs", "under strategy index the openai backend uses the Responses API, which returns no log probabilities here; leave logprobs out")
	case !isNull(r.Stop):
		return backends.BadRequest("stop", "the Responses API, which strategy index uses on OpenAI, has no stop sequences; leave stop out")
	case !isNull(r.Audio):
		return backends.BadRequest("audio", "under strategy index the openai backend answers in text only; leave audio out")
	case !isNull(r.Functions):
		return backends.BadRequest("functions", "functions is deprecated; send tools")
	}
	if !isNull(r.ResponseFormat) {
		var rf struct {
			Type string `json:"type"`
		}
		if json.Unmarshal(r.ResponseFormat, &rf) != nil || rf.Type != "text" {
			return backends.BadRequest("response_format", "under strategy index the openai backend sends response_format only as text; leave it out")
		}
	}
	return nil
}

// positiveInt checks that raw, when set, is a positive integer, and returns its bytes.
func positiveInt(param string, raw json.RawMessage) ([]byte, error) {
	if isNull(raw) {
		return nil, nil
	}
	n, err := strconv.Atoi(string(bytes.TrimSpace(raw)))
	if err != nil || n < 1 {
		return nil, backends.BadRequest(param, "%s must be a positive integer", param)
	}
	return []byte(strconv.Itoa(n)), nil
}

// fnTool is a Chat function tool as a Responses function tool: name (wire), description
// and parameters as sent (parameters absent → an empty object schema), strict as sent
// or false (the Responses API would otherwise hold the schema to strict mode, which an
// arbitrary client schema fails), and defer_loading when deferred.
func fnTool(f *chatFunction, names *Names, deferred bool, param string) ([]byte, error) {
	b := []byte(`{"type":"function","name":`)
	b = appendString(b, names.Wire(f.Name))
	if d := bytes.TrimSpace(f.Description); !isNull(d) {
		if d[0] != '"' {
			return nil, backends.BadRequest(param+".function.description", "description must be a string")
		}
		b = append(b, `,"description":`...)
		b = append(b, d...)
	}
	b = append(b, `,"parameters":`...)
	switch p := bytes.TrimSpace(f.Parameters); {
	case isNull(p):
		b = append(b, `{"type":"object","properties":{}}`...)
	case p[0] != '{':
		return nil, backends.BadRequest(param+".function.parameters", "parameters must be a JSON schema object")
	default:
		b = append(b, p...)
	}
	b = append(b, `,"strict":`...)
	if s := bytes.TrimSpace(f.Strict); string(s) == "true" {
		b = append(b, "true"...)
	} else {
		b = append(b, "false"...)
	}
	if deferred {
		b = append(b, `,"defer_loading":true`...)
	}
	return append(b, '}'), nil
}

// searchTool is the loader as the request's client-executed tool search.
func searchTool(f *chatFunction, param string) ([]byte, error) {
	b := []byte(`{"type":"tool_search","execution":"client"`)
	if d := bytes.TrimSpace(f.Description); !isNull(d) {
		if d[0] != '"' {
			return nil, backends.BadRequest(param+".function.description", "description must be a string")
		}
		b = append(b, `,"description":`...)
		b = append(b, d...)
	}
	if p := bytes.TrimSpace(f.Parameters); !isNull(p) {
		if p[0] != '{' {
			return nil, backends.BadRequest(param+".function.parameters", "parameters must be a JSON schema object")
		}
		b = append(b, `,"parameters":`...)
		b = append(b, p...)
	}
	return append(b, '}'), nil
}

// toolChoice maps Chat's tool_choice: "auto", "none" and "required" as they are, a named
// function to {"type":"function","name"} (the loader, the tool search, to "required": the
// Responses API names no way to force it), allowed_tools to its mode (under index every
// tool is sent and the API itself keeps an unloaded tool uncallable).
func toolChoice(raw json.RawMessage, names *Names, loader string) ([]byte, error) {
	raw = bytes.TrimSpace(raw)
	if isNull(raw) {
		return nil, nil
	}
	if raw[0] == '"' {
		var s string
		json.Unmarshal(raw, &s)
		if s != "auto" && s != "none" && s != "required" {
			return nil, backends.BadRequest("tool_choice", "tool_choice %q is not one of auto, none, required", s)
		}
		return raw, nil
	}
	var c struct {
		Type     string `json:"type"`
		Function struct {
			Name string `json:"name"`
		} `json:"function"`
		AllowedTools struct {
			Mode string `json:"mode"`
		} `json:"allowed_tools"`
	}
	if err := json.Unmarshal(raw, &c); err != nil {
		return nil, backends.BadRequest("tool_choice", "tool_choice must be a string or an object: %v", err)
	}
	switch {
	case c.Type == "function" && isLoad(c.Function.Name, loader):
		return []byte(`"required"`), nil
	case c.Type == "function" && c.Function.Name != "":
		return appendString([]byte(`{"type":"function","name":`), names.Wire(c.Function.Name)), nil
	case c.Type == "allowed_tools" && (c.AllowedTools.Mode == "auto" || c.AllowedTools.Mode == "required"):
		return appendString(nil, c.AllowedTools.Mode), nil
	}
	return nil, backends.BadRequest("tool_choice", "tool_choice of type %q is not supported under strategy index", c.Type)
}
