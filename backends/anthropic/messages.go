package anthropic

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/maskgate/maskgate/backends"
	"github.com/maskgate/maskgate/backends/toolname"
)

// convertMessages translates messages in order. System and developer messages become
// system blocks wherever they stand (the Messages API has no system role inside
// messages); tool messages become tool_result blocks of a user turn; consecutive turns
// of one role are merged into one, and a message with no content left is skipped. When
// deferred holds the request's deferred tools, a tool message answering a load_tool (or
// search_tools) call of the assistant message before it with a load result becomes
// tool_reference blocks (deferred.go).
func convertMessages(msgs []inMessage, names *toolname.Map, deferred map[string]bool) (system []block, turns []*turn, err error) {
	var calls map[string]string // the last assistant message's calls: id → name
	add := func(role string, results, blocks []block) {
		if len(results)+len(blocks) == 0 {
			return
		}
		if n := len(turns); n > 0 && turns[n-1].role == role {
			t := turns[n-1]
			t.results = append(t.results, results...)
			t.blocks = append(t.blocks, blocks...)
			return
		}
		turns = append(turns, &turn{role: role, results: results, blocks: blocks})
	}
	for i := range msgs {
		m := &msgs[i]
		param := fmt.Sprintf("messages[%d]", i)
		switch m.Role {
		case "system", "developer":
			b, err := contentBlocks(m.Content, param+".content", false)
			if err != nil {
				return nil, nil, err
			}
			system = append(system, b...)
		case "user":
			b, err := contentBlocks(m.Content, param+".content", true)
			if err != nil {
				return nil, nil, err
			}
			add("user", nil, b)
		case "assistant":
			b, err := contentBlocks(m.Content, param+".content", false)
			if err != nil {
				return nil, nil, err
			}
			calls = make(map[string]string, len(m.ToolCalls))
			for _, c := range m.ToolCalls {
				calls[c.ID] = c.Function.Name
			}
			for j := range m.ToolCalls {
				u, err := toolUse(&m.ToolCalls[j], fmt.Sprintf("%s.tool_calls[%d]", param, j), names)
				if err != nil {
					return nil, nil, err
				}
				b = append(b, u)
			}
			add("assistant", nil, b)
		case "tool":
			r, ok := block{}, false
			if deferred != nil && loads(calls[m.ToolCallID]) {
				r, ok = loadResult(m, names, deferred)
			}
			if !ok {
				if r, err = toolResult(m, param); err != nil {
					return nil, nil, err
				}
			}
			add("user", []block{r}, nil)
		case "":
			return nil, nil, backends.BadRequest(param+".role", "message %d has no role", i)
		default:
			return nil, nil, backends.BadRequest(param+".role",
				"role %q is not supported; use system, developer, user, assistant or tool", m.Role)
		}
	}
	return system, turns, nil
}

// contentBlocks converts a message's content (a string, an array of parts, or null)
// into text blocks, and image blocks where images may appear. Blank text is left out.
func contentBlocks(content json.RawMessage, param string, images bool) ([]block, error) {
	c := bytes.TrimSpace(content)
	switch {
	case isNull(c):
		return nil, nil
	case c[0] == '"':
		if blank(c) {
			return nil, nil
		}
		return []block{textBlock(c)}, nil
	case c[0] != '[':
		return nil, backends.BadRequest(param, "content must be a string or an array of content parts")
	}
	var parts []inPart
	if err := json.Unmarshal(c, &parts); err != nil {
		return nil, backends.BadRequest(param, "content must be a string or an array of content parts: %v", err)
	}
	var out []block
	for j, p := range parts {
		pp := fmt.Sprintf("%s[%d]", param, j)
		switch {
		case p.Type == "text":
			t := bytes.TrimSpace(p.Text)
			if len(t) == 0 || t[0] != '"' {
				return nil, backends.BadRequest(pp+".text", "a text part needs a text string")
			}
			if !blank(t) {
				out = append(out, textBlock(t))
			}
		case p.Type == "image_url" && images:
			b, err := imageBlock(p, pp+".image_url.url")
			if err != nil {
				return nil, err
			}
			out = append(out, b)
		default:
			return nil, backends.BadRequest(pp+".type", "content part type %q is not supported here by the anthropic backend", p.Type)
		}
	}
	return out, nil
}

