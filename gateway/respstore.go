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
	// shared counts the stored responses that hold each message (by its first byte): a
	// chain's responses share their history's messages, so each is counted once, while
	// any response holds it, rather than once per response (quadratic in the turns).
	shared map[*byte]int
}

func newResponseStore(maxBytes int64, ttl time.Duration, now func() time.Time) *responseStore {
	return &responseStore{byID: map[string]*storedResponse{}, order: list.New(), maxBytes: maxBytes, ttl: ttl, now: now,
		shared: map[*byte]int{}}
}

// ownSize is what a stored response counts against the bound besides its messages.
func ownSize(r *storedResponse) int64 {
	return int64(len(r.body) + len(r.id) + len(r.owner) + len(r.thread) + 24*(len(r.history)+len(r.loaded)) + 64)
}

// messages are the shared parts of r: its history and the tools its chain loaded.
func (r *storedResponse) messages(visit func(m json.RawMessage)) {
	for _, m := range r.history {
		visit(m)
	}
	for _, m := range r.loaded {
		visit(m)
	}
}

// hold counts r's messages in, adding those no stored response held yet to the bytes.
func (st *responseStore) hold(r *storedResponse) {
	st.bytes += r.size
	r.messages(func(m json.RawMessage) {
		if len(m) == 0 {
			return
		}
		if st.shared[&m[0]]++; st.shared[&m[0]] == 1 {
			st.bytes += int64(len(m))
		}
	})
}

// release is hold undone.
func (st *responseStore) release(r *storedResponse) {
	st.bytes -= r.size
	r.messages(func(m json.RawMessage) {
		if len(m) == 0 {
			return
		}
		if st.shared[&m[0]]--; st.shared[&m[0]] == 0 {
			delete(st.shared, &m[0])
			st.bytes -= int64(len(m))
		}
	})
}

// put keeps r, evicting the oldest responses until the bound holds. A response larger
// than the whole bound is not kept.
func (st *responseStore) put(r *storedResponse) bool {
	r.size = ownSize(r)
	whole := r.size
	r.messages(func(m json.RawMessage) { whole += int64(len(m)) })
	if whole > st.maxBytes {
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
	st.hold(r)
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
	st.release(r)
}
