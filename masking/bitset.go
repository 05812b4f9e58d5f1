package masking

import (
	"math/bits"
	"slices"
)

// Bitset is a set of token ids over a vocabulary: 128k tokens take 16 KB.
// The zero value is an empty set of length 0; use [NewBitset] or
// [Set.CopyTo] to size it.
type Bitset struct {
	words []uint64
	n     int
}

// NewBitset returns an empty set over ids 0..n-1.
func NewBitset(n int) *Bitset {
	return &Bitset{words: make([]uint64, (n+63)/64), n: n}
}

// Len is the number of ids the set ranges over.
func (b *Bitset) Len() int { return b.n }

// Has reports whether id is in the set; ids out of range are not.
func (b *Bitset) Has(id int) bool {
	return id >= 0 && id < b.n && b.words[id>>6]&(1<<(uint(id)&63)) != 0
}

// Add puts id in the set. It panics if id is out of range.
func (b *Bitset) Add(id int) { b.words[id>>6] |= 1 << (uint(id) & 63) }

// Count is the number of ids in the set.
func (b *Bitset) Count() int {
	c := 0
	for _, w := range b.words {
		c += bits.OnesCount64(w)
	}
	return c
}

// Words exposes the backing words (bit i of word j is id 64j+i), for engines
// that apply the mask to logits a word at a time. Callers must not keep it
// across a later CopyTo into b.
func (b *Bitset) Words() []uint64 { return b.words }

// reset resizes b to n ids and empties it, reusing storage.
func (b *Bitset) reset(n int) {
	w := (n + 63) / 64
	if cap(b.words) < w {
		b.words = make([]uint64, w)
	} else {
		b.words = b.words[:w]
		clear(b.words)
	}
	b.n = n
}

// Set is a read-only set of allowed token ids at one decoding step, shared by
// every State of a Mask: never modify it. It is stored densely or as a sorted
// id list, whichever is smaller.
type Set struct {
	n     int
	all   bool
	dense []uint64 // nil unless stored densely
	ids   []int32  // sorted; used when dense is nil and all is false
	count int
	// entersNames: a token of the set, from outside the name region, runs
	// into it, so the set depends on the whole name trie and is not reused
	// by a mask derived for another allowed set (Cache.Precompile).
	entersNames bool
}

// newSet takes ownership of ids (distinct, any order).
func newSet(ids []int32, n int) *Set {
	s := &Set{n: n, count: len(ids)}
	switch {
	case len(ids) == n:
		s.all = true
	case len(ids)*32 >= n: // a sorted list would be larger than the bitset
		s.dense = make([]uint64, (n+63)/64)
		for _, id := range ids {
			s.dense[id>>6] |= 1 << (uint(id) & 63)
		}
	default:
		slices.Sort(ids)
		s.ids = slices.Clip(ids)
	}
	return s
}

// All reports that every token is allowed: the step is unconstrained and an
// engine may skip masking.
func (s *Set) All() bool { return s.all }

// Count is the number of allowed tokens.
func (s *Set) Count() int { return s.count }

// Has reports whether token id is allowed.
func (s *Set) Has(id int) bool {
	switch {
	case id < 0 || id >= s.n:
		return false
	case s.all:
		return true
	case s.dense != nil:
		return s.dense[id>>6]&(1<<(uint(id)&63)) != 0
	}
	_, ok := slices.BinarySearch(s.ids, int32(id))
	return ok
}

// AppendIDs appends the allowed ids in increasing order.
func (s *Set) AppendIDs(dst []int32) []int32 {
	switch {
	case s.all:
		for i := range s.n {
			dst = append(dst, int32(i))
		}
	case s.dense != nil:
		for j, w := range s.dense {
			for w != 0 {
				dst = append(dst, int32(j*64+bits.TrailingZeros64(w)))
				w &= w - 1
			}
		}
	default:
		dst = append(dst, s.ids...)
	}
	return dst
}

// CopyTo makes dst equal to s, resizing it to the vocabulary.
func (s *Set) CopyTo(dst *Bitset) {
	if s.dense != nil {
		dst.n = s.n
		dst.words = append(dst.words[:0], s.dense...)
		return
	}
	dst.reset(s.n)
	if s.all {
		for i := range dst.words {
			dst.words[i] = ^uint64(0)
		}
		if r := s.n & 63; r != 0 {
			dst.words[len(dst.words)-1] = 1<<uint(r) - 1
		}
		return
	}
	for _, id := range s.ids {
		dst.words[id>>6] |= 1 << (uint(id) & 63)
	}
}

// hasBit reports bit i of a bitset held as words.
func hasBit(b []uint64, i int32) bool { return b[i>>6]&(1<<(uint32(i)&63)) != 0 }

// setBit sets bit i of a bitset held as words.
func setBit(b []uint64, i int32) { b[i>>6] |= 1 << (uint32(i) & 63) }
