package openai

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/maskgate/maskgate/backends"
	"github.com/maskgate/maskgate/backends/oai"
)

// responses is a Chat Completions body in the Responses API's terms.
type responses struct {
	body   []byte
	names  *Names
	stream bool
	// loader is the meta-tool sent as the tool search, whose calls come back by its name.
	loader string
}

// responsesRequest translates a Chat Completions body under strategy index into a
// Responses request (API reference, Responses, Create), members in a fixed order so the
// same body always gives the same bytes and the next turn extends them:
//
//	model                                 model (Request.Model first)
//	messages                              input items, in order (inputItems)
//	tools                                 tools: functions (flat, names mapped, strict as
//	                                      sent or false); the loader (load_tool, else
//	                                      search_tools) as the client tool search;
//	                                      deferred tools left out
//	tool_choice, parallel_tool_calls      tool_choice (toolChoice), parallel_tool_calls
//	max_completion_tokens, max_tokens     max_output_tokens (that order)
//	temperature, top_p, user,             as they are
//	prompt_cache_key, safety_identifier,
//	service_tier
//	reasoning_effort                      reasoning.effort
//	stream                                stream
//	(always)                              store: false — the gateway keeps no response
//	                                      at OpenAI; every request carries its history
//
// n > 1, logprobs, stop, audio, functions and a response_format other than text are a
// 400 naming the member; any other member is not sent.
func responsesRequest(body []byte, model string) (*responses, error) {
	var r chatRequest
	if err := json.Unmarshal(body, &r); err != nil {
		return nil, backends.BodyError(err)
	}
	if err := r.refuse(); err != nil {
		return nil, err
	}
	if len(r.Messages) == 0 {
		return nil, backends.BadRequest("messages", "'messages' must contain at least one message")
	}
	var all []string
	for _, t := range r.Tools {
		all = append(all, t.Function.Name)
	}
	for _, m := range r.Messages {
		for _, c := range m.ToolCalls {
			all = append(all, c.Function.Name)
		}
	}
	names, err := newNames(all)
	if err != nil {
		return nil, backends.BadRequest("tools", "%v", err)
	}
	deferredNames := map[string]bool{}
	loader := loaderOf(r.Tools)
	var tools [][]byte
	for i, t := range r.Tools {
		p := fmt.Sprintf("tools[%d]", i)
		if t.Type != "function" {
			return nil, backends.BadRequest(p+".type", "tool type %q is not supported under strategy index; only function", t.Type)
		}
		if t.Function.Name == "" {
			return nil, backends.BadRequest(p+".function.name", "tool has no function name")
		}
		var b []byte
		switch {
		case t.DeferLoading:
			deferredNames[t.Function.Name] = true
			continue
		case t.Function.Name == loader:
			b, err = searchTool(&t.Function, p)
		default:
			b, err = fnTool(&t.Function, names, false, p)
		}
		if err != nil {
			return nil, err
		}
		tools = append(tools, b)
	}
	input, err := inputItems(r.Messages, names, deferredNames, loader)
	if err != nil {
		return nil, err
	}
	choice, err := toolChoice(r.ToolChoice, names, loader)
	if err != nil {
		return nil, err
	}
	maxOut, err := positiveInt("max_completion_tokens", r.MaxCompletionTokens)
	if err == nil && maxOut == nil {
		maxOut, err = positiveInt("max_tokens", r.MaxTokens)
	}
	if err != nil {
		return nil, err
	}

	out := make([]byte, 0, len(body)+256)
	out = append(out, `{"model":`...)
	if model != "" {
		out = appendString(out, model)
	} else if m := bytes.TrimSpace(r.Model); len(m) > 0 && m[0] == '"' {
		out = append(out, m...)
	} else {
		return nil, backends.BadRequest("model", "you must provide a model parameter")
	}
	out = append(out, `,"input":[`...)
	out = append(out, bytes.Join(input, []byte{','})...)
	out = append(out, ']')
	if len(tools) > 0 {
		out = append(out, `,"tools":[`...)
		out = append(out, bytes.Join(tools, []byte{','})...)
		out = append(out, ']')
	}
	for _, m := range []struct {
		key string
		val []byte
	}{
		{"tool_choice", choice}, {"parallel_tool_calls", r.ParallelToolCalls}, {"max_output_tokens", maxOut},
		{"temperature", r.Temperature}, {"top_p", r.TopP}, {"user", r.User}, {"prompt_cache_key", r.PromptCacheKey},
		{"safety_identifier", r.SafetyIdentifier}, {"service_tier", r.ServiceTier},
	} {
		if !isNull(m.val) {
			out = append(out, `,"`+m.key+`":`...)
			out = append(out, bytes.TrimSpace(m.val)...)
		}
	}
	if e := bytes.TrimSpace(r.ReasoningEffort); !isNull(e) {
		out = append(out, `,"reasoning":{"effort":`...)
		out = append(out, e...)
		out = append(out, '}')
	}
	if r.Stream {
		out = append(out, `,"stream":true`...)
	}
	out = append(out, `,"store":false}`...)
	if !json.Valid(out) {
		return nil, backends.BadRequest("", "the request does not translate to valid JSON; check the members named above")
	}
	return &responses{body: out, names: names, stream: r.Stream, loader: loader}, nil
}

