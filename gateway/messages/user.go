package messages

import (
	"strconv"

	"github.com/maskgate/maskgate/backends/oai"
	"github.com/maskgate/maskgate/gateway/door"
)

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
		ip, e := t.image(p, o)
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
