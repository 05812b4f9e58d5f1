package gateway

import (
	"container/list"
	"encoding/json"
	"sync"
	"time"
)

// storedResponse is one answer of the Responses door kept for previous_response_id and
// GET /v1/responses/{id}.
type storedResponse struct {
	id    string
	owner string // the caller's identity: nobody else reads or continues it
	// body is the response object as the client got it.
	body []byte
	// history is the conversation through this response as the engine saw it: every
	// earlier turn's chat messages, this request's, and the answer's. A continuation
	// puts its own input after it, so the engine's prompt only grows at the end.
	history []json.RawMessage
	// thread names the chain's conversation: the first response's id, or the
	// prompt_cache_key it was made under.
	thread string
	// loaded are the tool definitions the chain's tool searches loaded, raw.
	loaded  []json.RawMessage
	size    int64
	expires time.Time
	elem    *list.Element
}

// responseStore keeps stored responses per identity, for a time and within a byte
// bound; the oldest go first when the bound is reached.
type responseStore struct {
	mu       sync.Mutex
	byID     map[string]*storedResponse
	order    *list.List // oldest first
	bytes    int64
	maxBytes int64
	ttl      time.Duration
	now      func() time.Time
}

func newResponseStore(maxBytes int64, ttl time.Duration, now func() time.Time) *responseStore {
	return &responseStore{byID: map[string]*storedResponse{}, order: list.New(), maxBytes: maxBytes, ttl: ttl, now: now}
}

// sizeOf is what a stored response counts against the bound: its bytes and its
// history's (shared with the response it continues, but counted again: the bound is an
// upper one).
func sizeOf(r *storedResponse) int64 {
	n := int64(len(r.body) + len(r.id) + len(r.owner) + len(r.thread) + 64)
	for _, m := range r.history {
		n += int64(len(m)) + 24
	}
	for _, t := range r.loaded {
		n += int64(len(t)) + 24
	}
	return n
}

// put keeps r, evicting the oldest responses until the bound holds. A response larger
// than the whole bound is not kept.
func (st *responseStore) put(r *storedResponse) bool {
	r.size = sizeOf(r)
	if r.size > st.maxBytes {
		return false
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	if old, ok := st.byID[r.id]; ok {
		st.remove(old)
	}
	now := st.now()
	// One TTL for all: the oldest expire first.
	for e := st.order.Front(); e != nil && now.After(e.Value.(*storedResponse).expires); e = st.order.Front() {
		st.remove(e.Value.(*storedResponse))
	}
	r.expires = now.Add(st.ttl)
	r.elem = st.order.PushBack(r)
	st.byID[r.id] = r
	st.bytes += r.size
	for st.bytes > st.maxBytes {
		st.remove(st.order.Front().Value.(*storedResponse))
	}
	return true
}

// get returns the response id if owner may read it and it has not expired. A response
// of another identity is as absent as one never made.
func (st *responseStore) get(owner, id string) (*storedResponse, bool) {
	st.mu.Lock()
	defer st.mu.Unlock()
	r, ok := st.byID[id]
	if !ok || r.owner != owner {
		return nil, false
	}
	if st.now().After(r.expires) {
		st.remove(r)
		return nil, false
	}
	return r, true
}

// delete removes id if owner may; it reports whether there was such a response.
func (st *responseStore) delete(owner, id string) bool {
	st.mu.Lock()
	defer st.mu.Unlock()
	r, ok := st.byID[id]
	if !ok || r.owner != owner {
		return false
	}
	st.remove(r)
	return true
}

// size is the bytes held, for tests and metrics.
func (st *responseStore) size() int64 {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.bytes
}

func (st *responseStore) remove(r *storedResponse) {
	st.order.Remove(r.elem)
	delete(st.byID, r.id)
	st.bytes -= r.size
}
