package toolsearch

import (
	"crypto/sha256"
	"encoding"
	"encoding/hex"
	"io"

	"github.com/maskgate/maskgate/backends/oai"
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

// appendString appends s as a JSON string (oai.AppendString).
func appendString(b []byte, s string) []byte { return oai.AppendString(b, s) }

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
