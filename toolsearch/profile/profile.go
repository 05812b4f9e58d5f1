package profile

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"path"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/maskgate/maskgate/toolsearch"
	"github.com/maskgate/maskgate/toolsearch/policy"
)

// Source is one block of tools, in resolution order.
type Source struct {
	// Kind is "file", "inline" or "mcp", for messages.
	Kind string
	// Name is the file, "inline", or the MCP server's name.
	Name  string
	Tools []toolsearch.Tool
}

// Fields are what an override or a variant may change. Unset fields leave the tool's.
type Fields struct {
	Description *string
	// Summary replaces the tool's line in the catalog's index (strategy index), its
	// description's first sentence by default.
	Summary *string
	// Parameters replaces the schema (JSON bytes, as given).
	Parameters json.RawMessage
	// Enabled false leaves the tool out of the catalog.
	Enabled *bool
}

// Override changes one tool as the profile's model sees it.
type Override struct {
	Tool string
	Fields
	// Variants are tried in order; the first whose When holds is merged over Fields.
	Variants []Variant
}

// Variant is a set of fields that applies when its rule holds.
type Variant struct {
	When policy.Cond
	Fields
}

// Spec is a profile's tool settings.
type Spec struct {
	Name string
	// Allow: globs over tool ids. Nil keeps every tool; empty keeps none.
	Allow     []string
	Overrides []Override
	// Options configure the search index.
	Options toolsearch.Options
	Log     *slog.Logger
}

// Change says what an Update or Compact did to the rendered catalog.
type Change struct {
	Added, Removed, Replaced []string
	// Broke: the rendered catalog before the change is no longer a prefix of the one
	// after it (a tool changed in place, or masked tools were dropped).
	Broke   bool
	Version string
}

// View is one request's catalog.
type View struct {
	Index *toolsearch.Index
	// Removed names tools still rendered but gone from their source: masked.
	Removed map[string]bool
}

// Catalog is a profile's live catalog.
type Catalog struct {
	spec  Spec
	log   *slog.Logger
	mu    sync.Mutex // serialises Update and Compact
	cur   atomic.Pointer[snapshot]
	limit int // variant catalogs kept per snapshot
}

type snapshot struct {
	ix      *toolsearch.Index
	tools   []toolsearch.Tool // render order, overrides applied, variants not
	removed map[string]bool
	// variants: signature → index, built on first use; bounded.
	mu       sync.Mutex
	variants map[string]*toolsearch.Index
}

// maxVariantCatalogs bounds the variant catalogs kept per snapshot; further combinations
// are built per request.
const maxVariantCatalogs = 64

// Static is a catalog of a fixed index (a profile whose tools never change).
func Static(ix *toolsearch.Index) *Catalog {
	c := &Catalog{log: slog.New(slog.DiscardHandler), limit: maxVariantCatalogs}
	tools := make([]toolsearch.Tool, 0, ix.Catalog().Len())
	for _, t := range ix.Catalog().All() {
		tools = append(tools, *t)
	}
	c.cur.Store(&snapshot{ix: ix, tools: tools})
	return c
}

// New assembles the first catalog from sources. Its tools are sorted by id.
func New(spec Spec, sources []Source) (*Catalog, error) {
	if err := spec.check(); err != nil {
		return nil, err
	}
	c := &Catalog{spec: spec, log: spec.Log, limit: maxVariantCatalogs}
	if c.log == nil {
		c.log = slog.New(slog.DiscardHandler)
	}
	tools, err := c.resolve(sources)
	if err != nil {
		return nil, err
	}
	sort.SliceStable(tools, func(i, j int) bool { return tools[i].Name < tools[j].Name })
	s, err := c.build(tools, nil)
	if err != nil {
		return nil, err
	}
	c.cur.Store(s)
	return c, nil
}

func (s *Spec) check() error {
	for i, g := range s.Allow {
		if _, err := path.Match(g, ""); err != nil {
			return fmt.Errorf("allow[%d]: bad glob %q", i, g)
		}
	}
	for i, o := range s.Overrides {
		if o.Tool == "" {
			return fmt.Errorf("overrides[%d]: tool is empty", i)
		}
		if err := o.Fields.check(); err != nil {
			return fmt.Errorf("overrides[%d]: %w", i, err)
		}
		for j, v := range o.Variants {
			if err := v.When.Check(); err != nil {
				return fmt.Errorf("overrides[%d].variants[%d].when: %w", i, j, err)
			}
			if err := v.Fields.check(); err != nil {
				return fmt.Errorf("overrides[%d].variants[%d]: %w", i, j, err)
			}
		}
	}
	return nil
}

