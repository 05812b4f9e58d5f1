package kvcache

import (
	"encoding/binary"
	"hash/maphash"
	"slices"
	"sync"
)

// DefaultBlockSize is the block size of a BlockCache whose BlockSize is zero: vLLM's
// default (--block-size 16). SGLang's radix cache and llama.cpp reuse any prefix length:
// model them with BlockSize 1.
const DefaultBlockSize = 16

// DefaultBlockCapacity is the capacity of a BlockCache whose CapacityBlocks is zero:
// 65,536 blocks, 1,048,576 tokens at the default block size — about what an H200 holds
// for an 8B model (128 KiB of KV per token) after its weights.
const DefaultBlockCapacity = 1 << 16

// BlockOptions configure a BlockCache. The zero value of each field is its default.
type BlockOptions struct {
	// BlockSize is the number of tokens per block. An engine caches and reuses whole
	// blocks only, so a prefix shared up to the middle of a block is shared up to the
	// start of that block. If zero, DefaultBlockSize.
	//
	// For llama.cpp, use 1: a slot reuses its cached tokens up to the first one that
	// differs, whatever the length. Its capacity is then the slots' total context
	// (n_ctx), and the model is optimistic where the engine keeps one sequence per slot:
	// two threads that alternate on one slot evict each other there and not here.
	BlockSize int
	// CapacityBlocks bounds the blocks held over all namespaces; the least recently used
	// go first. If zero, DefaultBlockCapacity.
	CapacityBlocks int
}

// BlockCache models an engine's token-level prefix cache, the way vLLM's automatic
// prefix caching works: a prompt is split into blocks of BlockSize tokens and each whole
// block is keyed by a hash of its parent block's key and its own tokens. A key so names a
// block's entire prefix, and the prefix that many threads of a profile share (system
// prompt, tools) is one chain of blocks however many threads extend it.
//
// Keys start from a namespace (a model, or an engine replica) so that namespaces never
// share blocks. A hit is verified against the stored tokens, so a hash collision costs
// a miss, never a wrong answer. Eviction is least recently used over all namespaces, and
// a block is always used more recently than any block after it in a chain, so the tail
// of a chain goes before its head and no block outlives its parent (vLLM frees a
// request's blocks in reverse order for the same reason).
//
// What it answers is an estimate: the engine may hold less (other traffic, preemption)
// or block differently. It is safe for concurrent use.
type BlockCache struct {
	bs, capacity int
	seed         maphash.Seed

	mu    sync.Mutex
	index map[uint64]int32 // block key → slot
	nodes []blockNode      // slots; grows to capacity, then slots are reused
	toks  []int32          // slot i's tokens are toks[i*bs : (i+1)*bs]
	head  int32            // most recently used slot, or -1
	tail  int32            // least recently used slot, or -1
	buf   []byte           // hashing scratch
	path  []int32          // Insert scratch: the chain's slots
	stats BlockStats
}

type blockNode struct {
	key, parent uint64
	prev, next  int32 // towards head, towards tail; -1 at the ends
}

// BlockStats are a BlockCache's counters since it was made.
type BlockStats struct {
	// Lookups is the number of Lookup calls; LookupTokens the tokens they asked about
	// and HitTokens the tokens they found cached.
	Lookups, LookupTokens, HitTokens int64
	// Inserts is the number of Insert calls, NewBlocks the blocks they added and
	// Evictions the blocks they evicted to make room.
	Inserts, NewBlocks, Evictions int64
	// Blocks is the number of blocks held now.
	Blocks int
}

// NewBlockCache returns an empty cache.
func NewBlockCache(o BlockOptions) *BlockCache {
	if o.BlockSize <= 0 {
		o.BlockSize = DefaultBlockSize
	}
	if o.CapacityBlocks <= 0 {
		o.CapacityBlocks = DefaultBlockCapacity
	}
	return &BlockCache{
		bs:       o.BlockSize,
		capacity: o.CapacityBlocks,
		seed:     maphash.MakeSeed(),
		index:    make(map[uint64]int32),
		head:     -1,
		tail:     -1,
	}
}

// BlockSize is the cache's block size in tokens.
func (c *BlockCache) BlockSize() int { return c.bs }

