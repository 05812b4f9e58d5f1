package masking

import (
	"bytes"
	"sync/atomic"
)

// Mask is a compiled constraint: a byte automaton over the format with a trie
// of the allowed names, and a memo of the allowed token set per automaton
// state, filled on first use (or all at once by Warm). It is safe for
// concurrent use by many States.
//
// Automaton states are dense int32 ids, in ranges:
//
//	free(k)   k bytes of the trigger matched in free text       [0, reqBase)
//	req(k)    k bytes of Lead+Trigger emitted, nothing else yet  [reqBase, fixedBase)
//	fixed(i)  i bytes of NameOpen emitted                        [fixedBase, nameBase)
//	name(n)   at node n of the name trie                         [nameBase, closeBase)
//	close(i)  i ≥ 1 bytes of NameClose emitted                   [closeBase, argsBase)
//	args(k)   k bytes of End matched in the arguments            [argsBase, total)
//
// A format without End has no args states: NameClose leads to free(0).
// Special tokens are atomic: in free text only a whole Trigger counts, in
// the arguments only a whole End, and in fixed text (Lead, Trigger,
// NameOpen, NameClose) a special token whose piece is the next bytes of that
// text, so a marker such as `<｜tool▁sep｜>` or `[ARGS]` may be emitted as the
// one special token it is in the model's vocabulary.
//
// The name trie is over the mask's universe: its own allowed names when
// compiled alone, or a precompiled catalog's names (see Cache.Precompile),
// with on marking the nodes on an allowed name's path and allow the allowed
// names. Masks of one universe share the trie and so number their states
// alike, which lets one reuse another's token sets.
type Mask struct {
	ix    *Index
	mode  Mode
	u     *universe
	nt    *trie    // u.nt
	on    []uint64 // the trie's nodes on an allowed name's path; nil: all
	allow []uint64 // the universe's names allowed; nil: all
	trig  []byte
	req   []byte // Lead + Trigger: the start in ModeRequired and ModeSpecified
	open  []byte
	close []byte
	end   []byte
	live  bool // some name can be called

	trigDFA [][256]uint8
	endDFA  [][256]uint8

	reqBase, fixedBase, nameBase, closeBase, argsBase, total int32

	memo []atomic.Pointer[Set]
}

// Compile builds the mask of spec over ix. Token sets are computed lazily;
// call Warm to compute them all up front.
func Compile(ix *Index, spec Spec) (*Mask, error) {
	names, err := spec.names()
	if err != nil {
		return nil, err
	}
	return newMask(ix, spec, newUniverse(names, spec.Format)), nil
}

// newMask is the mask of spec over ix allowing every name of u.
func newMask(ix *Index, spec Spec, u *universe) *Mask {
	f := spec.Format
	m := &Mask{
		ix:    ix,
		mode:  spec.Mode,
		u:     u,
		nt:    u.nt,
		trig:  []byte(f.Trigger),
		req:   []byte(f.Lead + f.Trigger),
		open:  []byte(f.NameOpen),
		close: []byte(f.NameClose),
		end:   []byte(f.End),
		live:  len(u.names) > 0,
	}
	m.trigDFA = kmp(m.trig)
	if len(m.end) > 0 {
		m.endDFA = kmp(m.end)
	}
	t := int32(len(m.trig))
	m.reqBase = t
	m.fixedBase = t + int32(len(m.req))
	m.nameBase = m.fixedBase + int32(len(m.open))
	m.closeBase = m.nameBase + int32(m.nt.nodes())
	m.argsBase = m.closeBase + int32(len(m.close)) - 1
	m.total = m.argsBase + int32(len(m.end))
	m.memo = make([]atomic.Pointer[Set], m.total)
	return m
}

// kmp returns the matching automaton of pat: row k is the state after k
// matched bytes, entries are the next state (len(pat) means matched).
func kmp(pat []byte) [][256]uint8 {
	d := make([][256]uint8, len(pat))
	d[0][pat[0]] = 1
	x := 0
	for k := 1; k < len(pat); k++ {
		d[k] = d[x]
		d[k][pat[k]] = uint8(k + 1)
		x = int(d[x][pat[k]])
	}
	return d
}

// Names returns the names the mask allows, in no particular order.
func (m *Mask) Names() []string {
	out := make([]string, 0, len(m.u.names))
	for id, n := range m.u.names {
		if m.allow == nil || hasBit(m.allow, int32(id)) {
			out = append(out, n)
		}
	}
	return out
}