func (f *Fields) check() error {
	if f.Parameters != nil {
		p := bytes.TrimSpace(f.Parameters)
		if len(p) == 0 || p[0] != '{' || !json.Valid(p) {
			return fmt.Errorf("parameters must be a JSON object (a JSON schema)")
		}
	}
	return nil
}

// resolve applies the order (a later id replaces an earlier one), the allowlist and the
// overrides' fixed fields. The result is in resolution order.
func (c *Catalog) resolve(sources []Source) ([]toolsearch.Tool, error) {
	var out []toolsearch.Tool
	at := map[string]int{}
	from := map[string]string{}
	for _, src := range sources {
		for _, t := range src.Tools {
			where := src.Kind + " " + src.Name
			if i, ok := at[t.Name]; ok {
				c.log.Info("tool replaced by a later source", "profile", c.spec.Name, "tool", t.Name, "was", from[t.Name], "now", where)
				out[i] = t
				from[t.Name] = where
				continue
			}
			at[t.Name], from[t.Name] = len(out), where
			out = append(out, t)
		}
	}
	if c.spec.Allow != nil {
		out = slices.DeleteFunc(out, func(t toolsearch.Tool) bool { return !c.allowed(t.Name) })
	}
	for _, o := range c.spec.Overrides {
		i := slices.IndexFunc(out, func(t toolsearch.Tool) bool { return t.Name == o.Tool })
		if i < 0 {
			c.log.Warn("override names a tool the profile does not have", "profile", c.spec.Name, "tool", o.Tool)
			continue
		}
		if !merge(&out[i], &o.Fields) {
			out = slices.Delete(out, i, i+1)
		}
	}
	return out, nil
}

func (c *Catalog) allowed(name string) bool {
	for _, g := range c.spec.Allow {
		if ok, _ := path.Match(g, name); ok {
			return true
		}
	}
	return false
}

// merge applies f over t and reports whether t stays in the catalog.
func merge(t *toolsearch.Tool, f *Fields) bool {
	if f.Description != nil {
		t.Description = *f.Description
	}
	if f.Summary != nil {
		t.Summary = *f.Summary
	}
	if f.Parameters != nil {
		t.Parameters = f.Parameters
	}
	return f.Enabled == nil || *f.Enabled
}

func (c *Catalog) build(tools []toolsearch.Tool, removed map[string]bool) (*snapshot, error) {
	cat, err := toolsearch.NewOrdered(tools)
	if err != nil {
		return nil, fmt.Errorf("profile %s: %w", c.spec.Name, err)
	}
	return &snapshot{ix: toolsearch.NewIndex(cat, c.spec.Options), tools: tools, removed: removed}, nil
}

// Update takes the sources' new tools. Tools that stay keep their place; new ones are
// appended; removed ones stay, masked, until Compact.
func (c *Catalog) Update(sources []Source) (Change, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	old := c.cur.Load()
	fresh, err := c.resolve(sources)
	if err != nil {
		return Change{}, err
	}
	byName := make(map[string]*toolsearch.Tool, len(fresh))
	for i := range fresh {
		byName[fresh[i].Name] = &fresh[i]
	}
	var ch Change
	tools := make([]toolsearch.Tool, 0, len(old.tools)+len(fresh))
	removed := map[string]bool{}
	for _, t := range old.tools {
		n, ok := byName[t.Name]
		switch {
		case !ok:
			tools = append(tools, t)
			removed[t.Name] = true
			if !old.removed[t.Name] {
				ch.Removed = append(ch.Removed, t.Name)
			}
		case same(&t, n):
			tools = append(tools, t)
		default:
			tools = append(tools, *n)
			ch.Replaced = append(ch.Replaced, t.Name)
			ch.Broke = true
		}
		delete(byName, t.Name)
	}
	var added []toolsearch.Tool
	for _, t := range fresh {
		if _, ok := byName[t.Name]; ok {
			added = append(added, t)
			ch.Added = append(ch.Added, t.Name)
		}
	}
	sort.SliceStable(added, func(i, j int) bool { return added[i].Name < added[j].Name })
	sort.Strings(ch.Added)
	tools = append(tools, added...)
	if len(removed) == 0 {
		removed = nil
	}
	s, err := c.build(tools, removed)
	if err != nil {
		return Change{}, err
	}
	c.cur.Store(s)
	ch.Version = s.ix.Catalog().Version()
	return ch, nil
}

