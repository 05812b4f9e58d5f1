package masking

import (
	"math/bits"
	"strings"
	"sync/atomic"
)

// universe is the set of names a mask's name trie is built over: the
// allowed names of a mask compiled alone, or a precompiled catalog's, whose
// trie every mask derived from it shares (Cache.Precompile).
type universe struct {
	format Format // the format the names were checked against
	names  []string
	nt     *trie
	// Set for a precompiled catalog (prepare): index finds a name's id, end
	// is the node a name ends at and parent each node's parent (-1 for the
	// root), to mark the paths of the names a derived mask allows.
	index  map[string]int32
	end    []int32
	parent []int32
}

// newUniverse builds the trie of names (distinct, checked against f).
func newUniverse(names []string, f Format) *universe {
	size := 0
	for _, n := range names {
		size += len(n)
	}
	buf := make([]byte, 0, size) // one allocation for every name's bytes
	strs := make([][]byte, len(names))
	ids := make([]int32, len(names))
	for i, n := range names {
		buf = append(buf, n...)
		strs[i] = buf[len(buf)-len(n) : len(buf) : len(buf)]
		ids[i] = int32(i)
	}
	return &universe{format: f, names: names, nt: buildTrie(strs, ids)}
}

// prepare indexes u for deriving masks from it.
func (u *universe) prepare() {
	t := u.nt
	u.index = make(map[string]int32, len(u.names))
	for i, n := range u.names {
		u.index[n] = int32(i)
	}
	u.parent = make([]int32, t.nodes())
	u.parent[0] = -1
	u.end = make([]int32, len(u.names))
	for n := range int32(t.nodes()) {
		for k := t.kidLo[n]; k < t.kidHi[n]; k++ {
			u.parent[k] = n
		}
		for _, id := range t.order[t.leafLo[n]:t.leafHi[n]] {
			u.end[id] = n
		}
	}
}

// allowed is spec's allowed set as a bitset over u's names and its size,
// with ok false when a name is not in u. spec's format is u's, so u's
// names were checked for it.
func (u *universe) allowed(spec Spec) (allow []uint64, count int, ok bool) {
	allow = make([]uint64, (len(u.names)+63)/64)
	for _, n := range spec.Allowed {
		id, in := u.index[n]
		if !in {
			return nil, 0, false
		}
		if spec.Mode == ModeSpecified && !strings.HasPrefix(n, spec.Namespace) {
			continue
		}
		if !hasBit(allow, id) {
			setBit(allow, id)
			count++
		}
	}
	return allow, count, true
}

// markPath sets in nodes name id's node and its ancestors, up to the first
// already set.
func (u *universe) markPath(nodes []uint64, id int32) {
	for n := u.end[id]; n >= 0 && !hasBit(nodes, n); n = u.parent[n] {
		setBit(nodes, n)
	}
}

// word is word i of a name bitset, nil meaning every name.
func (u *universe) word(set []uint64, i int) uint64 {
	if set != nil {
		return set[i]
	}
	if r := len(u.names) - 64*i; r < 64 {
		return 1<<uint(r) - 1
	}
	return ^uint64(0)
}

// distance is the number of names in one set and not the other.
func (u *universe) distance(a, b []uint64) int {
	d := 0
	for i := range (len(u.names) + 63) / 64 {
		d += bits.OnesCount64(u.word(a, i) ^ u.word(b, i))
	}
	return d
}

// derive is the mask of spec allowing the count names allow, over from's
// universe, which holds them. The trie, the automaton and its tables are
// from's; its token sets are reused for every state whose set cannot differ:
// a state outside the name region whose set does not run into it, and a
// name node off every path of a name one mask allows and the other does
// not (nothing in its subtree changed). The rest are computed on first use,
// as in a fresh mask. from is never modified.
func derive(from *Mask, spec Spec, allow []uint64, count int) *Mask {
	u := from.u
	m := *from
	m.mode = spec.Mode
	m.live = count > 0
	m.allow, m.on = allow, nil
	if count == len(u.names) {
		m.allow = nil
	} else {
		m.on = make([]uint64, (u.nt.nodes()+63)/64)
		for w, x := range allow {
			for ; x != 0; x &= x - 1 {
				u.markPath(m.on, int32(64*w+bits.TrailingZeros64(x)))
			}
		}
	}
	m.memo = make([]atomic.Pointer[Set], m.total)
	if !from.live || !m.live {
		return &m
	}
	changed := make([]uint64, (u.nt.nodes()+63)/64)
	for i := range (len(u.names) + 63) / 64 {
		for x := u.word(from.allow, i) ^ u.word(m.allow, i); x != 0; x &= x - 1 {
			u.markPath(changed, int32(64*i+bits.TrailingZeros64(x)))
		}
	}
	for s := range m.total {
		p := from.memo[s].Load()
		if p == nil || p.entersNames || m.isName(s) && hasBit(changed, s-m.nameBase) {
			continue
		}
		m.memo[s].Store(p)
	}
	return &m
}
