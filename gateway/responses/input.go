package responses

import (
	"encoding/json"
	"strings"

	"github.com/maskgate/maskgate/gateway/door"
)

// hostedItems are the input items of hosted tools' runs: dropped or refused with them.
var hostedItems = map[string]bool{
	"web_search_call": true, "file_search_call": true, "computer_call": true, "computer_call_output": true,
	"code_interpreter_call": true, "image_generation_call": true, "mcp_list_tools": true, "mcp_approval_request": true,
	"mcp_approval_response": true, "mcp_call": true, "program": true, "program_output": true,
}

// input translates the input (a string, an array of items, or nothing) into chat
// messages, recording the raw items.
func (d *decoder) input(raw []byte) *door.Error {
	d.c = conv{d: d}
	if raw == nil {
		return nil
	}
	switch raw[0] {
	case '"':
		item := newObj(len(raw)+48).str("type", "message").str("role", "user").raw("content", raw).done()
		d.r.Input = []json.RawMessage{item}
		d.c.msgs = append(d.c.msgs, newObj(len(raw)+32).str("role", "user").raw("content", raw).done())
		return nil
	case '[':
	default:
		return typeErr("input", "a string or an array of input items", raw)
	}
	d.r.Input = elements(raw)
	if d.r.Input == nil {
		d.r.Input = []json.RawMessage{}
	}
	answered := lastAnswered(d.r.Input)
	for i, it := range d.r.Input {
		d.c.historic = i < answered
		if isReference(it) {
			ref, e := d.reference(it, indexed("input", i))
			if e != nil {
				return e
			}
			d.r.Input[i], it = ref, ref
		}
		if e := d.c.item(indexed("input", i), it); e != nil {
			return e
		}
	}
	d.c.flush()
	return nil
}

// load adds tools an input item loaded.
func (d *decoder) load(tools []byte, param string) *door.Error {
	for j, t := range elements(tools) {
		ts, e := d.tool(t, indexed(param, j), "")
		if e != nil {
			return e
		}
		d.r.fromInput = append(d.r.fromInput, ts...)
		d.r.Loaded = append(d.r.Loaded, t)
	}
	return nil
}

// conv turns Responses items into chat messages. Consecutive assistant-side items (an
// assistant message, reasoning, function, custom and tool search calls) become one
// assistant message, as a chat model answers: content, reasoning_content, tool_calls.
type conv struct {
	d    *decoder // nil when translating the gateway's own output: no tools load, nothing is hosted
	msgs []json.RawMessage

	text, reasoning       strings.Builder
	hasText, hasReasoning bool
	calls                 [][]byte

	// historic says the item being read is history: an assistant-side item follows it.
	historic bool
}

// flush ends the assistant message being gathered.
func (c *conv) flush() {
	if !c.hasText && !c.hasReasoning && len(c.calls) == 0 {
		return
	}
	m := newObj(c.text.Len()+c.reasoning.Len()+64).str("role", "assistant")
	switch {
	case c.hasText || len(c.calls) == 0:
		m.str("content", c.text.String())
	default:
		m.raw("content", []byte("null"))
	}
	if c.hasReasoning {
		m.str("reasoning_content", c.reasoning.String())
	}
	if len(c.calls) > 0 {
		m.raw("tool_calls", array(c.calls))
	}
	c.msgs = append(c.msgs, m.done())
	c.text.Reset()
	c.reasoning.Reset()
	c.hasText, c.hasReasoning, c.calls = false, false, nil
}

// assistantText adds text (or reasoning) to the assistant message being gathered; after
// calls, it starts the next one.
func (c *conv) assistantText(s string, reasoning bool) {
	if len(c.calls) > 0 {
		c.flush()
	}
	if reasoning {
		c.reasoning.WriteString(s)
		c.hasReasoning = true
		return
	}
	c.text.WriteString(s)
	c.hasText = true
}

func (c *conv) call(id []byte, name string, args string) {
	fn := newObj(len(name)+len(args)+32).str("name", name).str("arguments", args).done()
	c.calls = append(c.calls, newObj(len(fn)+len(id)+32).raw("id", id).str("type", "function").raw("function", fn).done())
}

func (c *conv) message(m []byte) {
	c.flush()
	c.msgs = append(c.msgs, m)
}

func (c *conv) toolMessage(callID, content []byte) {
	c.message(newObj(len(content)+len(callID)+48).str("role", "tool").raw("tool_call_id", callID).raw("content", content).done())
}

