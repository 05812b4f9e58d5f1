package messages

import (
	"bytes"
	"strconv"
	"strings"

	"github.com/maskgate/maskgate/backends/oai"
	"github.com/maskgate/maskgate/gateway/door"
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
