package masking

import (
	"container/list"
	"crypto/sha256"
	"encoding/binary"
	"slices"
	"sync"
)

// Cache keeps recently compiled masks, keyed by (vocabulary index, format,
// allowed set, mode, namespace). It is safe for concurrent use; the zero value
// is ready.
type Cache struct {
	// Max is the number of masks kept. If zero, 16.
	Max int
	// Warm, if set, computes every token set of a new mask before it is
	// returned (see Mask.Warm).
	Warm bool

	mu    sync.Mutex
	lru   *list.List // front is most recent; values are *cacheEntry
	items map[cacheKey]*list.Element
}

type cacheKey struct {
	ix  *Index
	sum [sha256.Size]byte
}

type cacheEntry struct {
	key  cacheKey
	mask *Mask
}

// Get returns the mask of spec over ix, compiling it on a miss. Concurrent
// misses for one key may compile twice; one result is kept.
func (c *Cache) Get(ix *Index, spec Spec) (*Mask, error) {
	k := cacheKey{ix: ix, sum: specKey(spec)}
	c.mu.Lock()
	if e, ok := c.items[k]; ok {
		c.lru.MoveToFront(e)
		c.mu.Unlock()
		return e.Value.(*cacheEntry).mask, nil
	}
	c.mu.Unlock()

	m, err := Compile(ix, spec)
	if err != nil {
		return nil, err
	}
	if c.Warm {
		m.Warm()
	}

	c.mu.Lock()
	defer c.mu.Unlock()
	if c.items == nil {
		c.items = make(map[cacheKey]*list.Element)
		c.lru = list.New()
	}
	if e, ok := c.items[k]; ok {
		c.lru.MoveToFront(e)
		return e.Value.(*cacheEntry).mask, nil
	}
	c.items[k] = c.lru.PushFront(&cacheEntry{key: k, mask: m})
	max := c.Max
	if max <= 0 {
		max = 16
	}
	for c.lru.Len() > max {
		e := c.lru.Back()
		c.lru.Remove(e)
		delete(c.items, e.Value.(*cacheEntry).key)
	}
	return m, nil
}

// Len is the number of masks held.
func (c *Cache) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.lru == nil {
		return 0
	}
	return c.lru.Len()
}

// specKey hashes a canonical encoding of spec: the allowed names as a sorted
// set. Callers that keep Allowed sorted skip the copy and sort.
func specKey(s Spec) [sha256.Size]byte {
	h := sha256.New()
	var n [8]byte
	put := func(v string) {
		binary.LittleEndian.PutUint64(n[:], uint64(len(v)))
		h.Write(n[:])
		h.Write([]byte(v))
	}
	f := s.Format
	for _, v := range []string{f.Name, f.Trigger, f.NameOpen, f.NameClose, f.End} {
		put(v)
	}
	binary.LittleEndian.PutUint64(n[:], uint64(s.Mode))
	h.Write(n[:])
	if s.Mode == ModeSpecified {
		put(s.Namespace)
	}
	names := s.Allowed
	if !slices.IsSorted(names) {
		names = slices.Clone(names)
		slices.Sort(names)
	}
	for i, v := range names {
		if i > 0 && v == names[i-1] {
			continue
		}
		put(v)
	}
	return [sha256.Size]byte(h.Sum(nil))
}