// child is the name trie's child of node n along b, or -1, among the nodes
// on an allowed name's path.
func (m *Mask) child(n int32, b byte) int32 {
	c := m.nt.child(n, b)
	if c >= 0 && m.on != nil && !hasBit(m.on, c) {
		return -1
	}
	return c
}

// leaf reports that an allowed name ends at node n. The universe's names
// are distinct, so a node ends at most one.
func (m *Mask) leaf(n int32) bool {
	t := m.nt
	return t.leafHi[n] > t.leafLo[n] && (m.allow == nil || hasBit(m.allow, t.order[t.leafLo[n]]))
}

func (m *Mask) isName(s int32) bool { return s >= m.nameBase && s < m.closeBase }

// Vocab is the index the mask was compiled over.
func (m *Mask) Vocab() *Index { return m.ix }

func (m *Mask) start() int32 {
	if m.mode == ModeAuto {
		return 0
	}
	return m.reqBase
}

// unconstrained states take any byte; only the trigger and end markers are
// tracked through them.
func (m *Mask) unconstrained(s int32) bool { return s < m.reqBase || s >= m.argsBase }

func (m *Mask) afterTrigger() (int32, bool) {
	if !m.live {
		return -1, false
	}
	return m.fixedAt(0), true
}

func (m *Mask) fixedAt(i int32) int32 {
	if i == int32(len(m.open)) {
		return m.nameBase
	}
	return m.fixedBase + i
}

func (m *Mask) closeAt(i int32) int32 {
	if i == int32(len(m.close)) {
		if len(m.end) == 0 {
			return 0
		}
		return m.argsBase
	}
	return m.closeBase + i - 1
}

// step moves s along byte b.
func (m *Mask) step(s int32, b byte) (int32, bool) {
	switch {
	case s < m.reqBase:
		k := m.trigDFA[s][b]
		if int(k) == len(m.trig) {
			return m.afterTrigger()
		}
		return int32(k), true
	case s < m.fixedBase:
		k := s - m.reqBase
		if m.req[k] != b {
			return -1, false
		}
		if int(k)+1 == len(m.req) {
			return m.afterTrigger()
		}
		return s + 1, true
	case s < m.nameBase:
		i := s - m.fixedBase
		if m.open[i] != b {
			return -1, false
		}
		return m.fixedAt(i + 1), true
	case s < m.closeBase:
		n := s - m.nameBase
		if c := m.child(n, b); c >= 0 {
			return m.nameBase + c, true
		}
		if b == m.close[0] && m.leaf(n) {
			return m.closeAt(1), true
		}
		return -1, false
	case s < m.argsBase:
		i := s - m.closeBase + 1
		if m.close[i] != b {
			return -1, false
		}
		return m.closeAt(i + 1), true
	}
	k := m.endDFA[s-m.argsBase][b]
	if int(k) == len(m.end) {
		return 0, true
	}
	return m.argsBase + int32(k), true
}

// stepSpecial moves s along a special token: in free text and arguments it
// only ever matches the trigger or end text as a whole; in fixed text it
// must be the next bytes of that text.
func (m *Mask) stepSpecial(s int32, piece []byte) (int32, bool) {
	switch {
	case s < m.reqBase:
		if bytes.Equal(piece, m.trig) {
			return m.afterTrigger()
		}
		return 0, true
	case s >= m.argsBase:
		if bytes.Equal(piece, m.end) {
			return 0, true
		}
		return m.argsBase, true
	case len(piece) == 0:
		return -1, false
	case s < m.fixedBase:
		k := int(s - m.reqBase)
		if !bytes.HasPrefix(m.req[k:], piece) {
			return -1, false
		}
		if k += len(piece); k == len(m.req) {
			return m.afterTrigger()
		}
		return m.reqBase + int32(k), true
	case s < m.nameBase:
		i := s - m.fixedBase
		if !bytes.HasPrefix(m.open[i:], piece) {
			return -1, false
		}
		return m.fixedAt(i + int32(len(piece))), true
	case s < m.closeBase:
		if !m.leaf(s-m.nameBase) || !bytes.HasPrefix(m.close, piece) {
			return -1, false
		}
		return m.closeAt(int32(len(piece))), true
	}
	i := s - m.closeBase + 1
	if !bytes.HasPrefix(m.close[i:], piece) {
		return -1, false
	}
	return m.closeAt(i + int32(len(piece))), true
}