// Removed names the tools kept masked in the current catalog (nil for none). Read only.
func (c *Catalog) Removed() map[string]bool { return c.cur.Load().removed }

// Masked is how many tools are kept masked for Compact to drop.
func (c *Catalog) Masked() int { return len(c.cur.Load().removed) }

// Compact drops the masked tools. It moves the prefix when there were any.
func (c *Catalog) Compact() (Change, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	old := c.cur.Load()
	if len(old.removed) == 0 {
		return Change{Version: old.ix.Catalog().Version()}, nil
	}
	tools := slices.DeleteFunc(slices.Clone(old.tools), func(t toolsearch.Tool) bool { return old.removed[t.Name] })
	s, err := c.build(tools, nil)
	if err != nil {
		return Change{}, err
	}
	c.cur.Store(s)
	return Change{Broke: true, Version: s.ix.Catalog().Version()}, nil
}

func same(a, b *toolsearch.Tool) bool {
	return a.Description == b.Description && a.Summary == b.Summary && bytes.Equal(a.Parameters, b.Parameters) &&
		(a.Strict == nil) == (b.Strict == nil) && (a.Strict == nil || *a.Strict == *b.Strict)
}

// Index is the catalog without variants.
func (c *Catalog) Index() *toolsearch.Index { return c.cur.Load().ix }

// HasVariants says whether any override has variants: then View depends on the request.
func (c *Catalog) HasVariants() bool {
	for _, o := range c.spec.Overrides {
		if len(o.Variants) > 0 {
			return true
		}
	}
	return false
}

// View is the catalog r sees: the variants whose rules hold merged in.
func (c *Catalog) View(r policy.Request) (View, error) {
	s := c.cur.Load()
	sig := c.signature(r)
	if sig == "" {
		return View{Index: s.ix, Removed: s.removed}, nil
	}
	s.mu.Lock()
	ix, ok := s.variants[sig]
	s.mu.Unlock()
	if ok {
		return View{Index: ix, Removed: s.removed}, nil
	}
	tools := slices.Clone(s.tools)
	for _, part := range strings.Split(sig, ",") {
		var o, v int
		fmt.Sscanf(part, "%d.%d", &o, &v)
		ov := &c.spec.Overrides[o]
		i := slices.IndexFunc(tools, func(t toolsearch.Tool) bool { return t.Name == ov.Tool })
		if i < 0 {
			continue
		}
		if !merge(&tools[i], &ov.Variants[v].Fields) {
			tools = slices.Delete(tools, i, i+1)
		}
	}
	cat, err := toolsearch.NewOrdered(tools)
	if err != nil {
		return View{}, fmt.Errorf("profile %s: %w", c.spec.Name, err)
	}
	ix = toolsearch.NewIndex(cat, c.spec.Options)
	s.mu.Lock()
	if s.variants == nil {
		s.variants = map[string]*toolsearch.Index{}
	}
	if len(s.variants) < c.limit {
		s.variants[sig] = ix
	}
	s.mu.Unlock()
	return View{Index: ix, Removed: s.removed}, nil
}

// signature names the variants r chooses: "override.variant" pairs, or "" for none.
func (c *Catalog) signature(r policy.Request) string {
	var b strings.Builder
	for i := range c.spec.Overrides {
		for j := range c.spec.Overrides[i].Variants {
			if ok, err := c.spec.Overrides[i].Variants[j].When.Eval(r); ok && err == nil {
				if b.Len() > 0 {
					b.WriteByte(',')
				}
				fmt.Fprintf(&b, "%d.%d", i, j)
				break
			}
		}
	}
	return b.String()
}
