package responses

import (
	"encoding/base64"
	"encoding/json"
	"strings"
	"unicode/utf8"

	"github.com/maskgate/maskgate/gateway/door"
	"github.com/maskgate/maskgate/gateway/pdftext"
)

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
				if c.historic && c.d != nil {
					return c.d.imageLeftOut(pf.param("file_id")), nil
				}
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
		text, ok := d.pdf.FromBase64(data, name)
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
