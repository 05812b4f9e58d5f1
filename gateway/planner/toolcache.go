package planner

import (
	"bytes"
	"container/list"
	"hash/maphash"
	"slices"
	"sync"

	"github.com/maskgate/maskgate/toolsearch"
)

// toolCache keeps, per distinct tools array, what Plan derives from it: the parsed
// tools and the request catalog's index over the profile's. Agents resend the same array
// byte for byte every turn (that is what keeps the prompt stable), so the parse and the
// index are paid once per array, not once per request.
//
// An entry is the caller's: its key holds the identity, the profile and the version of the
// profile's view, and its bytes are compared on a hit (a hash never decides alone). It
// holds its own copy of the bytes, since the request's are recycled. Bounded by entries
// and bytes; the least recently used go first.
type toolCache struct {
	mu    sync.Mutex
	seed  maphash.Seed
	items map[uint64]*list.Element
	order *list.List // most recent first
	bytes int64
}

type toolEntry struct {
	hash  uint64
	scope string // identity, profile, view version
	raw   []byte // the client's tools array, copied
	names []string
	// client are the parsed tools less those the profile's view holds as they are; ix
	// (and hybrid, with embeddings) the request catalog over the view.
	client []toolsearch.Tool
	ix     *toolsearch.Index
	hybrid *toolsearch.Hybrid
}

const (
	maxToolEntries = 1024
	maxToolBytes   = 64 << 20
)

func (c *toolCache) key(scope string, raw []byte) uint64 {
	var h maphash.Hash
	h.SetSeed(c.seed)
	h.WriteString(scope)
	h.WriteByte(0)
	h.Write(raw)
	return h.Sum64()
}

func (c *toolCache) get(scope string, raw []byte) (*toolEntry, uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.items == nil {
		c.seed, c.items, c.order = maphash.MakeSeed(), map[uint64]*list.Element{}, list.New()
	}
	k := c.key(scope, raw)
	el, ok := c.items[k]
	if !ok {
		return nil, k
	}
	e := el.Value.(*toolEntry)
	if e.scope != scope || !bytes.Equal(e.raw, raw) {
		return nil, k
	}
	c.order.MoveToFront(el)
	return e, k
}

func (c *toolCache) put(e *toolEntry) {
	size := int64(len(e.raw)) * 3 // the bytes, the parsed tools and the index, roughly
	if size > maxToolBytes/4 {
		return // one array that large would crowd out the rest
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if old, ok := c.items[e.hash]; ok {
		c.remove(old)
	}
	c.items[e.hash] = c.order.PushFront(e)
	c.bytes += size
	for len(c.items) > maxToolEntries || c.bytes > maxToolBytes {
		c.remove(c.order.Back())
	}
}

func (c *toolCache) remove(el *list.Element) {
	e := c.order.Remove(el).(*toolEntry)
	delete(c.items, e.hash)
	c.bytes -= int64(len(e.raw)) * 3
}

// clientTools is what Plan needs of the client's tools array raw under a profile
// view: the names it declared, and the request index (nil when the request has no tools
// of either). Built once per distinct array and scope.
func (pl *Planner) clientTools(scope string, raw []byte, base *toolsearch.Index, h *toolsearch.Hybrid) (*toolEntry, error) {
	e, k := pl.toolCache.get(scope, raw)
	if e != nil {
		return e, nil
	}
	own := bytes.Clone(raw) // the request's bytes are recycled; the parsed tools point into these
	client, err := toolsearch.ParseClientTools(own)
	if err != nil {
		return nil, badRequest(err.Error(), "tools")
	}
	e = &toolEntry{hash: k, scope: scope, raw: own, names: make([]string, len(client))}
	for i, t := range client {
		e.names[i] = t.Name
	}
	if base != nil {
		// A client tool the profile's catalog holds as it is (same description, same
		// schema bytes) is taken from the catalog, so it keeps its place there: a
		// client whose tools array grows with each discovery (a deferring client) finds
		// the engine's prompt unchanged while its tools are the catalog's, and a tool the
		// catalog lacks joins it at the end (one change of the prefix, when first shown).
		client = slices.DeleteFunc(client, func(t toolsearch.Tool) bool {
			own, known := base.Catalog().Lookup(t.Name)
			return known && sameTool(own, &t)
		})
	}
	e.client = client
	switch {
	case h != nil && len(client) > 0:
		if e.hybrid, err = h.WithClient(client); err != nil {
			return nil, badRequest(err.Error(), "tools")
		}
		e.ix = e.hybrid.Index()
	case h != nil:
		e.hybrid, e.ix = h, base
	case base != nil && len(client) > 0:
		if e.ix, err = base.WithClient(client); err != nil {
			return nil, badRequest(err.Error(), "tools")
		}
	case base != nil:
		e.ix = base
	case len(client) > 0:
		cat, err := toolsearch.New(client)
		if err != nil {
			return nil, badRequest(err.Error(), "tools")
		}
		e.ix = toolsearch.NewIndex(cat, toolsearch.Options{})
	}
	pl.toolCache.put(e)
	return e, nil
}

// sameTool reports whether a and b are the same tool to the engine: the same
// description and schema bytes, and strict the same (absent is false).
func sameTool(a, b *toolsearch.Tool) bool {
	strict := func(p *bool) bool { return p != nil && *p }
	return a.Description == b.Description && bytes.Equal(a.Parameters, b.Parameters) && strict(a.Strict) == strict(b.Strict)
}