// inputItems translates messages in order: system, developer and user messages become
// messages of that role (string content as sent; text parts as input_text, image_url
// parts as input_image), an assistant message its text as an output_text message then
// one item per call — a function_call (call_id, mapped name, arguments as sent), or for
// a load (isLoad) a tool_search_call (execution client, its arguments as an object) —
// and a tool message a function_call_output, or, answering a load of the assistant
// message before it, a tool_search_output (searchOutput).
func inputItems(msgs []chatMessage, names *Names, deferredNames map[string]bool, loader string) ([][]byte, error) {
	var out [][]byte
	var calls map[string]string // the last assistant message's calls: id → name
	for i := range msgs {
		m := &msgs[i]
		param := fmt.Sprintf("messages[%d]", i)
		switch m.Role {
		case "system", "developer", "user":
			b, err := message(m.Role, m.Content, param+".content")
			if err != nil {
				return nil, err
			}
			if b != nil {
				out = append(out, b)
			}
		case "assistant":
			b, err := message("assistant", m.Content, param+".content")
			if err != nil {
				return nil, err
			}
			if b != nil {
				out = append(out, b)
			}
			calls = make(map[string]string, len(m.ToolCalls))
			for j := range m.ToolCalls {
				c, err := callItem(&m.ToolCalls[j], fmt.Sprintf("%s.tool_calls[%d]", param, j), names, loader)
				if err != nil {
					return nil, err
				}
				calls[m.ToolCalls[j].ID] = m.ToolCalls[j].Function.Name
				out = append(out, c)
			}
		case "tool":
			if m.ToolCallID == "" {
				return nil, backends.BadRequest(param+".tool_call_id", "a tool message needs the tool_call_id of the call it answers")
			}
			if isLoad(calls[m.ToolCallID], loader) {
				items, err := searchOutput(m, names, deferredNames, param)
				if err != nil {
					return nil, err
				}
				out = append(out, items...)
				continue
			}
			text, err := textOf(m.Content, param+".content")
			if err != nil {
				return nil, err
			}
			b := []byte(`{"type":"function_call_output","call_id":`)
			b = appendString(b, m.ToolCallID)
			b = append(b, `,"output":`...)
			out = append(out, append(appendString(b, text), '}'))
		default:
			return nil, backends.BadRequest(param+".role", "role %q is not supported; use system, developer, user, assistant or tool", m.Role)
		}
	}
	return out, nil
}

// message is one message item, or nil when it holds nothing to send.
func message(role string, content json.RawMessage, param string) ([]byte, error) {
	c := bytes.TrimSpace(content)
	b := []byte(`{"type":"message","role":`)
	b = appendString(b, role)
	b = append(b, `,"content":`...)
	switch {
	case isNull(c):
		return nil, nil
	case c[0] == '"':
		if string(c) == `""` {
			return nil, nil
		}
		if role == "assistant" {
			b = append(b, `[{"type":"output_text","text":`...)
			b = append(b, c...)
			return append(b, "}]}"...), nil
		}
		b = append(b, c...)
		return append(b, '}'), nil
	case c[0] != '[':
		return nil, backends.BadRequest(param, "content must be a string or an array of content parts")
	}
	var parts []struct {
		Type     string          `json:"type"`
		Text     json.RawMessage `json:"text"`
		ImageURL *struct {
			URL    json.RawMessage `json:"url"`
			Detail json.RawMessage `json:"detail"`
		} `json:"image_url"`
	}
	if err := json.Unmarshal(c, &parts); err != nil {
		return nil, backends.BadRequest(param, "content must be a string or an array of content parts: %v", err)
	}
	textType := `{"type":"input_text","text":`
	if role == "assistant" {
		textType = `{"type":"output_text","text":`
	}
	b = append(b, '[')
	n := 0
	for j, p := range parts {
		if n > 0 {
			b = append(b, ',')
		}
		switch {
		case p.Type == "text" && len(bytes.TrimSpace(p.Text)) > 0 && bytes.TrimSpace(p.Text)[0] == '"':
			b = append(b, textType...)
			b = append(b, bytes.TrimSpace(p.Text)...)
			b = append(b, '}')
		case p.Type == "image_url" && role == "user" && p.ImageURL != nil && !isNull(p.ImageURL.URL):
			b = append(b, `{"type":"input_image","image_url":`...)
			b = append(b, bytes.TrimSpace(p.ImageURL.URL)...)
			if !isNull(p.ImageURL.Detail) {
				b = append(b, `,"detail":`...)
				b = append(b, bytes.TrimSpace(p.ImageURL.Detail)...)
			}
			b = append(b, '}')
		default:
			return nil, backends.BadRequest(fmt.Sprintf("%s[%d].type", param, j), "content part type %q is not supported here under strategy index", p.Type)
		}
		n++
	}
	if n == 0 {
		return nil, nil
	}
	return append(b, "]}"...), nil
}