// stepToken moves s along token id; the mask is exactly the tokens for which
// this succeeds.
func (m *Mask) stepToken(s int32, id int) (int32, bool) {
	s, _, ok := m.stepTokenAt(s, id)
	return s, ok
}

// stepTokenAt is stepToken that also says how many of the token's bytes
// follow the first trigger it completes, or -1 when it completes none.
func (m *Mask) stepTokenAt(s int32, id int) (int32, int, bool) {
	if id < 0 || id >= m.ix.n {
		return -1, -1, false
	}
	p := m.ix.pieces[id]
	if m.ix.special[id] {
		s2, ok := m.stepSpecial(s, p)
		after := -1
		if ok && s < m.fixedBase && s2 >= m.fixedBase {
			after = 0
		}
		return s2, after, ok
	}
	if len(p) == 0 {
		return s, -1, m.unconstrained(s)
	}
	after := -1
	for i, b := range p {
		prev := s
		var ok bool
		if s, ok = m.step(s, b); !ok {
			return -1, -1, false
		}
		if after < 0 && prev < m.fixedBase && s >= m.fixedBase {
			after = len(p) - i - 1
		}
	}
	return s, after, true
}

// set returns the allowed tokens in state s, computing them on first use.
// Two goroutines may compute the same set; the first stored wins.
func (m *Mask) set(s int32) *Set {
	if p := m.memo[s].Load(); p != nil {
		return p
	}
	p := m.compute(s)
	if m.memo[s].CompareAndSwap(nil, p) {
		return p
	}
	return m.memo[s].Load()
}

func (m *Mask) compute(s int32) *Set {
	var ids []int32
	var enters bool
	m.walk(s, 0, !m.isName(s), &ids, &enters)
	for _, id := range m.ix.specials {
		if _, ok := m.stepSpecial(s, m.ix.pieces[id]); ok {
			ids = append(ids, id)
		}
	}
	if m.unconstrained(s) {
		ids = append(ids, m.ix.empties...)
	}
	set := newSet(ids, m.ix.n)
	set.entersNames = enters
	return set
}

// walk collects the ordinary tokens below vocabulary trie node v whose bytes
// (from v on) the automaton accepts from s. It follows the vocabulary and the
// automaton together, so inside a name it only visits token paths that stay
// in the name trie. left says the path has been outside the name region;
// enters is set when such a path reaches a name state, so the set depends
// on the name trie beyond the subtree of the state it is computed for.
func (m *Mask) walk(s, v int32, left bool, ids *[]int32, enters *bool) {
	vt := m.ix.trie
	*ids = append(*ids, vt.order[vt.leafLo[v]:vt.leafHi[v]]...)
	switch {
	case m.unconstrained(s):
		for c := vt.kidLo[v]; c < vt.kidHi[v]; c++ {
			if s2, ok := m.step(s, vt.label[c]); ok {
				m.descend(s2, c, left, ids, enters)
			}
		}
	case m.isName(s):
		n := s - m.nameBase
		for k := m.nt.kidLo[n]; k < m.nt.kidHi[n]; k++ {
			if m.on != nil && !hasBit(m.on, k) {
				continue
			}
			if c := vt.child(v, m.nt.label[k]); c >= 0 {
				m.descend(m.nameBase+k, c, left, ids, enters)
			}
		}
		if m.leaf(n) {
			if c := vt.child(v, m.close[0]); c >= 0 {
				m.descend(m.closeAt(1), c, left, ids, enters)
			}
		}
	default: // one expected byte
		var b byte
		switch {
		case s < m.fixedBase:
			b = m.req[s-m.reqBase]
		case s < m.nameBase:
			b = m.open[s-m.fixedBase]
		default:
			b = m.close[s-m.closeBase+1]
		}
		if c := vt.child(v, b); c >= 0 {
			if s2, ok := m.step(s, b); ok {
				m.descend(s2, c, left, ids, enters)
			}
		}
	}
}

// descend walks on from state s2 at vocabulary node c (see walk).
func (m *Mask) descend(s2, c int32, left bool, ids *[]int32, enters *bool) {
	in := m.isName(s2)
	if in && left {
		*enters = true
	}
	m.walk(s2, c, left || !in, ids, enters)
}

// Warm computes the token set of every automaton state, so that no decoding
// step pays for a first visit. At 10,000 names this is most of the build cost.
func (m *Mask) Warm() {
	for s := range m.total {
		m.set(s)
	}
}

// States is the number of automaton states (the memo's size); a mask
// derived from a precompiled catalog has the catalog's.
func (m *Mask) States() int { return int(m.total) }
