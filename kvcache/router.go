package kvcache

import (
	"container/list"
	"fmt"
	"sort"
	"sync"
)

// Router defaults, used where RouterOptions leaves a field zero.
const (
	// DefaultBalanceAbs and DefaultBalanceRel follow SGLang's router, whose cache-aware
	// policy leaves cache affinity only when the load gap is both larger than an
	// absolute count and larger than a ratio: a few extra requests in flight cost less
	// than recomputing a catalog prefix of tens of thousands of tokens elsewhere.
	DefaultBalanceAbs = 32
	DefaultBalanceRel = 1.5
	// DefaultRouterThreads bounds the thread → replica memory.
	DefaultRouterThreads = 1 << 16
)

// RouterOptions configure a Router. The zero value of each field is its default.
type RouterOptions struct {
	// BalanceAbs and BalanceRel decide when load outweighs cache affinity: the preferred
	// replica is passed over for the least loaded healthy one only when its requests in
	// flight exceed that replica's by more than BalanceAbs and also by more than
	// BalanceRel times. Equal to either threshold is still balanced. If zero,
	// DefaultBalanceAbs and DefaultBalanceRel; a negative BalanceAbs means 0 (any gap
	// counts) and a BalanceRel under 1 means 1.
	BalanceAbs int
	BalanceRel float64
	// Threads is how many threads the router remembers the replica of, least recently
	// served first out. If zero, DefaultRouterThreads.
	Threads int
}

// Route reasons, in Route.Why. They are few and fixed, so they fit a metric label.
const (
	RouteThread      = "thread"       // the replica that served the thread last
	RoutePrefix      = "prefix"       // the prefix's (or, without one, the thread's) home replica
	RouteBalance     = "balance"      // the home was too loaded; the least loaded instead
	RouteLeastLoaded = "least_loaded" // no key to route on
	RouteAllDown     = "all_down"     // no replica is marked up; every one is tried anyway
)

// Route is the router's answer for one request.
type Route struct {
	// Order lists every replica, by index, in the order to try them: the chosen one,
	// then the other healthy ones in the key's rendezvous order, then the ones marked
	// down (their mark may be stale, and trying them beats failing outright).
	Order []int
	// Why the first one was chosen: one of the Route… constants.
	Why string
}

// Router picks, among a fixed set of replicas of one model, the one most likely to hold
// a request's prompt prefix in its KV cache, without letting one replica drown.
//
// A request carries two keys. The prefix names the bytes that many conversations
// share — under strategy mask, the profile's catalog — so every session of a profile
// goes to the prefix's home replica and the catalog is prefilled once per replica that
// serves it, not once per session. The home is chosen by rendezvous (highest random
// weight) hashing over the replicas' IDs, so it does not depend on their order, and
// when a replica goes down or is removed only the keys it was home to move. The thread
// names one conversation: a thread sticks to the replica that served it last (which
// holds the prefix and the conversation after it), as long as that replica is up, has
// not been down since, and the thread's prefix has not changed. Without a prefix the
// thread itself is hashed to a home.
//
// Load is the number of requests in flight per replica (Acquire/Release). When the
// preferred replica's load exceeds the least loaded healthy replica's by more than
// both thresholds (RouterOptions.BalanceAbs and BalanceRel, as in SGLang's router),
// the request goes to the least loaded one instead.
//
// A Router is safe for concurrent use.
type Router struct {
	opt RouterOptions
	ids []string

	mu      sync.Mutex
	load    []int
	down    []bool
	epoch   []uint64 // bumped on each MarkDown: a thread served before it may find a cold cache
	threads routerThreads
	turn    uint64 // rotates keyless requests over equally loaded replicas
}

