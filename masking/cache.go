package masking

import (
	"container/list"
	"crypto/sha256"
	"encoding/binary"
	"hash"
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
//
// A catalog's masks can be made cheap ahead of the first request with
// Precompile: a miss whose names all belong to a precompiled catalog is
// derived from the nearest mask of that catalog (see Precompile) instead of
// compiled, and keyed by its set over the catalog, with no sort.
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
	bases   []*Mask             // precompiled catalogs, newest first
}

// maxBases bounds the precompiled catalogs kept: one per catalog version a
// backend is serving, the oldest dropped first.
const maxBases = 4

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
	ix *Index
	// u is the precompiled catalog a derived mask's set is over (sum then
	// hashes the set as a bitset of its names); nil for a compiled mask.
	u   *universe
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

	if m, ok := c.getDerived(ix, spec, h); ok {
		return m, nil
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
	return c.insert(k, m, h, ix, spec), nil
}

// insert keeps m under k, or returns the mask another goroutine kept there
// meanwhile, and remembers spec as a way to it.
func (c *Cache) insert(k cacheKey, m *Mask, h uint64, ix *Index, spec Spec) *Mask {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.items[k]; ok {
		c.lru.MoveToFront(e)
		c.addAlias(e, h, ix, spec)
		return e.Value.(*cacheEntry).mask
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
	return m
}

// Precompile compiles, ahead of its first request, the mask of a catalog:
// spec.Allowed is every name a request of that catalog version may allow
// (its tools and the meta-tools), in spec.Format over ix; Mode and
// Namespace are not used. The cache keeps it as a base (the last few
// catalogs). A later Get whose allowed names all belong to a base, in its
// format and over ix, then derives its mask from the mask of that catalog
// nearest to it (fewest names allowed in one and not the other: the base,
// or a cached mask such as the previous turn's loaded set) instead of
// compiling one: the trie and automaton are shared, and every token set
// already computed that the difference cannot change is reused. It allows
// exactly what Compile's mask would. Precompiling a catalog kept already
// does nothing. With Warm set, the base's token sets are all computed too.
func (c *Cache) Precompile(ix *Index, spec Spec) error {
	names, err := Spec{Format: spec.Format, Allowed: spec.Allowed}.names()
	if err != nil {
		return err
	}
	c.mu.Lock()
	c.init()
	for _, b := range c.bases {
		if b.ix == ix && b.u.format == spec.Format && slices.Equal(b.u.names, names) {
			c.mu.Unlock()
			return nil
		}
	}
	c.mu.Unlock()
	u := newUniverse(names, spec.Format)
	u.prepare()
	m := newMask(ix, Spec{Format: spec.Format}, u)
	if c.Warm {
		m.Warm()
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.bases = slices.Insert(c.bases, 0, m)
	if len(c.bases) > maxBases {
		c.bases = c.bases[:maxBases]
	}
	return nil
}

// getDerived is Get's miss for a spec whose names all belong to a
// precompiled catalog; ok is false for any other, left to Compile (which
// reports a bad spec).
func (c *Cache) getDerived(ix *Index, spec Spec, h uint64) (m *Mask, ok bool) {
	c.mu.Lock()
	bases := slices.Clone(c.bases)
	c.mu.Unlock()
	if len(bases) == 0 || spec.check() != nil {
		return nil, false
	}
	for _, b := range bases {
		if b.ix != ix || b.u.format != spec.Format {
			continue
		}
		allow, count, in := b.u.allowed(spec)
		if !in {
			continue
		}
		if count == 0 {
			return nil, false // nothing allowed: Compile's trivial mask, or its error
		}
		k := cacheKey{ix: ix, u: b.u, sum: setKey(spec, allow)}
		c.mu.Lock()
		if e, ok := c.items[k]; ok {
			c.lru.MoveToFront(e)
			c.addAlias(e, h, ix, spec)
			c.mu.Unlock()
			return e.Value.(*cacheEntry).mask, true
		}
		from, best := b, b.u.distance(b.allow, allow)
		for e := c.lru.Front(); e != nil && best > 0; e = e.Next() {
			if cm := e.Value.(*cacheEntry).mask; cm.u == b.u && cm.live {
				if d := b.u.distance(cm.allow, allow); d < best {
					from, best = cm, d
				}
			}
		}
		c.mu.Unlock()
		m := derive(from, spec, allow, count)
		if c.Warm {
			m.Warm()
		}
		return c.insert(k, m, h, ix, spec), true
	}
	return nil, false
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

// setKey hashes spec with its allowed set given as a bitset over a
// precompiled catalog's names, which is canonical without a sort.
func setKey(s Spec, allow []uint64) [sha256.Size]byte {
	h := sha256.New()
	writeSpecHead(h, s)
	var n [8]byte
	for _, w := range allow {
		binary.LittleEndian.PutUint64(n[:], w)
		h.Write(n[:])
	}
	return [sha256.Size]byte(h.Sum(nil))
}

// writeSpecHead writes what identifies spec apart from its names.
func writeSpecHead(h hash.Hash, s Spec) {
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
}

// specKey hashes a canonical encoding of spec: the allowed names as a sorted
// set. Callers that keep Allowed sorted skip the copy and sort.
func specKey(s Spec) [sha256.Size]byte {
	h := sha256.New()
	writeSpecHead(h, s)
	var n [8]byte
	put := func(v string) {
		binary.LittleEndian.PutUint64(n[:], uint64(len(v)))
		h.Write(n[:])
		h.Write([]byte(v))
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
