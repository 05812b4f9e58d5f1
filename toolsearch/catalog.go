package toolsearch

import (
	"fmt"
	"iter"
	"sort"
	"sync"
)

// A Catalog is an immutable, ordered set of tools with unique names: a profile's tools, or
// a profile's tools plus one request's own (see WithClient). It is safe for concurrent use.
//
// Order (the order of All and Render): profile tools sorted by name (byte order), then
// client tools in request order. A client tool with the name of a profile tool replaces
// it for that request: the profile's one is left out and the client's is rendered in its
// request position.
type Catalog struct {
	tools []*Tool // in render order
	// A profile catalog has byName; a request catalog has base and its own client tools.
	byName     map[string]int32
	base       *Catalog
	client     map[string]int32 // name → index in tools
	overridden map[string]bool  // base tools replaced by client tools

	ns namespaces

	renderOnce  sync.Once
	render      []byte
	versionOnce sync.Once
	version     string
	prefix      []byte       // profile catalogs: the SHA-256 state after "[" and every tool
	indexTexts  [2]indexText // IndexText without and with the client's tools
}

// New builds a profile catalog from tools (from ParseTools, ReadFiles, or built by hand).
// The order of tools does not matter: the catalog sorts them by name, so the rendered
// bytes are the same whatever order files or servers list them in. Two tools with one name
// are an error naming both origins. New copies each Tool; Parameters bytes are shared and
// must not be modified afterwards.
func New(tools []Tool) (*Catalog, error) {
	return build(tools, true)
}

// NewOrdered is New without the sort: the catalog renders tools in the order given. A
// profile whose tools change while it serves (an MCP server's list_changed) keeps its
// earlier tools where they were and appends the new ones, so the rendered bytes before
// them, and the engine's cached prefix, stay as they were.
func NewOrdered(tools []Tool) (*Catalog, error) {
	return build(tools, false)
}

func build(tools []Tool, sorted bool) (*Catalog, error) {
	c := &Catalog{tools: make([]*Tool, len(tools)), byName: make(map[string]int32, len(tools))}
	for i := range tools {
		t := tools[i]
		if err := t.check(); err != nil {
			return nil, fmt.Errorf("%s: %w", t.Origin, err)
		}
		t.Keywords = append([]string(nil), t.Keywords...)
		t.rendered = renderTool(&t)
		c.tools[i] = &t
	}
	if sorted {
		sort.Slice(c.tools, func(i, j int) bool { return c.tools[i].Name < c.tools[j].Name })
	}
	for i, t := range c.tools {
		if j, dup := c.byName[t.Name]; dup {
			return nil, fmt.Errorf("tool %q is defined twice: %s and %s", t.Name, c.tools[j].Origin, t.Origin)
		}
		c.byName[t.Name] = int32(i)
	}
	c.ns = newNamespaces(c.tools, nil)
	c.prefix = prefixState(c.tools)
	c.Version() // rendered and hashed once here, before requests share c
	return c, nil
}

// WithClient returns the catalog for one request: c's tools plus the client's own (from
// ParseClientTools), in request order. c is not changed, and the result must not outlive
// the request: a client's tools are never visible to another request. A client tool with
// the name of a profile tool wins for this request. Two client tools with one name are an
// error naming both ("tools[1] and tools[4]"), since an engine could not tell them apart.
func (c *Catalog) WithClient(tools []Tool) (*Catalog, error) {
	if c.base != nil {
		return nil, fmt.Errorf("toolsearch: WithClient on a request catalog; call it on the profile catalog")
	}
	r := &Catalog{base: c, client: make(map[string]int32, len(tools))}
	own := make([]*Tool, len(tools))
	for i := range tools {
		t := tools[i]
		if err := t.check(); err != nil {
			return nil, fmt.Errorf("%s: %w", t.Origin, err)
		}
		if j, dup := r.client[t.Name]; dup {
			return nil, fmt.Errorf("%s and %s both define function %q", own[j].Origin, t.Origin, t.Name)
		}
		t.Source = FromClient
		t.Keywords = append([]string(nil), t.Keywords...)
		t.rendered = renderTool(&t)
		own[i] = &t
		r.client[t.Name] = int32(i)
		if _, ok := c.byName[t.Name]; ok {
			if r.overridden == nil {
				r.overridden = make(map[string]bool)
			}
			r.overridden[t.Name] = true
		}
	}
	r.tools = make([]*Tool, 0, len(c.tools)-len(r.overridden)+len(own))
	if len(r.overridden) == 0 {
		r.tools = append(r.tools, c.tools...)
	} else {
		for _, t := range c.tools {
			if !r.overridden[t.Name] {
				r.tools = append(r.tools, t)
			}
		}
	}
	off := int32(len(r.tools))
	for name, i := range r.client {
		r.client[name] = off + i
	}
	r.tools = append(r.tools, own...)
	r.ns = newNamespaces(own, &c.ns)
	for name := range r.overridden {
		r.ns.remove(name)
	}
	return r, nil
}

// Len is the number of tools.
func (c *Catalog) Len() int { return len(c.tools) }

// All yields the tools in render order. The tools are shared: do not modify them.
func (c *Catalog) All() iter.Seq2[int, *Tool] {
	return func(yield func(int, *Tool) bool) {
		for i, t := range c.tools {
			if !yield(i, t) {
				return
			}
		}
	}
}

// Tool returns the i-th tool in render order.
func (c *Catalog) Tool(i int) *Tool { return c.tools[i] }

// Lookup returns the tool called name, if the catalog has it.
func (c *Catalog) Lookup(name string) (*Tool, bool) {
	i, ok := c.index(name)
	if !ok {
		return nil, false
	}
	return c.tools[i], true
}

// index is name's position in render order.
func (c *Catalog) index(name string) (int, bool) {
	if c.base == nil {
		i, ok := c.byName[name]
		return int(i), ok
	}
	if i, ok := c.client[name]; ok {
		return int(i), true
	}
	i, ok := c.base.byName[name]
	if !ok {
		return 0, false
	}
	// Base tools keep their order; each overridden one before i shifts i down by one.
	shift := 0
	for n := range c.overridden {
		if c.base.byName[n] < i {
			shift++
		}
	}
	return int(i) - shift, true
}

// Base is the profile catalog a request catalog extends, or c itself for a profile
// catalog.
func (c *Catalog) Base() *Catalog {
	if c.base != nil {
		return c.base
	}
	return c
}
