package masking

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
)

// Catalog is the per-catalog work of GBNF and StructuralTag, done once: each
// tool's parameters compacted (or {"type":"object"}), its name escaped for
// JSON and checked, its arguments rendered as GBNF rules and its structural
// tag entry (per format) on first use. Rendering a loaded subset then only
// copies bytes, which keeps a cache miss at 10,000 tools in the low
// milliseconds (see the package doc). Build one per catalog version and
// share it; it is immutable and safe for concurrent use.
type Catalog struct {
	index map[string]int32
	names []string
	// jname is the name escaped as the inside of a JSON string.
	jname [][]byte
	// schema is the compacted parameters, or anyObject.
	schema []string
	// content is a tool's structural tag content when its arguments hold
	// a string to an x-grammar: {"type":"grammar","grammar":…}, the
	// arguments' GBNF (xgrammar's JSON Schema reading would drop the
	// keyword); empty for the others, whose content is their schema.
	content []string
	// schemaErr is why the parameters are not JSON; reported only when
	// the tool is rendered, as StructuralTag does.
	schemaErr []error
	// nameErr is checkName's verdict apart from the format's closer, and
	// ascii the ASCII bytes the name holds, so the closer is checked in
	// O(1) per name and format.
	nameErr []error
	ascii   [][2]uint64
	// argBlocks are the tools' GBNF arguments rules, rendered on first use.
	argBlocks []atomic.Pointer[argBlock]
	// tags are the tools' structural tag entries, rendered on first use.
	tags atomic.Pointer[tagPieces]
}

// NewCatalog prepares a catalog from each tool's name and parameters (raw
// JSON Schema, as the client sent it; nil or null for none). A tool whose
// parameters are not JSON is kept: rendering it is an error naming it, as
// with StructuralTag.
func NewCatalog(params map[string]json.RawMessage) *Catalog {
	names := make([]string, 0, len(params))
	for n := range params {
		names = append(names, n)
	}
	slices.Sort(names) // ids, and so errors, do not depend on map order
	return newCatalog(names, params)
}

// NewCatalogInOrder is NewCatalog with the tools numbered in names' order
// (a request's tools array; a repeated name keeps its first place) rather
// than sorted: a structural tag of tools in that order, the whole catalog
// above all, then copies them in one run. Names without params have none.
func NewCatalogInOrder(names []string, params map[string]json.RawMessage) *Catalog {
	seen := make(map[string]bool, len(names))
	distinct := make([]string, 0, len(names))
	for _, n := range names {
		if !seen[n] {
			seen[n] = true
			distinct = append(distinct, n)
		}
	}
	return newCatalog(distinct, params)
}

// newCatalog indexes names (distinct) with their params.
func newCatalog(names []string, params map[string]json.RawMessage) *Catalog {
	c := &Catalog{
		index:     make(map[string]int32, len(names)),
		names:     names,
		jname:     make([][]byte, len(names)),
		schema:    make([]string, len(names)),
		schemaErr: make([]error, len(names)),
		content:   make([]string, len(names)),
		nameErr:   make([]error, len(names)),
		ascii:     make([][2]uint64, len(names)),
		argBlocks: make([]atomic.Pointer[argBlock], len(names)),
	}
	var buf bytes.Buffer
	for i, n := range names {
		c.index[n] = int32(i)
		c.jname[i] = appendJSONChars(nil, n)
		c.nameErr[i] = checkName(n, 0)
		for j := 0; j < len(n); j++ {
			if b := n[j]; b < 128 {
				c.ascii[i][b>>6] |= 1 << (b & 63)
			}
		}
		p := bytes.TrimSpace(params[n])
		if len(p) == 0 || string(p) == "null" {
			c.schema[i] = anyObject
			continue
		}
		buf.Reset()
		if err := json.Compact(&buf, p); err != nil {
			c.schemaErr[i] = fmt.Errorf("masking: parameters of tool %q: %w", n, err)
			continue
		}
		c.schema[i] = buf.String()
		if bytes.Contains(buf.Bytes(), []byte(`"`+GrammarKeyword+`"`)) {
			if b := renderArgRules(buf.Bytes()); b.grammar {
				c.argBlocks[i].Store(&b)
				c.content[i] = string(grammarContent(b))
			}
		}
	}
	return c
}

