package planner

import (
	"bytes"
	"container/list"
	"hash/maphash"
	"sync"

	"github.com/maskgate/maskgate/backends/oai"
)

// KnownTools remembers, per caller, the tools arrays the envelope scan has validated, so
// that the same bytes sent again are compared (memcmp speed) rather than scanned (about
// 1 GB/s): agents resend their tools array byte for byte every turn, and on a pass-through
// request its scan was most of the gateway's own work.
//
// An entry is looked up by a hash of the array's first bytes (the scan does not yet know
// where the array ends) and the caller, and it decides only when the request's bytes
// begin with the whole remembered array, compared byte for byte. It holds its own copy.
// Bounded by entries and bytes; the least recently used go first.
type KnownTools struct {
	mu    sync.Mutex
	seed  maphash.Seed
	items map[uint64][]*list.Element // several arrays may share their first bytes
	order *list.List                 // most recent first
	bytes int64
}

type knownEntry struct {
	key   uint64
	scope string
	raw   []byte
	elems int
}

const (
	// knownMin is the smallest array worth remembering: below it the scan is cheap.
	knownMin = 4 << 10
	// knownHead is how many of an array's first bytes its key hashes.
	knownHead       = 256
	maxKnownEntries = 1024
	maxKnownBytes   = 64 << 20
	maxKnownPerKey  = 4
)

func (k *KnownTools) key(scope string, b []byte) uint64 {
	var h maphash.Hash
	h.SetSeed(k.seed)
	h.WriteString(scope)
	h.WriteByte(0)
	h.Write(b[:min(len(b), knownHead)])
	return h.Sum64()
}

// ForCaller is the oai.Known of the requests of the caller named caller ("" for an
// anonymous one).
func (k *KnownTools) ForCaller(caller string) oai.Known { return knownScope{k, caller} }

type knownScope struct {
	k     *KnownTools
	scope string
}

func (s knownScope) Match(b []byte) (int, int, bool) {
	k := s.k
	if len(b) < knownMin {
		return 0, 0, false
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.items == nil {
		return 0, 0, false
	}
	for _, el := range k.items[k.key(s.scope, b)] {
		e := el.Value.(*knownEntry)
		if e.scope == s.scope && bytes.HasPrefix(b, e.raw) {
			k.order.MoveToFront(el)
			return len(e.raw), e.elems, true
		}
	}
	return 0, 0, false
}

func (s knownScope) Remember(v []byte, elems int) {
	k := s.k
	if len(v) < knownMin || int64(len(v)) > maxKnownBytes/8 {
		return
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.items == nil {
		k.seed, k.items, k.order = maphash.MakeSeed(), map[uint64][]*list.Element{}, list.New()
	}
	key := k.key(s.scope, v)
	bucket := k.items[key]
	for _, el := range bucket {
		if e := el.Value.(*knownEntry); e.scope == s.scope && bytes.Equal(e.raw, v) {
			return // two requests raced to scan it
		}
	}
	if len(bucket) == maxKnownPerKey {
		k.remove(bucket[len(bucket)-1])
	}
	e := &knownEntry{key: key, scope: s.scope, raw: bytes.Clone(v), elems: elems}
	k.items[key] = append(k.items[key], k.order.PushFront(e))
	k.bytes += int64(len(e.raw))
	for k.order.Len() > maxKnownEntries || k.bytes > maxKnownBytes {
		k.remove(k.order.Back())
	}
}

// remove drops the entry at el; the caller holds mu.
func (k *KnownTools) remove(el *list.Element) {
	e := el.Value.(*knownEntry)
	k.order.Remove(el)
	k.bytes -= int64(len(e.raw))
	bucket := k.items[e.key]
	for i, x := range bucket {
		if x == el {
			bucket = append(bucket[:i:i], bucket[i+1:]...)
			break
		}
	}
	if len(bucket) == 0 {
		delete(k.items, e.key)
	} else {
		k.items[e.key] = bucket
	}
}