// Lookup returns how many leading tokens of tokens the cache holds for namespace ns:
// whole blocks only, and never all of tokens, since an engine computes at least the
// last prompt token to get logits (vLLM caps a hit at len−1 tokens before rounding down
// to blocks; llama.cpp steps back one token). A 32-token prompt fully cached at block
// size 16 so hits 16 tokens. Lookup does not change what is cached or its recency.
func (c *BlockCache) Lookup(ns string, tokens []int32) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	hit := 0
	if len(tokens) > 0 {
		parent := c.root(ns)
		for i := range (len(tokens) - 1) / c.bs {
			block := tokens[i*c.bs : (i+1)*c.bs]
			key := c.hash(parent, block)
			if _, ok := c.find(key, parent, block); !ok {
				break
			}
			parent = key
			hit += c.bs
		}
	}
	c.stats.Lookups++
	c.stats.LookupTokens += int64(len(tokens))
	c.stats.HitTokens += int64(hit)
	return hit
}

// Insert records that the engine has computed tokens for ns (a prompt, or a prompt and
// its answer), so their whole blocks are now cached, and marks every block of the chain
// as just used. A trailing partial block is not cached. A sequence longer than the
// whole capacity keeps its first CapacityBlocks blocks. tokens is copied.
func (c *BlockCache) Insert(ns string, tokens []int32) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.stats.Inserts++
	n := min(len(tokens)/c.bs, c.capacity)
	c.path = c.path[:0]
	parent := c.root(ns)
	protected := false
	for i := range n {
		block := tokens[i*c.bs : (i+1)*c.bs]
		key := c.hash(parent, block)
		slot, ok := c.find(key, parent, block)
		if !ok {
			if _, taken := c.index[key]; taken {
				break // a collision with another block: leave the rest uncached
			}
			if !protected {
				// The blocks held so far become the most recent, so that making room
				// for the new ones cannot evict them.
				c.touchReverse()
				protected = true
			}
			slot = c.alloc()
			c.nodes[slot].key, c.nodes[slot].parent = key, parent
			copy(c.toks[int(slot)*c.bs:], block)
			c.index[key] = slot
			c.pushFront(slot)
			c.stats.NewBlocks++
		}
		c.path = append(c.path, slot)
		parent = key
	}
	c.touchReverse()
}

// Stats returns the cache's counters.
func (c *BlockCache) Stats() BlockStats {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.stats
	s.Blocks = len(c.index)
	return s
}

// touchReverse moves the chain in c.path to the front, last block first, so that the
// chain's head ends up most recent.
func (c *BlockCache) touchReverse() {
	for i := len(c.path) - 1; i >= 0; i-- {
		c.unlink(c.path[i])
		c.pushFront(c.path[i])
	}
}

// root is the parent key of a namespace's first block.
func (c *BlockCache) root(ns string) uint64 { return maphash.String(c.seed, ns) }

func (c *BlockCache) hash(parent uint64, block []int32) uint64 {
	b := binary.LittleEndian.AppendUint64(c.buf[:0], parent)
	for _, t := range block {
		b = binary.LittleEndian.AppendUint32(b, uint32(t))
	}
	c.buf = b
	return maphash.Bytes(c.seed, b)
}

// find returns the slot holding block after parent, if one does.
func (c *BlockCache) find(key, parent uint64, block []int32) (int32, bool) {
	slot, ok := c.index[key]
	if !ok || c.nodes[slot].parent != parent ||
		!slices.Equal(c.toks[int(slot)*c.bs:(int(slot)+1)*c.bs], block) {
		return 0, false
	}
	return slot, true
}

// alloc returns an unlinked slot: a new one below capacity, else the least recently
// used block's, evicted.
func (c *BlockCache) alloc() int32 {
	if len(c.nodes) < c.capacity {
		c.nodes = append(c.nodes, blockNode{prev: -1, next: -1})
		c.toks = append(c.toks, make([]int32, c.bs)...)
		return int32(len(c.nodes) - 1)
	}
	slot := c.tail
	c.unlink(slot)
	delete(c.index, c.nodes[slot].key)
	c.stats.Evictions++
	return slot
}

func (c *BlockCache) unlink(s int32) {
	n := &c.nodes[s]
	if n.prev >= 0 {
		c.nodes[n.prev].next = n.next
	} else if c.head == s {
		c.head = n.next
	}
	if n.next >= 0 {
		c.nodes[n.next].prev = n.prev
	} else if c.tail == s {
		c.tail = n.prev
	}
	n.prev, n.next = -1, -1
}

func (c *BlockCache) pushFront(s int32) {
	n := &c.nodes[s]
	n.prev, n.next = -1, c.head
	if c.head >= 0 {
		c.nodes[c.head].prev = s
	}
	c.head = s
	if c.tail < 0 {
		c.tail = s
	}
}
