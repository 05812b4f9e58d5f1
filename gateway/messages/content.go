package messages

import (
	"bytes"
	"strconv"
	"strings"

	"github.com/maskgate/maskgate/backends/oai"
	"github.com/maskgate/maskgate/gateway/door"
	"github.com/maskgate/maskgate/gateway/pdftext"
)

// part is one chat content part. text is set for a text part: its raw JSON string, so
// that a lone text part can be sent as a plain string content.
type part struct {
	text []byte
	json []byte
}

func textPart(s []byte) part {
	b := make([]byte, 0, len(s)+24)
	b = append(b, `{"type":"text","text":`...)
	b = append(b, s...)
	return part{text: s, json: append(b, '}')}
}

// contentOf is a chat message's content: a lone text part as its string, anything else
// as an array of parts.
func contentOf(parts []part) []byte {
	if len(parts) == 1 && parts[0].text != nil {
		return parts[0].text
	}
	elems := make([][]byte, len(parts))
	for i, p := range parts {
		elems[i] = p.json
	}
	return appendArray(nil, elems)
}

// chatMessage is {"role","content"}.
func chatMessage(role string, content []byte) []byte {
	b := make([]byte, 0, len(content)+32)
	b = append(b, `{"role":"`...)
	b = append(b, role...)
	b = append(b, `","content":`...)
	b = append(b, content...)
	return append(b, '}')
}

func (t *translator) emit(msgs ...[]byte) {
	for _, m := range msgs {
		t.r.Messages = append(t.r.Messages, m)
	}
}

// serverBlocks are the conversation blocks Anthropic's server tools leave; any other
// type ending in _tool_result but tool_result itself is taken for one too.
var serverBlocks = map[string]bool{
	"server_tool_use":  true,
	"mcp_tool_use":     true,
	"container_upload": true,
}

func isServerBlock(typ string) bool {
	return serverBlocks[typ] || (typ != "tool_result" && strings.HasSuffix(typ, "_tool_result"))
}

// hosted drops (counting it) or refuses a server-tool block.
func (t *translator) hosted(p, typ string) *door.Error {
	if t.refuse() {
		return bad(p+".type", "%s blocks come from Anthropic's server tools, which this gateway does not run", typ)
	}
	t.r.DroppedBlocks++
	return nil
}

// block reads a content block's object and type, counting its cache_control.
func (t *translator) block(p string, raw []byte) (*oai.Object, string, *door.Error) {
	o, ok := object(raw)
	if !ok {
		return nil, "", bad(p, "each content block must be an object with a type, got %s", kind(raw))
	}
	typ, _ := o.Get("type")
	if !isString(typ) {
		return nil, "", bad(p+".type", "Field required: the content block's type")
	}
	if cc, ok := o.Get("cache_control"); ok && !isNull(cc) {
		t.r.CacheBreakpoints++
	}
	return o, unquote(typ), nil
}

// text is a text block's text, a raw JSON string.
func text(p string, o *oai.Object) ([]byte, *door.Error) {
	s, ok := o.Get("text")
	if !ok || !isString(s) {
		return nil, bad(p+".text", "Field required: a string")
	}
	return s, nil
}

// message translates messages[i].
func (t *translator) message(i int, raw []byte) *door.Error {
	mp := "messages." + strconv.Itoa(i)
	p := mp
	o, ok := object(raw)
	if !ok {
		return bad(p, "each message must be an object with role and content, got %s", kind(raw))
	}
	role, _ := o.Get("role")
	if !isString(role) {
		return bad(p+".role", "Field required: user or assistant")
	}
	content, ok := o.Get("content")
	if !ok || isNull(content) {
		return bad(p+".content", "Field required: a string or an array of content blocks")
	}
	if !isString(content) && !isArray(content) {
		return bad(p+".content", "must be a string or an array of content blocks, got %s", kind(content))
	}
	p += ".content"
	r := unquote(role)
	t.lastRole = r
	switch r {
	case "user":
		return t.user(p, content)
	case "assistant":
		return t.assistant(p, content)
	case "system":
		// Not in Anthropic's API, but some agents send it: a system message in place.
		s, e := t.systemText(p, content)
		if e != nil {
			return e
		}
		if len(s) > 2 {
			t.emit(chatMessage("system", s))
		}
		return nil
	default:
		return bad(mp+".role", "must be user or assistant, got %q", r)
	}
}

