package messages

import (
	"strconv"

	"github.com/maskgate/maskgate/backends/oai"
	"github.com/maskgate/maskgate/gateway/door"
)

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