// grammarContent is a structural tag content holding arguments to their
// GBNF block: the block's root as the grammar's root, its rules and the JSON
// primitives, as xgrammar reads llama.cpp's GBNF.
func grammarContent(b argBlock) []byte {
	var g strings.Builder
	prefix := argPrefix(nil, 0)
	g.WriteString("root ::= ")
	writeBlock(&g, b.term, prefix)
	g.WriteByte('\n')
	writeBlock(&g, b.rules, prefix)
	// xgrammar's EBNF refuses ws's empty first alternative; the same
	// language as an optional group.
	g.WriteString(strings.TrimSuffix(gbnfJSONRules, gbnfWSRule))
	g.WriteString(`ws ::= ( " " | "\n" [ \t]{0,20} )?` + "\n")
	out := append([]byte(nil), `{"type":"grammar","grammar":`...)
	out = appendJSONString(out, g.String())
	return append(out, '}')
}

// Len is the number of tools in the catalog.
func (c *Catalog) Len() int { return len(c.names) }

// GBNF is GBNF(spec, params) with the catalog's per-tool work reused; the
// bytes are the same. A tool's arguments rules are rendered on its first
// use and kept, so a request renders only the tools it allows that no
// earlier request did. A name of spec.Allowed that is not in the catalog is
// rendered as a tool without parameters.
func (c *Catalog) GBNF(spec Spec) (Grammar, error) {
	r, err := c.gbnfRender(spec)
	if err != nil {
		return Grammar{}, err
	}
	return r.grammar(), nil
}

// CallGBNF is CallGBNF(spec, params) with the catalog's per-tool work reused.
func (c *Catalog) CallGBNF(spec Spec) (string, error) {
	r, err := c.gbnfRender(spec)
	if err != nil {
		return "", err
	}
	return r.call(), nil
}

func (c *Catalog) gbnfRender(spec Spec) (*gbnfRender, error) {
	ids, extra, err := c.allowed(spec)
	if err != nil {
		return nil, err
	}
	parts, err := partsOf(spec.Format)
	if err != nil {
		return nil, err
	}
	if len(ids) == 0 {
		return nil, ErrNoCallAllowed
	}
	r := &gbnfRender{spec: spec, parts: parts, names: make([]string, len(ids)), blocks: make([]argBlock, len(ids))}
	for i, id := range ids {
		if int(id) >= len(c.names) {
			r.names[i] = extra[int(id)-len(c.names)]
			r.blocks[i] = argBlock{term: "json-object"}
			continue
		}
		if err := c.schemaErr[id]; err != nil {
			return nil, err
		}
		r.names[i] = c.names[id]
		r.blocks[i] = c.args(id)
	}
	return r, nil
}

// args is tool id's arguments block, rendered on first use. Two goroutines
// may render the same block; the bytes are equal and one is kept.
func (c *Catalog) args(id int32) argBlock {
	if b := c.argBlocks[id].Load(); b != nil {
		return *b
	}
	b := renderArgRules([]byte(c.schema[id]))
	c.argBlocks[id].CompareAndSwap(nil, &b)
	return *c.argBlocks[id].Load()
}

// StructuralTag is StructuralTag(spec, params) with the catalog's per-tool
// work reused; the bytes are the same. A name of spec.Allowed that is not in
// the catalog is rendered with {"type":"object"}.
func (c *Catalog) StructuralTag(spec Spec) ([]byte, error) {
	return c.AppendStructuralTag(nil, spec)
}