// system translates the top-level system prompt into the first chat message.
func (t *translator) system(raw []byte) *door.Error {
	s, e := t.systemText("system", raw)
	if e != nil {
		return e
	}
	if len(s) > 2 {
		t.emit(chatMessage("system", s))
	}
	return nil
}

// systemText is a system prompt (a string or an array of text blocks) as one raw JSON
// string, the blocks' texts joined with a blank line.
func (t *translator) systemText(p string, raw []byte) ([]byte, *door.Error) {
	if isString(raw) {
		return normalizeBilling(raw), nil
	}
	blocks, ok := elements(raw)
	if !ok {
		return nil, bad(p, "must be a string or an array of text blocks, got %s", kind(raw))
	}
	texts := make([][]byte, 0, len(blocks))
	for j, b := range blocks {
		bp := p + "." + strconv.Itoa(j)
		o, typ, e := t.block(bp, b)
		if e != nil {
			return nil, e
		}
		if typ != "text" {
			return nil, bad(bp+".type", "system prompt blocks must be text blocks, got %q", typ)
		}
		s, e := text(bp, o)
		if e != nil {
			return nil, e
		}
		texts = append(texts, normalizeBilling(s))
	}
	return joinStrings(texts, `\n\n`), nil
}

// billingPrefix opens the system block Claude Code sends first. Its cch= field changes
// on every request, which would make every prompt differ from its first bytes and
// defeat the engine's prefix cache (and the gateway's thread fingerprint); llama.cpp's
// server zeroes it for the same reason (ggml-org/llama.cpp#21793).
const billingPrefix = "x-anthropic-billing-header:"

// normalizeBilling returns s (a raw JSON string) with the value of a billing header's
// cch= field replaced by zeros of the same length; any other string is returned as is.
func normalizeBilling(s []byte) []byte {
	in := inner(s)
	if !bytes.HasPrefix(in, []byte(billingPrefix)) {
		return s
	}
	i := bytes.Index(in, []byte("cch="))
	if i < 0 {
		return s
	}
	j := i + len("cch=")
	k := j
	for k < len(in) && isAlnum(in[k]) {
		k++
	}
	if k == j || k >= len(in) || in[k] != ';' {
		return s
	}
	out := bytes.Clone(s)
	for x := j; x < k; x++ {
		out[1+x] = '0'
	}
	return out
}

func isAlnum(c byte) bool {
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
}

// user translates a user message. Its tool_result blocks become chat tool messages, one
// per result in order, placed before a user message with the rest of its content (text,
// images, documents, search results); a mid_conv_system block becomes a system message
// in place.
func (t *translator) user(p string, content []byte) *door.Error {
	if isString(content) {
		t.emit(chatMessage("user", content))
		return nil
	}
	blocks, _ := elements(content)
	var results, rest [][]byte
	var parts []part
	flush := func() {
		if len(parts) > 0 {
			rest = append(rest, chatMessage("user", contentOf(parts)))
			parts = nil
		}
	}
	for j, b := range blocks {
		bp := p + "." + strconv.Itoa(j)
		o, typ, e := t.block(bp, b)
		if e != nil {
			return e
		}
		switch typ {
		case "tool_result":
			m, e := t.toolResult(bp, o)
			if e != nil {
				return e
			}
			results = append(results, m)
		case "mid_conv_system":
			c, _ := o.Get("content")
			s, e := t.systemText(bp+".content", c)
			if e != nil {
				return e
			}
			flush()
			if len(s) > 2 {
				rest = append(rest, chatMessage("system", s))
			}
		case "tool_use", "thinking", "redacted_thinking":
			return bad(bp+".type", "%s blocks belong in assistant messages", typ)
		default:
			ps, e := t.userPart(bp, typ, o, false)
			if e != nil {
				return e
			}
			parts = append(parts, ps...)
		}
	}
	flush()
	t.emit(results...)
	t.emit(rest...)
	return nil
}