// textOf is a tool message's content as one string: the string, or its text parts joined.
func textOf(content json.RawMessage, param string) (string, error) {
	var s string
	if isNull(content) || json.Unmarshal(content, &s) == nil {
		return s, nil
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if err := json.Unmarshal(content, &parts); err != nil {
		return "", backends.BadRequest(param, "content must be a string or an array of text parts")
	}
	var buf bytes.Buffer
	for j, p := range parts {
		if p.Type != "text" {
			return "", backends.BadRequest(fmt.Sprintf("%s[%d].type", param, j), "a tool result's part must be text")
		}
		buf.WriteString(p.Text)
	}
	return buf.String(), nil
}

// callItem is an assistant's earlier call as an input item.
func callItem(tc *chatToolCall, param string, names *Names, loader string) ([]byte, error) {
	if tc.ID == "" {
		return nil, backends.BadRequest(param+".id", "a tool call needs an id to pair it with its result")
	}
	if tc.Function.Name == "" {
		return nil, backends.BadRequest(param+".function.name", "tool call has no function name")
	}
	args := bytes.TrimSpace(tc.Function.Arguments)
	if isNull(args) || args[0] != '"' {
		return nil, backends.BadRequest(param+".function.arguments", "arguments must be a JSON object as a string")
	}
	if isLoad(tc.Function.Name, loader) {
		var s string
		json.Unmarshal(args, &s)
		obj := bytes.TrimSpace([]byte(s))
		if len(obj) == 0 {
			obj = []byte("{}")
		}
		if obj[0] != '{' || !json.Valid(obj) {
			return nil, backends.BadRequest(param+".function.arguments", "%s's arguments must be a JSON object", tc.Function.Name)
		}
		b := []byte(`{"type":"tool_search_call","call_id":`)
		b = appendString(b, tc.ID)
		b = append(b, `,"execution":"client","status":"completed","arguments":`...)
		b = append(b, obj...)
		return append(b, '}'), nil
	}
	b := []byte(`{"type":"function_call","call_id":`)
	b = appendString(b, tc.ID)
	b = append(b, `,"name":`...)
	b = appendString(b, names.Wire(tc.Function.Name))
	b = append(b, `,"arguments":`...)
	b = append(b, args...)
	return append(b, '}'), nil
}

// searchOutput answers a load with a tool_search_output (execution client)
// whose tools are the definitions the load result's "tools" lists that the request
// defers, as function tools with defer_loading: true; then, as a user message, the
// result's text without those definitions (what the load said, a failure's reason). A
// result that is not a load result gives an empty tool_search_output and its text.
func searchOutput(m *chatMessage, names *Names, deferredNames map[string]bool, param string) ([][]byte, error) {
	text, err := textOf(m.Content, param+".content")
	if err != nil {
		return nil, err
	}
	result := []byte(text)
	var defs [][]byte
	if tools, found, isObject := oai.Member(result, "tools"); found && isObject {
		var kept [][]byte
		seen := map[string]bool{}
		walk := oai.Elements(tools, func(elem []byte) error {
			var def chatTool
			if err := json.Unmarshal(elem, &def); err != nil {
				return err
			}
			n := def.Function.Name
			switch {
			case !deferredNames[n]:
				kept = append(kept, elem)
			case !seen[n]:
				seen[n] = true
				d, err := fnTool(&def.Function, names, true, param)
				if err != nil {
					return err
				}
				defs = append(defs, d)
			}
			return nil
		})
		if walk != nil {
			defs = nil
		} else if len(kept) == 0 {
			result, err = oai.Delete(result, "tools")
		} else {
			result, err = oai.Set(result, "tools", append(append([]byte{'['}, bytes.Join(kept, []byte{','})...), ']'))
		}
		if err != nil {
			return nil, backends.BadRequest(param+".content", "%v", err)
		}
	}
	b := []byte(`{"type":"tool_search_output","call_id":`)
	b = appendString(b, m.ToolCallID)
	b = append(b, `,"execution":"client","status":"completed","tools":[`...)
	b = append(b, bytes.Join(defs, []byte{','})...)
	out := [][]byte{append(b, "]}"...)}
	if len(bytes.TrimSpace(result)) > 0 {
		t := []byte(`{"type":"message","role":"user","content":[{"type":"input_text","text":`)
		t = appendString(t, string(result))
		out = append(out, append(t, "}]}"...))
	}
	return out, nil
}