// item translates one input item.
func (c *conv) item(param string, raw []byte) *door.Error {
	f, e := object(raw, param)
	if e != nil {
		return e
	}
	typ, e := f.str("type")
	if e != nil {
		return e
	}
	if typ == "" {
		if f.get("role") == nil {
			return bad(param, "invalid_value", "Input item '%s' has neither a type nor a role.", param)
		}
		typ = "message"
	}
	switch typ {
	case "message":
		return c.messageItem(f)
	case "function_call", "custom_tool_call":
		id, e := callID(f)
		if e != nil {
			return e
		}
		name, e := f.need("name")
		if e != nil {
			return e
		}
		ns, e := f.str("namespace")
		if e != nil {
			return e
		}
		if ns != "" {
			name = ns + "." + name
		}
		var args string
		if typ == "function_call" {
			if args, e = requiredString(f, "arguments"); e != nil {
				return e
			}
		} else {
			input, e := requiredString(f, "input")
			if e != nil {
				return e
			}
			args = customArguments(input)
		}
		c.call(id, name, args)
		return nil
	case "function_call_output", "custom_tool_call_output":
		id, e := callID(f)
		if e != nil {
			return e
		}
		out := f.get("output")
		if out == nil {
			return missing(f.param("output"))
		}
		content, e := c.toolContent(out, f.param("output"))
		if e != nil {
			return e
		}
		c.toolMessage(id, content)
		return nil
	case "reasoning":
		content, e := f.rawArray("content")
		if e != nil {
			return e
		}
		if _, e := f.rawArray("summary"); e != nil {
			return e
		}
		enc, e := f.rawStr("encrypted_content")
		if e != nil {
			return e
		}
		if content == nil {
			// The gateway's own sealed text (include: reasoning.encrypted_content) is read
			// back; a summary or another's ciphertext is nothing the engine can read.
			var sealed string
			if enc != nil && json.Unmarshal(enc, &sealed) == nil {
				if text, ok := DecodeReasoning(sealed); ok && text != "" {
					c.assistantText(text, true)
				}
			}
			return nil
		}
		var text strings.Builder
		has := false
		for j, p := range elements(content) {
			pf, e := object(p, indexed(f.param("content"), j))
			if e != nil {
				return e
			}
			pt, e := pf.need("type")
			if e != nil {
				return e
			}
			if pt != "reasoning_text" {
				return invalid(pf.param("type"), "A reasoning item's content holds reasoning_text parts, not %q.", pt)
			}
			s, e := requiredString(pf, "text")
			if e != nil {
				return e
			}
			text.WriteString(s)
			has = true
		}
		if has {
			c.assistantText(text.String(), true)
		}
		return nil
	case "tool_search_call", "tool_search_output":
		exec, e := f.str("execution")
		if e != nil {
			return e
		}
		if exec == "server" {
			return c.hosted(typ, f.param("type"))
		}
		id, e := callID(f)
		if e != nil {
			return e
		}
		if typ == "tool_search_call" {
			args := f.get("arguments")
			if args == nil {
				return missing(f.param("arguments"))
			}
			s := string(args)
			if args[0] == '"' {
				s = unquote(args)
			}
			c.call(id, ToolSearchName, s)
			return nil
		}
		tools, e := f.rawArray("tools")
		if e != nil {
			return e
		}
		if tools == nil {
			return missing(f.param("tools"))
		}
		var names []string
		if c.d != nil {
			before := len(c.d.r.fromInput)
			if e := c.d.load(tools, f.param("tools")); e != nil {
				return e
			}
			for _, t := range c.d.r.fromInput[before:] {
				names = append(names, t.name)
			}
		}
		c.toolMessage(id, quote(loadedText(names)))
		return nil
	case "additional_tools":
		tools, e := f.rawArray("tools")
		if e != nil {
			return e
		}
		if tools == nil {
			return missing(f.param("tools"))
		}
		if c.d != nil {
			return c.d.load(tools, f.param("tools"))
		}
		return nil
	case "item_reference":
		// Resolved in the input (decoder.reference); one in the gateway's own output never is.
		return invalid(f.param("type"), "Input item '%s' is an item_reference, which cannot appear here.", param)
	case "compaction":
		// What /v1/responses/compact made: the summary it carries becomes a user message
		// in the item's place, before the rest of the input.
		enc, e := requiredString(f, "encrypted_content")
		if e != nil {
			return e
		}
		summary, ok := DecodeCompaction(enc)
		if !ok {
			return invalid(f.param("encrypted_content"), "Input item '%s' is a compaction item this gateway did not make (its encrypted_content is not the gateway's format, or is damaged); compact the conversation through this gateway's /v1/responses/compact, or send the conversation's items instead.", param)
		}
		c.message(newObj(len(summary)+64).str("role", "user").raw("content", quote(compactionPrefix+summary)).done())
		return nil
	case "compaction_trigger":
		return unsupported(f.param("type"), "Input item '%s' is a %s item, which this gateway cannot read; send the conversation's items instead.", param, typ)
	}
	if ok, e := c.builtinInput(typ, f); ok {
		return e
	}
	if hostedItems[typ] {
		return c.hosted(typ, f.param("type"))
	}
	return invalid(f.param("type"), "Input item '%s' has an unknown type %q.", param, typ)
}

func (c *conv) hosted(typ, param string) *door.Error {
	if c.d == nil {
		return nil
	}
	_, e := c.d.hosted(typ, param)
	return e
}

// loadedText is the tool message a client tool search's output becomes; the tools
// themselves join the chat tools.
func loadedText(names []string) string {
	if len(names) == 0 {
		return "No tools were loaded."
	}
	return "Loaded tools: " + strings.Join(names, ", ") + "."
}

// customArguments are the chat arguments of a custom tool call: {"input": input}.
func customArguments(input string) string {
	return string(newObj(len(input)+16).str("input", input).done())
}

func callID(f fields) ([]byte, *door.Error) {
	if _, e := f.need("call_id"); e != nil {
		return nil, e
	}
	return f.get("call_id"), nil
}

// requiredString reads a string member that must be present (it may be empty).
func requiredString(f fields, key string) (string, *door.Error) {
	if f.get(key) == nil {
		return "", missing(f.param(key))
	}
	return f.str(key)
}