// AppendStructuralTag is StructuralTag appending to dst. Each tool's entry
// of the tag is rendered once per catalog (and format), on first use; a
// tag then copies them. At 10,000 tools a tag is megabytes; a backend that
// writes it into a request body and drops it can reuse one buffer and skip
// allocating and faulting in fresh pages on every request. On error dst is
// returned unchanged.
func (c *Catalog) AppendStructuralTag(dst []byte, spec Spec) ([]byte, error) {
	return c.appendStructuralTag(dst, spec, false)
}

// AppendStructuralTagString is AppendStructuralTag with the tag written as
// a JSON string, quoted and escaped exactly as encoding/json encodes it with
// SetEscapeHTML(false): the form vLLM takes in
// structured_outputs.structural_tag. The escaped entries are kept too, so
// a request does not escape megabytes.
func (c *Catalog) AppendStructuralTagString(dst []byte, spec Spec) ([]byte, error) {
	return c.appendStructuralTag(dst, spec, true)
}

func (c *Catalog) appendStructuralTag(dst []byte, spec Spec, str bool) ([]byte, error) {
	ids, extra, err := c.allowed(spec)
	if err != nil {
		return dst, err
	}
	parts, err := partsOf(spec.Format)
	if err != nil {
		return dst, err
	}
	if len(ids) == 0 {
		return dst, ErrNoCallAllowed
	}
	out, err := c.appendTagPieces(dst, spec, parts, ids, extra, str)
	if err != nil {
		return dst, err
	}
	return out, nil
}

// Has reports whether the catalog holds a tool named name.
func (c *Catalog) Has(name string) bool {
	_, ok := c.index[name]
	return ok
}

// allowed is Spec.names over the catalog: the allowed tools as ids in spec
// order, deduplicated; an id past the catalog's tools is len(c.names)+i for
// extra[i], an allowed name the catalog lacks.
// Names are checked against the format's closer with the catalog's
// precomputed byte sets instead of a scan, and deduplicated with a bitset
// instead of a map.
func (c *Catalog) allowed(s Spec) (ids []int32, extra []string, err error) {
	if err := s.Format.validate(); err != nil {
		return nil, nil, err
	}
	if s.Mode < ModeAuto || s.Mode > ModeSpecified {
		return nil, nil, fmt.Errorf("masking: unknown mode %d", int(s.Mode))
	}
	if s.Mode == ModeSpecified && s.Namespace == "" {
		return nil, nil, errors.New("masking: mode specified needs a Namespace")
	}
	closer := s.Format.NameClose[0]
	seen := make([]uint64, (len(c.names)+63)/64)
	ids = make([]int32, 0, len(s.Allowed))
	var extraSeen map[string]bool
	for _, n := range s.Allowed {
		id, ok := c.index[n]
		if !ok {
			if err := checkName(n, closer); err != nil {
				return nil, nil, err
			}
			if (s.Mode == ModeSpecified && !strings.HasPrefix(n, s.Namespace)) || extraSeen[n] {
				continue
			}
			if extraSeen == nil {
				extraSeen = make(map[string]bool)
			}
			extraSeen[n] = true
			ids = append(ids, int32(len(c.names)+len(extra)))
			extra = append(extra, n)
			continue
		}
		if err := c.nameErr[id]; err != nil {
			return nil, nil, err
		}
		if closer < 128 && c.ascii[id][closer>>6]&(1<<(closer&63)) != 0 || closer >= 128 && strings.IndexByte(n, closer) >= 0 {
			return nil, nil, checkName(n, closer)
		}
		if s.Mode == ModeSpecified && !strings.HasPrefix(n, s.Namespace) {
			continue
		}
		if w, bit := id>>6, uint64(1)<<(id&63); seen[w]&bit == 0 {
			seen[w] |= bit
			ids = append(ids, id)
		}
	}
	if len(ids) == 0 && s.Mode != ModeAuto {
		return nil, nil, fmt.Errorf("masking: mode %s with no allowed name (namespace %q)", s.Mode, s.Namespace)
	}
	return ids, extra, nil
}
