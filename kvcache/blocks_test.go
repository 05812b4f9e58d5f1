package kvcache

import (
	"fmt"
	"math/rand"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// seq returns the tokens from..to inclusive.
func tokenRange(from, to int32) []int32 {
	out := make([]int32, 0, to-from+1)
	for t := from; t <= to; t++ {
		out = append(out, t)
	}
	return out
}

func joinTokens(parts ...[]int32) []int32 {
	var out []int32
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

func TestBlockCache_Defaults(t *testing.T) {
	c := NewBlockCache(BlockOptions{})
	if c.BlockSize() != 16 || c.capacity != 1<<16 {
		t.Errorf("block size %d, capacity %d; want 16, 65536", c.BlockSize(), c.capacity)
	}
}

func TestBlockCache_SharedPrefixIsOneChain(t *testing.T) {
	c := NewBlockCache(BlockOptions{BlockSize: 4})
	c.Insert("m", tokenRange(1, 10)) // thread A: blocks [1-4] [5-8]; 9, 10 are a partial block
	// Thread B shares 1..8, then diverges at a block boundary.
	b := joinTokens(tokenRange(1, 8), []int32{100, 101, 102})
	if got := c.Lookup("m", b); got != 8 {
		t.Errorf("thread B hit %d tokens, want 8", got)
	}
	c.Insert("m", b) // 11 tokens: two whole blocks, both already held
	if got := c.Stats().Blocks; got != 2 {
		t.Errorf("%d blocks after thread B, want 2: the shared prefix is one chain", got)
	}
	// Thread C extends A by a whole block.
	cc := tokenRange(1, 12)
	if got := c.Lookup("m", cc); got != 8 {
		t.Errorf("thread C before its insert hit %d, want 8", got)
	}
	c.Insert("m", cc)
	want := BlockStats{Lookups: 2, LookupTokens: 23, HitTokens: 16, Inserts: 3, NewBlocks: 3, Blocks: 3}
	if diff := cmp.Diff(want, c.Stats()); diff != "" {
		t.Errorf("stats (-want +got):\n%s", diff)
	}
}

func TestBlockCache_LookupWholeBlocksOnly(t *testing.T) {
	c := NewBlockCache(BlockOptions{BlockSize: 4})
	c.Insert("m", tokenRange(1, 12)) // [1-4] [5-8] [9-12]
	for _, tc := range []struct {
		name   string
		tokens []int32
		want   int
	}{
		{"diverges mid-block", joinTokens(tokenRange(1, 6), []int32{99}, tokenRange(8, 13)), 4},
		{"diverges at the first token", joinTokens([]int32{99}, tokenRange(2, 13)), 0},
		{"prompt longer than the cache", tokenRange(1, 20), 12},
		{"whole prompt cached: the last token is computed", tokenRange(1, 12), 8},
		{"one token past the cache", tokenRange(1, 13), 12},
		{"shorter than a block", tokenRange(1, 3), 0},
		{"empty", nil, 0},
	} {
		if got := c.Lookup("m", tc.tokens); got != tc.want {
			t.Errorf("%s: hit %d, want %d", tc.name, got, tc.want)
		}
	}
}

func TestBlockCache_NamespacesDoNotShare(t *testing.T) {
	c := NewBlockCache(BlockOptions{BlockSize: 2})
	c.Insert("qwen", tokenRange(1, 8))
	if got := c.Lookup("llama", tokenRange(1, 9)); got != 0 {
		t.Errorf("another namespace hit %d tokens", got)
	}
	if got := c.Lookup("qwen", tokenRange(1, 9)); got != 8 {
		t.Errorf("own namespace hit %d tokens, want 8", got)
	}
}

// Capacity 3 blocks of 2 tokens. The LRU order is written most recent first.
func TestBlockCache_EvictsChainTailsFirst(t *testing.T) {
	c := NewBlockCache(BlockOptions{BlockSize: 2, CapacityBlocks: 3})
	a, b, d := []int32{1, 2, 3, 4}, []int32{5, 6}, []int32{7, 8}
	c.Insert("m", a) // a0 a1
	c.Insert("m", b) // b0 a0 a1
	c.Insert("m", d) // full: evicts a1, the tail of A's chain, not its head → d0 b0 a0
	hits := func() [3]int {
		return [3]int{c.Lookup("m", joinTokens(a, []int32{9})), c.Lookup("m", joinTokens(b, []int32{9})), c.Lookup("m", joinTokens(d, []int32{9}))}
	}
	if got, want := hits(), [3]int{2, 2, 2}; got != want {
		t.Errorf("after inserting D: hits %v, want %v", got, want)
	}
	// A again: a0 is held and must survive making room for a1; b0 is least recent.
	c.Insert("m", a) // a0 a1 d0
	if got, want := hits(), [3]int{4, 0, 2}; got != want {
		t.Errorf("after inserting A again: hits %v, want %v", got, want)
	}
	if s := c.Stats(); s.Evictions != 2 || s.Blocks != 3 || s.NewBlocks != 5 {
		t.Errorf("stats %+v; want 2 evictions, 3 blocks, 5 new blocks", s)
	}
}

func TestBlockCache_LookupDoesNotRefresh(t *testing.T) {
	c := NewBlockCache(BlockOptions{BlockSize: 1, CapacityBlocks: 2})
	c.Insert("m", []int32{1})
	c.Insert("m", []int32{2})
	if got := c.Lookup("m", []int32{1, 0}); got != 1 {
		t.Fatalf("hit %d, want 1", got)
	}
	c.Insert("m", []int32{3}) // evicts [1], inserted first; the lookup did not count as use
	if got := c.Lookup("m", []int32{1, 0}); got != 0 {
		t.Errorf("[1] hit %d after eviction", got)
	}
	if got := c.Lookup("m", []int32{2, 0}); got != 1 {
		t.Errorf("[2] hit %d, want 1", got)
	}
}

func TestBlockCache_SequenceLongerThanCapacityKeepsItsHead(t *testing.T) {
	c := NewBlockCache(BlockOptions{BlockSize: 2, CapacityBlocks: 2})
	c.Insert("m", tokenRange(1, 6)) // three blocks, room for two
	if got := c.Lookup("m", tokenRange(1, 7)); got != 4 {
		t.Errorf("hit %d, want 4", got)
	}
	if s := c.Stats(); s.Blocks != 2 || s.Evictions != 0 {
		t.Errorf("stats %+v; want 2 blocks, no evictions", s)
	}
}

// Block size 1 is llama.cpp's reuse: any common prefix, less the last prompt token.
func TestBlockCache_BlockSizeOne(t *testing.T) {
	c := NewBlockCache(BlockOptions{BlockSize: 1})
	c.Insert("slot", []int32{5, 6, 7, 8})
	for _, tc := range []struct {
		tokens []int32
		want   int
	}{
		{[]int32{5, 6, 7, 9, 10}, 3},
		{[]int32{5, 6, 7, 8}, 3},
		{[]int32{5, 6, 7, 8, 1}, 4},
		{[]int32{6}, 0},
	} {
		if got := c.Lookup("slot", tc.tokens); got != tc.want {
			t.Errorf("Lookup(%v) = %d, want %d", tc.tokens, got, tc.want)
		}
	}
}

func TestBlockCache_CopiesTokens(t *testing.T) {
	c := NewBlockCache(BlockOptions{BlockSize: 2})
	p := tokenRange(1, 4)
	c.Insert("m", p)
	p[0] = 99
	if got := c.Lookup("m", tokenRange(1, 5)); got != 4 {
		t.Errorf("a later write to the caller's slice changed the cache: hit %d", got)
	}
}

// Whatever the traffic, no block outlives its parent: an orphan could never be hit and
// would only take room.
func TestBlockCache_NoOrphansUnderEviction(t *testing.T) {
	c := NewBlockCache(BlockOptions{BlockSize: 2, CapacityBlocks: 40})
	rng := rand.New(rand.NewSource(1))
	roots := map[uint64]bool{}
	for _, ns := range []string{"a", "b"} {
		roots[c.root(ns)] = true
	}
	for i := range 2000 {
		ns := []string{"a", "b"}[rng.Intn(2)]
		toks := make([]int32, rng.Intn(40))
		for j := range toks {
			toks[j] = int32(rng.Intn(3)) // few symbols: many shared prefixes
		}
		c.Insert(ns, toks)
		c.mu.Lock()
		for key, slot := range c.index {
			if p := c.nodes[slot].parent; !roots[p] {
				if _, ok := c.index[p]; !ok {
					c.mu.Unlock()
					t.Fatalf("insert %d: block %x outlived its parent %x", i, key, p)
				}
			}
		}
		n := 0
		for s := c.head; s >= 0; s = c.nodes[s].next {
			n++
		}
		c.mu.Unlock()
		if n != c.Stats().Blocks || n > 40 {
			t.Fatalf("insert %d: LRU list has %d blocks, index %d, capacity 40", i, n, c.Stats().Blocks)
		}
	}
}

func TestBlockCache_ConcurrentUse(t *testing.T) {
	c := NewBlockCache(BlockOptions{BlockSize: 4, CapacityBlocks: 64})
	shared := tokenRange(1, 40)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 100 {
				p := joinTokens(shared, []int32{int32(1000 + g), int32(i), 7, 7, 7, 7})
				c.Lookup(fmt.Sprint(g%2), p)
				c.Insert(fmt.Sprint(g%2), p)
			}
		}()
	}
	wg.Wait()
	s := c.Stats()
	if s.Lookups != 800 || s.Inserts != 800 || s.Blocks > 64 || s.HitTokens > s.LookupTokens {
		t.Errorf("stats %+v", s)
	}
}
