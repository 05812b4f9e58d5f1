package masking

import (
	"container/list"
	"crypto/sha256"
	"encoding/binary"
	"hash/maphash"
	"slices"
	"sync"
)

// Cache keeps recently compiled masks, keyed by (vocabulary index, format,
// allowed set, mode, namespace). It is safe for concurrent use; the zero value
// is ready.
//
// The key is the SHA-256 of a canonical encoding with the allowed names as a
// sorted set, so the same set in any order or with duplicates finds the same
// mask. Sorting 10,000 names costs milliseconds, so each entry also keeps
// the exact specs (names in the order given) that led to it: a hit hashes
// the spec as given with a per-cache random maphash seed and compares it
// with the kept copy name by name, which is linear, allocation-free and
// exact, so no collision can return another set's mask. Only a spec not
// seen in that order pays for the sort.
type Cache struct {
	// Max is the number of masks kept. If zero, 16.
	Max int
	// Warm, if set, computes every token set of a new mask before it is
	// returned (see Mask.Warm).
	Warm bool

	mu      sync.Mutex
	lru     *list.List // front is most recent; values are *cacheEntry
	items   map[cacheKey]*list.Element
	seed    maphash.Seed
	aliases map[uint64][]*alias // by exactHash
}

// alias is one exact spec known to map to an entry. It is immutable once
// stored, apart from dead, which is guarded by Cache.mu.
type alias struct {
	hash    uint64
	ix      *Index
	format  Format
	mode    Mode
	ns      string
	allowed []string // a copy; the caller's slice may change
	elem    *list.Element
	dead    bool
}

// maxAliases bounds the exact specs kept per entry; the oldest goes first.
const maxAliases = 4

func (a *alias) matches(ix *Index, s Spec) bool {
	return a.ix == ix && a.format == s.Format && a.mode == s.Mode &&
		(s.Mode != ModeSpecified || a.ns == s.Namespace) && slices.Equal(a.allowed, s.Allowed)
}

type cacheKey struct {
	ix  *Index
	sum [sha256.Size]byte
}

type cacheEntry struct {
	key     cacheKey
	mask    *Mask
	aliases []*alias
}

// init makes the maps and the seed; c.mu is held.
func (c *Cache) init() {
	if c.items == nil {
		c.items = make(map[cacheKey]*list.Element)
		c.lru = list.New()
		c.seed = maphash.MakeSeed()
		c.aliases = make(map[uint64][]*alias)
	}
}

// Get returns the mask of spec over ix, compiling it on a miss. Concurrent
// misses for one key may compile twice; one result is kept.
func (c *Cache) Get(ix *Index, spec Spec) (*Mask, error) {
	c.mu.Lock()
	c.init()
	seed := c.seed
	c.mu.Unlock()

	h := exactHash(seed, spec)
	c.mu.Lock()
	cands := slices.Clone(c.aliases[h])
	c.mu.Unlock()
	for _, a := range cands {
		if !a.matches(ix, spec) { // compared without the lock: a is immutable
			continue
		}
		c.mu.Lock()
		if !a.dead {
			c.lru.MoveToFront(a.elem)
			m := a.elem.Value.(*cacheEntry).mask
			c.mu.Unlock()
			return m, nil
		}
		c.mu.Unlock()
	}

	k := cacheKey{ix: ix, sum: specKey(spec)}
	c.mu.Lock()
	if e, ok := c.items[k]; ok {
		c.lru.MoveToFront(e)
		c.addAlias(e, h, ix, spec)
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
	if e, ok := c.items[k]; ok {
		c.lru.MoveToFront(e)
		c.addAlias(e, h, ix, spec)
		return e.Value.(*cacheEntry).mask, nil
	}
	e := c.lru.PushFront(&cacheEntry{key: k, mask: m})
	c.items[k] = e
	c.addAlias(e, h, ix, spec)
	max := c.Max
	if max <= 0 {
		max = 16
	}
	for c.lru.Len() > max {
		e := c.lru.Back()
		c.lru.Remove(e)
		ce := e.Value.(*cacheEntry)
		delete(c.items, ce.key)
		for _, a := range ce.aliases {
			c.dropAlias(a)
		}
	}
	return m, nil
}

// addAlias remembers spec, exactly as given, as a way to entry e; c.mu is held.
func (c *Cache) addAlias(e *list.Element, h uint64, ix *Index, s Spec) {
	ce := e.Value.(*cacheEntry)
	if len(ce.aliases) == maxAliases {
		c.dropAlias(ce.aliases[0])
		ce.aliases = slices.Delete(ce.aliases, 0, 1)
	}
	a := &alias{hash: h, ix: ix, format: s.Format, mode: s.Mode, ns: s.Namespace, allowed: slices.Clone(s.Allowed), elem: e}
	ce.aliases = append(ce.aliases, a)
	c.aliases[h] = append(c.aliases[h], a)
}

// dropAlias forgets a; c.mu is held.
func (c *Cache) dropAlias(a *alias) {
	a.dead = true
	rest := slices.DeleteFunc(c.aliases[a.hash], func(x *alias) bool { return x == a })
	if len(rest) == 0 {
		delete(c.aliases, a.hash)
	} else {
		c.aliases[a.hash] = rest
	}
}

// exactHash hashes spec as given (names in order, duplicates kept) for the
// alias lookup; equality is then checked exactly, so this needs only to
// spread keys, not to resist collisions.
func exactHash(seed maphash.Seed, s Spec) uint64 {
	var h maphash.Hash
	h.SetSeed(seed)
	f := s.Format
	for _, v := range []string{f.Name, f.Lead, f.Trigger, f.NameOpen, f.NameClose, f.End, s.Namespace} {
		h.WriteString(v)
		h.WriteByte(0xff) // not in UTF-8, so fields cannot run together
	}
	h.WriteByte(byte(s.Mode))
	for _, n := range s.Allowed {
		h.WriteString(n)
		h.WriteByte(0xff)
	}
	return h.Sum64()
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
	for _, v := range []string{f.Name, f.Lead, f.Trigger, f.NameOpen, f.NameClose, f.End} {
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
