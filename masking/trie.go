package masking

import (
	"bytes"
	"slices"
)

// trie is a byte trie laid out breadth-first: the children of a node are
// contiguous and sorted by byte, so a lookup is a binary search over a small
// range and a walk never chases pointers.
type trie struct {
	label  []byte  // byte on the edge into the node (0 for the root)
	kidLo  []int32 // children of n are the nodes kidLo[n] .. kidHi[n]-1
	kidHi  []int32
	leafLo []int32 // the strings ending at n are order[leafLo[n]:leafHi[n]]
	leafHi []int32
	order  []int32 // the indexed string ids, sorted by their bytes
}

// buildTrie indexes strs[id] for each id in ids. Equal strings share a node
// and keep their relative order.
func buildTrie(strs [][]byte, ids []int32) *trie {
	order := slices.Clone(ids)
	slices.SortStableFunc(order, func(a, b int32) int { return bytes.Compare(strs[a], strs[b]) })
	t := &trie{order: order}
	type span struct{ node, lo, hi, depth int32 }
	t.add(0)
	queue := []span{{0, 0, int32(len(order)), 0}}
	for qi := 0; qi < len(queue); qi++ {
		sp := queue[qi]
		i := sp.lo
		for i < sp.hi && int32(len(strs[order[i]])) == sp.depth {
			i++
		}
		t.leafLo[sp.node], t.leafHi[sp.node] = sp.lo, i
		// All children of one node are allocated here, consecutively.
		t.kidLo[sp.node] = int32(len(t.label))
		for i < sp.hi {
			b := strs[order[i]][sp.depth]
			j := i + 1
			for j < sp.hi && strs[order[j]][sp.depth] == b {
				j++
			}
			queue = append(queue, span{t.add(b), i, j, sp.depth + 1})
			i = j
		}
		t.kidHi[sp.node] = int32(len(t.label))
	}
	return t
}

func (t *trie) add(b byte) int32 {
	t.label = append(t.label, b)
	t.kidLo = append(t.kidLo, 0)
	t.kidHi = append(t.kidHi, 0)
	t.leafLo = append(t.leafLo, 0)
	t.leafHi = append(t.leafHi, 0)
	return int32(len(t.label) - 1)
}

// child returns the child of n along b, or -1.
func (t *trie) child(n int32, b byte) int32 {
	lo, hi := t.kidLo[n], t.kidHi[n]
	end := hi
	for lo < hi {
		m := int32(uint32(lo+hi) >> 1)
		if t.label[m] < b {
			lo = m + 1
		} else {
			hi = m
		}
	}
	if lo < end && t.label[lo] == b {
		return lo
	}
	return -1
}

func (t *trie) leaf(n int32) bool { return t.leafHi[n] > t.leafLo[n] }

func (t *trie) nodes() int { return len(t.label) }
