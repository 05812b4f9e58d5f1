package store

import (
	"container/heap"
	"os"
)

// fileHeap orders the entries for removal: the earliest to expire first; then the
// chain written to least recently; then descendants before ancestors.
type fileHeap []*fileEntry

func (h fileHeap) Len() int { return len(h) }
func (h fileHeap) Less(i, j int) bool {
	a, b := h[i], h[j]
	if a.eff != b.eff {
		return a.eff < b.eff
	}
	if a.touch != b.touch {
		return a.touch < b.touch
	}
	return a.seq > b.seq
}
func (h fileHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].hi, h[j].hi = i, j
}
func (h *fileHeap) Push(x any) {
	e := x.(*fileEntry)
	e.hi = len(*h)
	*h = append(*h, e)
}
func (h *fileHeap) Pop() any {
	old := *h
	e := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	e.hi = -1
	return e
}

func (f *File) parentOf(e *fileEntry) *fileEntry {
	if e.parent == "" {
		return nil
	}
	return f.idx[fileKey{e.key.owner, e.parent}]
}

// raise carries e's expiry and last write up its ancestors.
func (f *File) raise(e *fileEntry) {
	n := 0
	for p := f.parentOf(e); p != nil && n < maxWalk; p = f.parentOf(p) {
		if p.eff >= e.eff && p.touch >= e.touch {
			return
		}
		p.eff, p.touch = max(p.eff, e.eff), max(p.touch, e.touch)
		if p.hi >= 0 {
			heap.Fix(&f.order, p.hi)
		}
		e = p
		n++
	}
}

// remove drops e from the index and its file from the folder; a deleted parent left
// without descendants goes with it.
func (f *File) remove(e *fileEntry) {
	for n := 0; e != nil && n < maxWalk; n++ {
		if e.hi >= 0 {
			heap.Remove(&f.order, e.hi)
		}
		if f.idx[e.key] == e {
			delete(f.idx, e.key)
		}
		f.bytes -= e.size
		if e.path != "" {
			_ = os.Remove(e.path)
		}
		p := f.parentOf(e)
		if p == nil {
			return
		}
		p.kids--
		if !p.deleted || p.kids > 0 {
			return
		}
		e = p
	}
}

// expire removes the records past their time.
func (f *File) expire(now int64) {
	for len(f.order) > 0 && f.order[0].eff < now {
		f.remove(f.order[0])
	}
}

// makeRoom removes records until the bound holds, but not e or its ancestors; if they
// alone are past the bound, it removes e and reports false.
func (f *File) makeRoom(e *fileEntry) bool {
	pinned := map[*fileEntry]bool{e: true}
	for p, n := f.parentOf(e), 0; p != nil && n < maxWalk; p, n = f.parentOf(p), n+1 {
		pinned[p] = true
	}
	var held []*fileEntry
	for f.bytes > f.maxBytes && len(f.order) > 0 {
		if top := f.order[0]; pinned[top] {
			held = append(held, heap.Pop(&f.order).(*fileEntry))
		} else {
			f.remove(top)
		}
	}
	for _, h := range held {
		heap.Push(&f.order, h)
	}
	if f.bytes > f.maxBytes {
		f.remove(e)
		return false
	}
	return true
}