// userPart translates a block that may stand in a user message or, with inResult, in a
// tool_result's content: text, image, document, search_result, tool_reference (in
// results only). Server-tool blocks are dropped or refused; others are refused.
func (t *translator) userPart(p, typ string, o *oai.Object, inResult bool) ([]part, *door.Error) {
	switch typ {
	case "text":
		s, e := text(p, o)
		if e != nil {
			return nil, e
		}
		return []part{textPart(s)}, nil
	case "image":
		ip, e := imagePart(p, o)
		if e != nil {
			return nil, e
		}
		return []part{ip}, nil
	case "document":
		return t.document(p, o)
	case "search_result":
		s, e := t.searchResult(p, o)
		if e != nil {
			return nil, e
		}
		return []part{textPart(s)}, nil
	case "tool_reference":
		if !inResult {
			return nil, bad(p+".type", "tool_reference blocks belong in a tool_result's content")
		}
		name, _ := o.Get("tool_name")
		if !isString(name) || len(name) == 2 {
			return nil, bad(p+".tool_name", "Field required: a non-empty string")
		}
		t.r.Referenced = append(t.r.Referenced, unquote(name))
		return []part{textPart(joinStrings([][]byte{[]byte(`"Tool loaded: "`), name}, ""))}, nil
	}
	if isServerBlock(typ) {
		return nil, t.hosted(p, typ)
	}
	where := "a user message"
	if inResult {
		where = "a tool_result's content"
	}
	return nil, bad(p+".type", "content block type %q is not supported in %s", typ, where)
}

// imagePart turns an image block into an image_url part: a base64 source becomes a
// data: URL (data:<media_type>;base64,<data>, the client's bytes), a url source its url.
func imagePart(p string, o *oai.Object) (part, *door.Error) {
	src, _ := o.Get("source")
	so, ok := object(src)
	if !ok {
		return part{}, bad(p+".source", "Field required: an object")
	}
	typ, _ := so.Get("type")
	if !isString(typ) {
		return part{}, bad(p+".source.type", "Field required: base64 or url")
	}
	var url []byte
	switch st := unquote(typ); st {
	case "base64":
		mt, _ := so.Get("media_type")
		data, _ := so.Get("data")
		if !isString(mt) || len(mt) == 2 {
			return part{}, bad(p+".source.media_type", "Field required: image/jpeg, image/png, image/gif or image/webp")
		}
		if !isString(data) || len(data) == 2 {
			return part{}, bad(p+".source.data", "Field required: the base64 image data")
		}
		url = joinStrings([][]byte{[]byte(`"data:"`), mt, []byte(`";base64,"`), data}, "")
	case "url":
		u, _ := so.Get("url")
		if !isString(u) || len(u) == 2 {
			return part{}, bad(p+".source.url", "Field required: the image's URL")
		}
		url = u
	case "file":
		return part{}, bad(p+".source.type", "file sources (the Files API) are not supported; send the image as base64 or url")
	default:
		return part{}, bad(p+".source.type", "image source type %q is not supported; send base64 or url", st)
	}
	b := make([]byte, 0, len(url)+48)
	b = append(b, `{"type":"image_url","image_url":{"url":`...)
	b = append(b, url...)
	return part{json: append(b, "}}"...)}, nil
}