// NewRouter returns a router over the replicas with these IDs, all marked up. An ID
// should be stable across restarts and machines (a URL, say): it decides which keys a
// replica is home to. Indexes in Route.Order and the other methods are positions in ids.
func NewRouter(ids []string, o RouterOptions) (*Router, error) {
	if len(ids) == 0 {
		return nil, fmt.Errorf("kvcache: a router needs at least one replica")
	}
	seen := make(map[string]bool, len(ids))
	for _, id := range ids {
		if seen[id] {
			return nil, fmt.Errorf("kvcache: replica ID %q appears twice", id)
		}
		seen[id] = true
	}
	switch {
	case o.BalanceAbs == 0:
		o.BalanceAbs = DefaultBalanceAbs
	case o.BalanceAbs < 0:
		o.BalanceAbs = 0
	}
	switch {
	case o.BalanceRel == 0:
		o.BalanceRel = DefaultBalanceRel
	case o.BalanceRel < 1:
		o.BalanceRel = 1
	}
	if o.Threads <= 0 {
		o.Threads = DefaultRouterThreads
	}
	n := len(ids)
	return &Router{
		opt:     o,
		ids:     append([]string(nil), ids...),
		load:    make([]int, n),
		down:    make([]bool, n),
		epoch:   make([]uint64, n),
		threads: routerThreads{max: o.Threads, byID: map[string]*list.Element{}},
	}, nil
}

// Len is the number of replicas.
func (r *Router) Len() int { return len(r.ids) }

// Pick routes one request by its prefix and thread; either may be empty.
func (r *Router) Pick(prefix, thread string) Route {
	r.mu.Lock()
	defer r.mu.Unlock()

	key := prefix
	if key == "" {
		key = thread
	}
	var order []int
	if key != "" {
		order = r.rendezvous(key)
	} else {
		order = r.rotation()
	}
	healthy := make([]int, 0, len(order))
	var down []int
	for _, i := range order {
		if r.down[i] {
			down = append(down, i)
		} else {
			healthy = append(healthy, i)
		}
	}
	if len(healthy) == 0 {
		return Route{Order: order, Why: RouteAllDown}
	}

	pick, why := -1, ""
	if thread != "" {
		if e, ok := r.threads.get(thread); ok && e.prefix == prefix && !r.down[e.replica] && e.epoch == r.epoch[e.replica] {
			pick, why = e.replica, RouteThread
		}
	}
	if pick < 0 && key != "" {
		pick, why = healthy[0], RoutePrefix
	}
	least := healthy[0] // ties go to the earliest in the key's order
	for _, i := range healthy[1:] {
		if r.load[i] < r.load[least] {
			least = i
		}
	}
	switch {
	case pick < 0:
		pick, why = least, RouteLeastLoaded
	case pick != least && r.imbalanced(r.load[pick], r.load[least]):
		pick, why = least, RouteBalance
	}

	out := make([]int, 0, len(order))
	out = append(out, pick)
	for _, i := range healthy {
		if i != pick {
			out = append(out, i)
		}
	}
	return Route{Order: append(out, down...), Why: why}
}

// imbalanced says whether a replica with load pref should yield to one with load min.
func (r *Router) imbalanced(pref, min int) bool {
	return pref-min > r.opt.BalanceAbs && float64(pref) > float64(min)*r.opt.BalanceRel
}

// rendezvous orders every replica by its weight for key, heaviest first.
func (r *Router) rendezvous(key string) []int {
	type ranked struct {
		i int
		w uint64
	}
	rs := make([]ranked, len(r.ids))
	for i, id := range r.ids {
		rs[i] = ranked{i, rendezvousWeight(id, key)}
	}
	sort.Slice(rs, func(a, b int) bool {
		if rs[a].w != rs[b].w {
			return rs[a].w > rs[b].w
		}
		return rs[a].i < rs[b].i
	})
	out := make([]int, len(rs))
	for n, x := range rs {
		out[n] = x.i
	}
	return out
}

