package gateway

import (
	"container/list"
	"sync"
	"time"
)

// passOwners remembers which identity made each response an upstream minted for a
// request passed to it (native.go): a later request may continue it
// (previous_response_id) only as that identity. In this process's memory, for the
// store's TTL, at most max ids (the oldest go first); a continuation on another
// gateway, or after that, is refused as a response the gateway does not know.
type passOwners struct {
	mu    sync.Mutex
	byID  map[string]*list.Element
	order *list.List // of passOwned, oldest first
	max   int
	ttl   time.Duration
	now   func() time.Time
}

type passOwned struct {
	id, owner string
	expires   time.Time
}

// defaultPassOwners bounds the ids kept: about 100 bytes each.
const defaultPassOwners = 100_000

func newPassOwners(max int, ttl time.Duration, now func() time.Time) *passOwners {
	return &passOwners{byID: map[string]*list.Element{}, order: list.New(), max: max, ttl: ttl, now: now}
}

// add records that owner made id.
func (p *passOwners) add(owner, id string) {
	if id == "" {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if e, ok := p.byID[id]; ok {
		p.order.Remove(e)
	}
	p.byID[id] = p.order.PushBack(passOwned{id: id, owner: owner, expires: p.now().Add(p.ttl)})
	for p.order.Len() > p.max {
		delete(p.byID, p.order.Remove(p.order.Front()).(passOwned).id)
	}
}

// owns reports whether owner made id, and it has not expired.
func (p *passOwners) owns(owner, id string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	e, ok := p.byID[id]
	if !ok {
		return false
	}
	o := e.Value.(passOwned)
	if p.now().After(o.expires) {
		p.order.Remove(e)
		delete(p.byID, id)
		return false
	}
	return o.owner == owner
}
