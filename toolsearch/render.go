package toolsearch

import (
	"crypto/sha256"
	"encoding"
	"encoding/hex"
	"io"
	"unicode/utf8"
)

// renderTool writes t as an OpenAI tool object:
//
//	{"type":"function","function":{"name":N,"description":D,"parameters":P,"strict":S}}
//
// with members in that order, "description" left out when empty, "parameters" and
// "strict" when not given. Strings are escaped the same way every time (below); P is
// copied byte for byte.
func renderTool(t *Tool) []byte {
	b := make([]byte, 0, 64+len(t.Name)+len(t.Description)+len(t.Parameters))
	b = append(b, `{"type":"function","function":{"name":`...)
	b = appendString(b, t.Name)
	if t.Description != "" {
		b = append(b, `,"description":`...)
		b = appendString(b, t.Description)
	}
	if t.Parameters != nil {
		b = append(b, `,"parameters":`...)
		b = append(b, t.Parameters...)
	}
	if t.Strict != nil {
		if *t.Strict {
			b = append(b, `,"strict":true`...)
		} else {
			b = append(b, `,"strict":false`...)
		}
	}
	return append(b, "}}"...)
}

// appendString appends s as a JSON string. Quote, backslash and control characters are
// escaped (\n, \r, \t by name, the rest as \u00XX), as are U+2028 and U+2029; invalid
// UTF-8 becomes U+FFFD; everything else, '<' and '&' included, is written as it is.
func appendString(b []byte, s string) []byte {
	const hexDigits = "0123456789abcdef"
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if (r == utf8.RuneError && size == 1) || r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			switch r {
			case '\u2028':
				b = append(b, `\u2028`...)
			case '\u2029':
				b = append(b, `\u2029`...)
			default:
				b = append(b, `\ufffd`...)
			}
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// Render returns the catalog as an OpenAI "tools" array: the tools in order (see Catalog),
// comma-separated, no other whitespace. The bytes depend only on the tools, never on map
// order, goroutines or the machine. The result is the caller's to keep or change.
func (c *Catalog) Render() []byte { return append([]byte(nil), c.bytes()...) }

// WriteTo writes Render's bytes to w.
func (c *Catalog) WriteTo(w io.Writer) (int64, error) {
	n, err := w.Write(c.bytes())
	return int64(n), err
}

// bytes is the rendered catalog, built once.
func (c *Catalog) bytes() []byte {
	c.renderOnce.Do(func() { c.render = c.AppendNames(nil, nil) })
	return c.render
}

// AppendNames appends a tools array of the named tools, in the order given, to dst; names
// the catalog lacks are skipped. With names nil it appends the whole catalog in order.
// Each tool's bytes are the same as in Render, so a subset (the loaded tools of the
// "remove" strategy) renders every tool exactly as the whole catalog does.
func (c *Catalog) AppendNames(dst []byte, names []string) []byte {
	dst = append(dst, '[')
	first := true
	add := func(t *Tool) {
		if !first {
			dst = append(dst, ',')
		}
		first = false
		dst = append(dst, t.rendered...)
	}
	if names == nil {
		for _, t := range c.tools {
			add(t)
		}
	} else {
		for _, n := range names {
			if t, ok := c.Lookup(n); ok {
				add(t)
			}
		}
	}
	return append(dst, ']')
}

// Version identifies the catalog by its rendered bytes: the hex SHA-256 of Render. Equal
// versions mean byte-identical tools arrays, so caches of anything derived from a catalog
// (indexes, embeddings, prompt prefixes) can be keyed on it.
func (c *Catalog) Version() string {
	c.versionOnce.Do(func() { c.version = c.computeVersion() })
	return c.version
}

func (c *Catalog) computeVersion() string {
	h := sha256.New()
	if c.base == nil || len(c.overridden) > 0 || c.base.prefix == nil ||
		h.(encoding.BinaryUnmarshaler).UnmarshalBinary(c.base.prefix) != nil {
		h.Reset()
		h.Write(c.bytes())
		return hex.EncodeToString(h.Sum(nil))
	}
	// A request catalog without overrides renders as its base's bytes up to the "]", then
	// its own tools: resume the base's hash there instead of hashing megabytes again.
	first := len(c.base.tools) == 0
	for _, t := range c.tools[len(c.base.tools):] {
		if !first {
			h.Write([]byte{','})
		}
		first = false
		h.Write(t.rendered)
	}
	h.Write([]byte{']'})
	return hex.EncodeToString(h.Sum(nil))
}

// prefixState is the SHA-256 state after "[" and tools, comma-separated.
func prefixState(tools []*Tool) []byte {
	h := sha256.New()
	h.Write([]byte{'['})
	for i, t := range tools {
		if i > 0 {
			h.Write([]byte{','})
		}
		h.Write(t.rendered)
	}
	st, err := h.(encoding.BinaryMarshaler).MarshalBinary()
	if err != nil {
		return nil
	}
	return st
}