// rotation orders the replicas starting one further on each call, so keyless requests
// on an idle set do not all land on the first replica.
func (r *Router) rotation() []int {
	n := len(r.ids)
	start := int(r.turn % uint64(n))
	r.turn++
	out := make([]int, n)
	for k := range out {
		out[k] = (start + k) % n
	}
	return out
}

// rendezvousWeight is a 64-bit hash of (replica, key): FNV-1a over the ID's length (so
// that ("ab","c") and ("a","bc") differ), the ID and the key, then a finalizer that spreads
// FNV's weak high bits. It is a pure function of its input, so every gateway in front of the same
// replicas agrees on each key's home.
func rendezvousWeight(id, key string) uint64 {
	const offset, prime = 14695981039346656037, 1099511628211
	h := uint64(offset)
	for n, k := uint64(len(id)), 0; k < 8; n, k = n>>8, k+1 {
		h = (h ^ (n & 0xff)) * prime
	}
	for i := 0; i < len(id); i++ {
		h = (h ^ uint64(id[i])) * prime
	}
	for i := 0; i < len(key); i++ {
		h = (h ^ uint64(key[i])) * prime
	}
	h ^= h >> 30
	h *= 0xbf58476d1ce4e5b9
	h ^= h >> 27
	h *= 0x94d049bb133111eb
	h ^= h >> 31
	return h
}

// Served records that replica i answered thread (with prefix), so the thread's next
// request goes back there while it stays up. An empty thread is not recorded.
func (r *Router) Served(thread, prefix string, i int) {
	if thread == "" || i < 0 || i >= len(r.ids) {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.threads.put(thread, threadEntry{replica: i, prefix: prefix, epoch: r.epoch[i]})
}

// Acquire counts one more request in flight on replica i; Release ends it.
func (r *Router) Acquire(i int) {
	r.mu.Lock()
	r.load[i]++
	r.mu.Unlock()
}

// Release counts one request on replica i as finished.
func (r *Router) Release(i int) {
	r.mu.Lock()
	if r.load[i] > 0 {
		r.load[i]--
	}
	r.mu.Unlock()
}

// Load is the number of requests in flight on replica i.
func (r *Router) Load(i int) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.load[i]
}

// MarkDown takes replica i out of routing until MarkUp. Threads it served go elsewhere
// from now on, even after it comes back: it may have restarted with an empty cache.
// It reports whether the replica was up.
func (r *Router) MarkDown(i int) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	was := !r.down[i]
	if was {
		r.down[i] = true
		r.epoch[i]++
	}
	return was
}

// MarkUp puts replica i back into routing. It reports whether the replica was down.
func (r *Router) MarkUp(i int) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	was := r.down[i]
	r.down[i] = false
	return was
}

// Healthy says whether replica i is marked up.
func (r *Router) Healthy(i int) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return !r.down[i]
}

// threadEntry is where a thread was served last.
type threadEntry struct {
	replica int
	prefix  string
	epoch   uint64 // the replica's epoch then
}

// routerThreads is a bounded LRU of thread → threadEntry. The Router's mutex guards it.
type routerThreads struct {
	max  int
	lru  list.List // of *threadItem; front is the most recently served
	byID map[string]*list.Element
}

type threadItem struct {
	thread string
	threadEntry
}

func (t *routerThreads) get(thread string) (threadEntry, bool) {
	el, ok := t.byID[thread]
	if !ok {
		return threadEntry{}, false
	}
	t.lru.MoveToFront(el)
	return el.Value.(*threadItem).threadEntry, true
}

func (t *routerThreads) put(thread string, e threadEntry) {
	if el, ok := t.byID[thread]; ok {
		el.Value.(*threadItem).threadEntry = e
		t.lru.MoveToFront(el)
		return
	}
	t.byID[thread] = t.lru.PushFront(&threadItem{thread: thread, threadEntry: e})
	for t.lru.Len() > t.max {
		old := t.lru.Back()
		t.lru.Remove(old)
		delete(t.byID, old.Value.(*threadItem).thread)
	}
}
