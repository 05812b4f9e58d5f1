package masking

import (
	"encoding/json"
	"sync"
)

// Catalogs keeps recently built catalogs by an identifier of their tools,
// for a backend that sees the same large tools array on every request (the
// gateway's whole catalog under mask, named by backends.Request.ToolsID), so
// each tool's schema is compacted and rendered once per catalog version
// rather than once per request. It is safe for concurrent use; the zero
// value is ready.
type Catalogs struct {
	// Max is the number of catalogs kept. If zero, 8.
	Max int

	mu      sync.Mutex
	entries map[string]*Catalog
	order   []string // oldest first
}

// Get returns the catalog kept under id, or builds one from the tools'
// parameters that read returns (name → JSON Schema, as NewCatalog takes
// them) and keeps it. An empty id means the tools have no identity: the
// catalog is built every time and not kept. Concurrent misses for one id may
// build twice; one is kept.
func (c *Catalogs) Get(id string, read func() (map[string]json.RawMessage, error)) (*Catalog, error) {
	return c.get(id, func() (*Catalog, error) {
		params, err := read()
		if err != nil {
			return nil, err
		}
		return NewCatalog(params), nil
	})
}

// GetInOrder is Get for a catalog built by NewCatalogInOrder from the names
// and parameters read returns. One id must be read one way only.
func (c *Catalogs) GetInOrder(id string, read func() ([]string, map[string]json.RawMessage, error)) (*Catalog, error) {
	return c.get(id, func() (*Catalog, error) {
		names, params, err := read()
		if err != nil {
			return nil, err
		}
		return NewCatalogInOrder(names, params), nil
	})
}

func (c *Catalogs) get(id string, build func() (*Catalog, error)) (*Catalog, error) {
	if id != "" {
		c.mu.Lock()
		cat, ok := c.entries[id]
		c.mu.Unlock()
		if ok {
			return cat, nil
		}
	}
	cat, err := build()
	if err != nil {
		return nil, err
	}
	if id == "" {
		return cat, nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if kept, ok := c.entries[id]; ok {
		return kept, nil
	}
	if c.entries == nil {
		c.entries = make(map[string]*Catalog)
	}
	max := c.Max
	if max <= 0 {
		max = 8
	}
	for len(c.order) >= max {
		delete(c.entries, c.order[0])
		c.order = c.order[1:]
	}
	c.entries[id] = cat
	c.order = append(c.order, id)
	return cat, nil
}
