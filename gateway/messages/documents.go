package messages

import (
	"strconv"

	"github.com/maskgate/maskgate/backends/oai"
	"github.com/maskgate/maskgate/gateway/door"
	"github.com/maskgate/maskgate/gateway/pdftext"
)

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
		s, ok := t.pdf.FromBase64(unquote(data), documentName(o))
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
