package masking

import (
	"bytes"
	"encoding/json"
	"slices"
	"sync/atomic"
)

// tagPieces are a catalog's tools rendered once as entries of a structural
// tag's "tags" array, in one format: a request's tag is then its head, a
// copy of each allowed tool's entry and its tail, which keeps a 10,000-tool
// tag (8 MB) to about one memory copy. They cost the tag's size once more
// per catalog, and as much again for the string form (built on first use).
type tagPieces struct {
	format Format
	ep     tagParts
	raw    pieceBuf
	str    atomic.Pointer[pieceBuf] // raw escaped as the inside of a JSON string
}

// pieceBuf holds entries back to back, each followed by a comma: tool id's
// entry is buf[off[id]:off[id+1]-1], so a run of consecutive ids is one
// copy, commas included. A tool whose parameters are not JSON has an empty
// entry; rendering it is an error before anything is copied.
type pieceBuf struct {
	buf []byte
	off []int
}

// entries appends the entries of tools from..to (inclusive), comma-separated.
func (p *pieceBuf) entries(out []byte, from, to int32) []byte {
	return append(out, p.buf[p.off[from]:p.off[to+1]-1]...)
}

// tagPieces returns the catalog's entries in format f, rendering them on
// first use. A catalog keeps one format's (a backend has one); another
// format replaces them. Two goroutines may render them at once; the bytes
// are equal.
func (c *Catalog) tagPieces(f Format, parts callParts) *tagPieces {
	if p := c.tags.Load(); p != nil && p.format == f {
		return p
	}
	p := &tagPieces{format: f, ep: escapeParts(parts)}
	per := len(p.ep.open) + len(p.ep.mid) + len(p.ep.end) + len(tagFixed)
	size := 0
	for id := range c.names {
		size += per + len(c.jname[id]) + len(c.schema[id]) + len(c.content[id])
	}
	buf := make([]byte, 0, size)
	off := make([]int, len(c.names)+1)
	for id := range c.names {
		off[id] = len(buf)
		if c.schemaErr[id] == nil {
			buf = p.ep.appendTag(buf, c.jname[id], c.schema[id], c.content[id])
		}
		buf = append(buf, ',')
	}
	off[len(c.names)] = len(buf)
	p.raw = pieceBuf{buf: buf, off: off}
	c.tags.Store(p)
	return p
}

// strPieces is raw with each entry escaped as the inside of a JSON string,
// built on first use. Escaping entry by entry gives the bytes of escaping
// the whole tag at once, since every entry starts and ends with an ASCII
// byte and encoding/json escapes character by character.
func (p *tagPieces) strPieces() *pieceBuf {
	if s := p.str.Load(); s != nil {
		return s
	}
	s := &pieceBuf{buf: make([]byte, 0, len(p.raw.buf)+len(p.raw.buf)/4), off: make([]int, len(p.raw.off))}
	var esc jsonEscaper
	last := len(p.raw.off) - 1
	for id := range last {
		s.off[id] = len(s.buf)
		s.buf = esc.appendChars(s.buf, p.raw.buf[p.raw.off[id]:p.raw.off[id+1]-1])
		s.buf = append(s.buf, ',')
	}
	s.off[last] = len(s.buf)
	p.str.CompareAndSwap(nil, s)
	return p.str.Load()
}

// jsonEscaper escapes bytes as encoding/json writes a string with
// SetEscapeHTML(false), the form vLLM's structured_outputs.structural_tag
// is sent in; it is encoding/json itself, so the bytes cannot drift.
type jsonEscaper struct {
	buf bytes.Buffer
	enc *json.Encoder
}

// appendChars appends raw escaped, without the quotes.
func (e *jsonEscaper) appendChars(dst, raw []byte) []byte {
	if e.enc == nil {
		e.enc = json.NewEncoder(&e.buf)
		e.enc.SetEscapeHTML(false)
	}
	e.buf.Reset()
	e.enc.Encode(string(raw)) // a string always encodes
	q := e.buf.Bytes()
	return append(dst, q[1:len(q)-2]...) // drop the quotes and Encode's newline
}

// appendTagPieces is renderTag from the catalog's pieces: the same bytes,
// or, with str, those bytes as a JSON string (quoted and escaped).
func (c *Catalog) appendTagPieces(dst []byte, spec Spec, parts callParts, ids []int32, extra []string, str bool) ([]byte, error) {
	n := int32(len(c.names))
	for _, id := range ids {
		if id < n && c.schemaErr[id] != nil {
			return nil, c.schemaErr[id]
		}
	}
	p := c.tagPieces(spec.Format, parts)
	pb := &p.raw
	var esc jsonEscaper
	// The head, the tail and tools outside the catalog are small: rendered
	// here, and escaped here for the string form.
	lit := func(out, raw []byte) []byte {
		if str {
			return esc.appendChars(out, raw)
		}
		return append(out, raw...)
	}
	if str {
		pb = p.strPieces()
	}
	head := appendTagHead(nil, spec, parts)
	tail := appendTagTail(nil, spec, parts)
	size := 2*(len(head)+len(tail)) + 2
	for _, id := range ids {
		if id < n {
			size += pb.off[id+1] - pb.off[id]
		} else {
			size += 2 * (len(p.ep.open) + len(p.ep.mid) + len(p.ep.end) + len(tagFixed) + 2*len(extra[id-n]) + len(anyObject))
		}
	}
	out := slices.Grow(dst, size)
	if str {
		out = append(out, '"')
	}
	out = lit(out, head)
	for i := 0; i < len(ids); {
		if i > 0 {
			out = append(out, ',')
		}
		id := ids[i]
		if id >= n {
			out = lit(out, p.ep.appendTag(nil, appendJSONChars(nil, extra[id-n]), anyObject, ""))
			i++
			continue
		}
		j := i // the run of consecutive catalog ids from i is one copy
		for j+1 < len(ids) && ids[j+1] == ids[j]+1 && ids[j+1] < n {
			j++
		}
		out = pb.entries(out, id, ids[j])
		i = j + 1
	}
	out = lit(out, tail)
	if str {
		out = append(out, '"')
	}
	return out, nil
}
