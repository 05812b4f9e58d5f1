package responses

import (
	"encoding/base64"
	"encoding/json"
	"strings"
	"unicode/utf8"

	"github.com/maskgate/maskgate/gateway/door"
	"github.com/maskgate/maskgate/gateway/pdftext"
)

// hostedItems are the input items of hosted tools' runs: dropped or refused with them.
var hostedItems = map[string]bool{
	"web_search_call": true, "file_search_call": true, "computer_call": true, "computer_call_output": true,
	"code_interpreter_call": true, "image_generation_call": true, "local_shell_call": true,
	"local_shell_call_output": true, "shell_call": true, "shell_call_output": true, "apply_patch_call": true,
	"apply_patch_call_output": true, "mcp_list_tools": true, "mcp_approval_request": true,
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
	for i, it := range d.r.Input {
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
		if _, e := f.rawStr("encrypted_content"); e != nil {
			return e
		}
		if content == nil {
			return nil // only a summary or encrypted content: nothing the engine can read
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
		return unsupported(param, "Input item '%s' is an item_reference, which this gateway cannot resolve; send the item itself, or continue the response with 'previous_response_id'.", param)
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

// messageItem translates a message item: user, system and developer messages become
// chat messages (developer as system); an assistant message joins the assistant message
// being gathered.
func (c *conv) messageItem(f fields) *door.Error {
	role, e := f.need("role")
	if e != nil {
		return e
	}
	content := f.get("content")
	if content == nil {
		return missing(f.param("content"))
	}
	cp := f.param("content")
	switch role {
	case "user":
		v, e := c.userContent(content, cp)
		if e != nil {
			return e
		}
		c.message(newObj(len(v)+32).str("role", "user").raw("content", v).done())
		return nil
	case "system", "developer":
		v := content
		if content[0] != '"' {
			s, e := joinedText(content, cp, "input_text")
			if e != nil {
				return e
			}
			v = quote(s)
		}
		c.message(newObj(len(v)+32).str("role", "system").raw("content", v).done())
		return nil
	case "assistant":
		var s string
		if content[0] == '"' {
			s = unquote(content)
		} else {
			var e *door.Error
			if s, e = joinedText(content, cp, "output_text", "input_text", "refusal"); e != nil {
				return e
			}
		}
		c.assistantText(s, false)
		return nil
	}
	return invalid(f.param("role"), "Invalid value for '%s': %q; expected user, system, developer or assistant.", f.param("role"), role)
}

// joinedText reads a content value that must be text: a string, or parts of the given
// types (their text, or a refusal's), concatenated.
func joinedText(v []byte, param string, types ...string) (string, *door.Error) {
	if v[0] == '"' {
		return unquote(v), nil
	}
	if v[0] != '[' {
		return "", typeErr(param, "a string or an array of content parts", v)
	}
	var b strings.Builder
	for j, p := range elements(v) {
		pp := indexed(param, j)
		pf, e := object(p, pp)
		if e != nil {
			return "", e
		}
		pt, e := pf.need("type")
		if e != nil {
			return "", e
		}
		key := "text"
		if pt == "refusal" {
			key = "refusal"
		}
		ok := false
		for _, t := range types {
			ok = ok || t == pt
		}
		if !ok {
			return "", unsupported(pf.param("type"), "Content part '%s' of type %q is not supported here; expected %s.", pp, pt, strings.Join(types, " or "))
		}
		s, e := requiredString(pf, key)
		if e != nil {
			return "", e
		}
		b.WriteString(s)
	}
	return b.String(), nil
}

// userContent translates a user message's content: a string as it is, parts into chat
// parts (text, image_url).
func (c *conv) userContent(v []byte, param string) ([]byte, *door.Error) {
	if v[0] == '"' {
		return v, nil
	}
	if v[0] != '[' {
		return nil, typeErr(param, "a string or an array of content parts", v)
	}
	var parts [][]byte
	for j, p := range elements(v) {
		part, e := c.chatPart(p, indexed(param, j))
		if e != nil {
			return nil, e
		}
		parts = append(parts, part)
	}
	return array(parts), nil
}

// chatPart translates one input content part.
func (c *conv) chatPart(p []byte, param string) ([]byte, *door.Error) {
	pf, e := object(p, param)
	if e != nil {
		return nil, e
	}
	pt, e := pf.need("type")
	if e != nil {
		return nil, e
	}
	switch pt {
	case "input_text", "output_text":
		if _, e := requiredString(pf, "text"); e != nil {
			return nil, e
		}
		t := pf.get("text")
		return newObj(len(t)+32).str("type", "text").raw("text", t).done(), nil
	case "input_image":
		url, e := pf.rawStr("image_url")
		if e != nil {
			return nil, e
		}
		if url == nil {
			if fid, _ := pf.str("file_id"); fid != "" {
				return nil, unsupported(pf.param("file_id"), "Images by file_id cannot be resolved by this gateway ('%s'); send image_url (a URL or a data: URL).", pf.param("file_id"))
			}
			return nil, missing(pf.param("image_url"))
		}
		detail, e := pf.rawStr("detail")
		if e != nil {
			return nil, e
		}
		img := newObj(len(url)+32).raw("url", url)
		if detail != nil {
			img.raw("detail", detail)
		}
		iu := img.done()
		return newObj(len(iu)+32).str("type", "image_url").raw("image_url", iu).done(), nil
	case "input_file":
		if c.d == nil {
			return nil, unsupported(pf.param("type"), "File inputs ('%s') are not supported by this gateway; send the file's text as input_text.", param)
		}
		text, e := c.d.file(pf, param)
		if e != nil {
			return nil, e
		}
		return newObj(len(text)+32).str("type", "text").raw("text", quote(text)).done(), nil
	}
	return nil, unsupported(pf.param("type"), "Content part '%s' has an unsupported type %q; expected input_text or input_image.", param, pt)
}

// toolContent translates a tool output: a string as it is; parts of text alone joined
// into one string; parts with images as chat parts.
func (c *conv) toolContent(v []byte, param string) ([]byte, *door.Error) {
	if v[0] == '"' {
		return v, nil
	}
	if v[0] != '[' {
		return nil, typeErr(param, "a string or an array of content parts", v)
	}
	var parts [][]byte
	var text strings.Builder
	onlyText := true
	for j, p := range elements(v) {
		part, e := c.chatPart(p, indexed(param, j))
		if e != nil {
			return nil, e
		}
		parts = append(parts, part)
		pf, _ := object(p, "")
		if t, _ := pf.str("type"); t == "input_image" {
			onlyText = false
		} else if t == "input_file" {
			var tp struct{ Text string }
			_ = json.Unmarshal(part, &tp) // the part chatPart wrote: {"type":"text","text":...}
			text.WriteString(tp.Text)
		} else {
			s, _ := pf.str("text")
			text.WriteString(s)
		}
	}
	if onlyText {
		return quote(text.String()), nil
	}
	return array(parts), nil
}

// file reads an input_file part as text: file_data (a data: URL or bare base64) holding a
// PDF becomes its text (package pdftext), one holding text/* its text. A file the gateway
// cannot read, and one by file_id or file_url (it fetches nothing), becomes a note that
// it was left out, listed in Request.Warnings, so that a conversation carrying it in its
// history still goes on.
func (d *decoder) file(pf fields, param string) (string, *door.Error) {
	name, e := pf.str("filename")
	if e != nil {
		return "", e
	}
	data, e := pf.str("file_data")
	if e != nil {
		return "", e
	}
	leftOut := func(text string) (string, *door.Error) {
		d.r.Warnings = append(d.r.Warnings, param+": "+text)
		return text, nil
	}
	if data == "" {
		how := "file_id"
		if u, _ := pf.str("file_url"); u != "" {
			how = "file_url"
		}
		return leftOut(pdftext.LeftOut(name, "the gateway does not fetch files by "+how+"; send file_data or the file's text as input_text"))
	}
	mt := "application/pdf"
	if rest, ok := strings.CutPrefix(data, "data:"); ok {
		head, b64, found := strings.Cut(rest, ",")
		if !found || !strings.HasSuffix(head, ";base64") {
			return leftOut(pdftext.LeftOut(name, "file_data is a data: URL without base64 data"))
		}
		if m := strings.TrimSuffix(head, ";base64"); m != "" {
			mt = m
		}
		data = b64
	}
	switch {
	case mt == "application/pdf":
		text, ok := pdftext.FromBase64(data, name, d.r.opt.PDF)
		if !ok {
			return leftOut(text)
		}
		return text, nil
	case strings.HasPrefix(mt, "text/"):
		b, err := base64.StdEncoding.DecodeString(data)
		if err != nil || !utf8.Valid(b) {
			return leftOut(pdftext.LeftOut(name, "file_data is not base64 of UTF-8 text"))
		}
		return string(b), nil
	}
	return leftOut(pdftext.LeftOut(name, "the gateway reads PDF and text files only, not "+mt))
}