// document translates a document block with a text source (its data as a text part), a
// content source (its text and image blocks), or a base64 PDF (its text, package
// pdftext); a PDF that cannot be read, and url and file sources (the gateway fetches
// nothing), become a note that the document was left out, listed in Request.Warnings.
// title, context and citations are not sent.
func (t *translator) document(p string, o *oai.Object) ([]part, *door.Error) {
	src, _ := o.Get("source")
	so, ok := object(src)
	if !ok {
		return nil, bad(p+".source", "Field required: an object")
	}
	typ, _ := so.Get("type")
	if !isString(typ) {
		return nil, bad(p+".source.type", "Field required: text or content")
	}
	switch st := unquote(typ); st {
	case "text":
		data, _ := so.Get("data")
		if !isString(data) {
			return nil, bad(p+".source.data", "Field required: a string")
		}
		return []part{textPart(data)}, nil
	case "content":
		c, _ := so.Get("content")
		if isString(c) {
			return []part{textPart(c)}, nil
		}
		blocks, ok := elements(c)
		if !ok {
			return nil, bad(p+".source.content", "must be a string or an array of text and image blocks, got %s", kind(c))
		}
		var out []part
		for j, b := range blocks {
			bp := p + ".source.content." + strconv.Itoa(j)
			bo, bt, e := t.block(bp, b)
			if e != nil {
				return nil, e
			}
			var ps part
			switch bt {
			case "text":
				s, e := text(bp, bo)
				if e != nil {
					return nil, e
				}
				ps = textPart(s)
			case "image":
				if ps, e = imagePart(bp, bo); e != nil {
					return nil, e
				}
			default:
				return nil, bad(bp+".type", "a document's content holds text and image blocks only, got %q", bt)
			}
			out = append(out, ps)
		}
		return out, nil
	case "base64":
		mt, _ := so.Get("media_type")
		data, _ := so.Get("data")
		if !isString(data) {
			return nil, bad(p+".source.data", "Field required: the base64 PDF data")
		}
		if isString(mt) && unquote(mt) != "application/pdf" {
			return nil, bad(p+".source.media_type", "a base64 document must be application/pdf, got %q; send text as a text source", unquote(mt))
		}
		s, ok := pdftext.FromBase64(unquote(data), documentName(o), t.opt.PDF)
		if !ok {
			t.r.Warnings = append(t.r.Warnings, p+": "+s)
		}
		return []part{textPart(appendString(nil, s))}, nil
	case "url", "file":
		// The gateway fetches nothing: the document is left out, with a note, rather than
		// every later turn of the conversation refused.
		s := pdftext.LeftOut(documentName(o), "the gateway does not fetch "+st+" sources; send the PDF as base64 or its text as a text source")
		t.r.Warnings = append(t.r.Warnings, p+": "+s)
		return []part{textPart(appendString(nil, s))}, nil
	default:
		return nil, bad(p+".source.type", "document source type %q is not supported; send text or content", st)
	}
}

// documentName is a document block's title, "" when it has none.
func documentName(o *oai.Object) string {
	if title, _ := o.Get("title"); isString(title) {
		return unquote(title)
	}
	return ""
}

// searchResult is a search_result block as one text: title, source, then the text of
// its content blocks, separated by blank lines. citations are not sent.
func (t *translator) searchResult(p string, o *oai.Object) ([]byte, *door.Error) {
	title, _ := o.Get("title")
	source, _ := o.Get("source")
	if !isString(title) {
		return nil, bad(p+".title", "Field required: a string")
	}
	if !isString(source) {
		return nil, bad(p+".source", "Field required: a string")
	}
	c, _ := o.Get("content")
	blocks, ok := elements(c)
	if !ok {
		return nil, bad(p+".content", "Field required: an array of text blocks")
	}
	texts := [][]byte{title, source}
	for j, b := range blocks {
		bp := p + ".content." + strconv.Itoa(j)
		bo, typ, e := t.block(bp, b)
		if e != nil {
			return nil, e
		}
		if typ != "text" {
			return nil, bad(bp+".type", "a search result's content holds text blocks only, got %q", typ)
		}
		s, e := text(bp, bo)
		if e != nil {
			return nil, e
		}
		texts = append(texts, s)
	}
	return joinStrings(texts, `\n\n`), nil
}

// errorPrefix opens the content of a tool result with is_error: true; chat tool messages
// have no error flag.
const errorPrefix = "Error: "

// toolResult turns a tool_result block into a chat tool message
// {"role":"tool","tool_call_id","content"}: a lone text as a string, several parts (or an
// image) as an array, nothing as "".
func (t *translator) toolResult(p string, o *oai.Object) ([]byte, *door.Error) {
	id, _ := o.Get("tool_use_id")
	if !isString(id) || len(id) == 2 {
		return nil, bad(p+".tool_use_id", "Field required: the id of the tool_use this answers")
	}
	isErr := false
	if v, ok := o.Get("is_error"); ok && !isNull(v) {
		if isErr, ok = boolean(v); !ok {
			return nil, bad(p+".is_error", "must be a boolean, got %s", kind(v))
		}
	}
	var parts []part
	c, ok := o.Get("content")
	switch {
	case !ok || isNull(c):
	case isString(c):
		parts = []part{textPart(c)}
	case isArray(c):
		blocks, _ := elements(c)
		for j, b := range blocks {
			bp := p + ".content." + strconv.Itoa(j)
			bo, typ, e := t.block(bp, b)
			if e != nil {
				return nil, e
			}
			ps, e := t.userPart(bp, typ, bo, true)
			if e != nil {
				return nil, e
			}
			parts = append(parts, ps...)
		}
	default:
		return nil, bad(p+".content", "must be a string or an array of content blocks, got %s", kind(c))
	}
	if isErr {
		switch {
		case len(parts) == 0:
			parts = []part{textPart([]byte(`"Error"`))}
		case parts[0].text != nil:
			parts[0] = textPart(joinStrings([][]byte{[]byte(`"` + errorPrefix + `"`), parts[0].text}, ""))
		default:
			parts = append([]part{textPart([]byte(`"Error:"`))}, parts...)
		}
	}
	content := []byte(`""`)
	if len(parts) > 0 {
		content = contentOf(parts)
	}
	b := make([]byte, 0, len(id)+len(content)+48)
	b = append(b, `{"role":"tool","tool_call_id":`...)
	b = append(b, id...)
	b = append(b, `,"content":`...)
	b = append(b, content...)
	return append(b, '}'), nil
}