// textBlock wraps a JSON string, as the client wrote it, in a text block.
func textBlock(s json.RawMessage) block {
	b := make([]byte, 0, len(s)+24)
	b = append(b, `{"type":"text","text":`...)
	b = append(b, s...)
	return block{json: append(b, '}')}
}

// imageMediaTypes are the image types the Messages API accepts ("Vision").
var imageMediaTypes = map[string]bool{"image/jpeg": true, "image/png": true, "image/gif": true, "image/webp": true}

// imageBlock turns an image_url part into an image block: a base64 data URL becomes a
// base64 source, an http(s) URL a url source, which Anthropic fetches itself.
func imageBlock(p inPart, param string) (block, error) {
	if p.ImageURL == nil || p.ImageURL.URL == "" {
		return block{}, backends.BadRequest(param, "an image_url part needs a url")
	}
	u := p.ImageURL.URL
	var b []byte
	switch {
	case strings.HasPrefix(u, "data:"):
		meta, data, ok := strings.Cut(u[len("data:"):], ",")
		mediaType, enc, _ := strings.Cut(meta, ";")
		if !ok || enc != "base64" || data == "" {
			return block{}, backends.BadRequest(param, "a data URL image must be data:<type>;base64,<data>")
		}
		if !imageMediaTypes[mediaType] {
			return block{}, backends.BadRequest(param, "image type %q is not supported by Anthropic; send image/jpeg, image/png, image/gif or image/webp", mediaType)
		}
		b = append(b, `{"type":"image","source":{"type":"base64","media_type":`...)
		b = appendString(b, mediaType)
		b = append(b, `,"data":`...)
		b = appendString(b, data)
	case strings.HasPrefix(u, "https://"), strings.HasPrefix(u, "http://"):
		b = append(b, `{"type":"image","source":{"type":"url","url":`...)
		b = appendString(b, u)
	default:
		return block{}, backends.BadRequest(param, "an image url must be an http(s) URL or a base64 data URL")
	}
	return block{json: append(b, "}}"...)}, nil
}

// toolUse turns an assistant's earlier call into a tool_use block. Its input is the
// arguments exactly as the client sent them, which must be a JSON object (an empty
// string means no arguments).
func toolUse(tc *inToolCall, param string, names *toolname.Map) (block, error) {
	if tc.Type != "" && tc.Type != "function" {
		return block{}, backends.BadRequest(param+".type", "tool call type %q is not supported; only function", tc.Type)
	}
	if tc.ID == "" {
		return block{}, backends.BadRequest(param+".id", "a tool call needs an id to pair it with its result")
	}
	if tc.Function.Name == "" {
		return block{}, backends.BadRequest(param+".function.name", "tool call has no function name")
	}
	args := []byte(tc.Function.Arguments)
	switch t := bytes.TrimSpace(args); {
	case len(t) == 0:
		args = []byte("{}")
	case t[0] != '{' || !json.Valid(t):
		return block{}, backends.BadRequest(param+".function.arguments", "arguments must be a JSON object (as a string)")
	}
	b := make([]byte, 0, len(args)+64)
	b = append(b, `{"type":"tool_use","id":`...)
	b = appendString(b, idRule.Wire(tc.ID))
	b = append(b, `,"name":`...)
	b = appendString(b, names.Wire(tc.Function.Name))
	b = append(b, `,"input":`...)
	b = append(b, args...)
	return block{json: append(b, '}')}, nil
}

// toolResult turns a tool message into a tool_result block; its content keeps the
// client's string, or becomes text blocks for an array of text parts.
func toolResult(m *inMessage, param string) (block, error) {
	if m.ToolCallID == "" {
		return block{}, backends.BadRequest(param+".tool_call_id", "a tool message needs the tool_call_id of the call it answers")
	}
	b := []byte(`{"type":"tool_result","tool_use_id":`)
	b = appendString(b, idRule.Wire(m.ToolCallID))
	c := bytes.TrimSpace(m.Content)
	switch {
	case isNull(c) || (c[0] == '"' && blank(c)):
	case c[0] == '"':
		b = append(b, `,"content":`...)
		b = append(b, c...)
	default:
		parts, err := contentBlocks(c, param+".content", false)
		if err != nil {
			return block{}, err
		}
		if len(parts) > 0 {
			b = append(b, `,"content":`...)
			b = appendBlocks(b, parts)
		}
	}
	return block{json: append(b, '}')}, nil
}