// assistant translates an assistant message: text blocks become its content, tool_use
// blocks its tool_calls (arguments: the input's bytes as sent), thinking blocks its
// reasoning_content (joined with a blank line; the signature is not sent).
// redacted_thinking blocks, opaque to any engine, are dropped; server-tool blocks are
// dropped or refused.
func (t *translator) assistant(p string, content []byte) *door.Error {
	if isString(content) {
		t.emit(chatMessage("assistant", content))
		return nil
	}
	blocks, _ := elements(content)
	var texts []part
	var calls, thinking [][]byte
	for j, b := range blocks {
		bp := p + "." + strconv.Itoa(j)
		o, typ, e := t.block(bp, b)
		if e != nil {
			return e
		}
		switch typ {
		case "text":
			s, e := text(bp, o)
			if e != nil {
				return e
			}
			texts = append(texts, textPart(s))
		case "tool_use":
			c, e := toolCall(bp, o)
			if e != nil {
				return e
			}
			calls = append(calls, c)
		case "thinking":
			s, ok := o.Get("thinking")
			if !ok || !isString(s) {
				return bad(bp+".thinking", "Field required: a string")
			}
			if len(s) > 2 {
				thinking = append(thinking, s)
			}
		case "redacted_thinking":
			// Encrypted by Anthropic for Anthropic: nothing an engine can read.
		default:
			if isServerBlock(typ) {
				if e := t.hosted(bp, typ); e != nil {
					return e
				}
				continue
			}
			return bad(bp+".type", "content block type %q is not supported in an assistant message", typ)
		}
	}
	if len(texts) == 0 && len(calls) == 0 && len(thinking) == 0 {
		return nil
	}
	c := []byte("null")
	switch {
	case len(texts) > 0:
		c = contentOf(texts)
	case len(calls) == 0:
		c = []byte(`""`)
	}
	b := make([]byte, 0, len(c)+64)
	b = append(b, `{"role":"assistant","content":`...)
	b = append(b, c...)
	if len(calls) > 0 {
		b = append(b, `,"tool_calls":`...)
		b = appendArray(b, calls)
	}
	if len(thinking) > 0 {
		b = append(b, `,"reasoning_content":`...)
		b = append(b, joinStrings(thinking, `\n\n`)...)
	}
	t.emit(append(b, '}'))
	return nil
}

// toolCall turns a tool_use block into a chat tool call; arguments is the JSON string
// whose value is exactly the input's bytes.
func toolCall(p string, o *oai.Object) ([]byte, *door.Error) {
	id, _ := o.Get("id")
	if !isString(id) || len(id) == 2 {
		return nil, bad(p+".id", "Field required: a non-empty string")
	}
	name, _ := o.Get("name")
	if !isString(name) || len(name) == 2 {
		return nil, bad(p+".name", "Field required: a non-empty string")
	}
	input, ok := o.Get("input")
	if !ok || !isObject(input) {
		return nil, bad(p+".input", "Field required: an object")
	}
	b := make([]byte, 0, len(id)+len(name)+len(input)*2+64)
	b = append(b, `{"id":`...)
	b = append(b, id...)
	b = append(b, `,"type":"function","function":{"name":`...)
	b = append(b, name...)
	b = append(b, `,"arguments":`...)
	b = appendString(b, string(input))
	return append(b, "}}"...), nil
}
