package respstore

import (
	"container/list"
	"context"
	"encoding/json"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/maskgate/maskgate/backends"
	"github.com/maskgate/maskgate/gateway/store"
)

// Response is one answer of the Responses door kept for previous_response_id and
// GET /v1/responses/{id}.
type Response struct {
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
	loaded []json.RawMessage
	// input is the request's input items as the gateway read them (references resolved),
	// for GET /v1/responses/{id}/input_items: this response's own, not its chain's.
	input   []json.RawMessage
	size    int64
	expires time.Time
	elem    *list.Element
	// depth is, for a records-backed store, how many records its stored chain has
	// through it; 0 while it is not stored there. Its socket's next turn may read it
	// while the store is being written, hence atomic.
	depth atomic.Int32
}

// NewResponse is a response to keep: id, its owner (the caller's identity: nobody else
// reads or continues it), the response object as the client got it, the conversation
// through it as the engine saw it, its chain's thread and the tools its searches loaded.
func NewResponse(id, owner string, body []byte, history []json.RawMessage, thread string, loaded []json.RawMessage) *Response {
	return &Response{id: id, owner: owner, body: body, history: history, thread: thread, loaded: loaded}
}

// WithInput gives r the request's input items (see Input) and returns it.
func (r *Response) WithInput(items []json.RawMessage) *Response {
	r.input = items
	return r
}

// Input is the request's input items, raw, as the gateway read them.
func (r *Response) Input() []json.RawMessage { return r.input }

// ID is the response's id.
func (r *Response) ID() string { return r.id }

// Body is the response object as the client got it.
func (r *Response) Body() []byte { return r.body }

// History is the conversation through the response, as the engine saw it.
func (r *Response) History() []json.RawMessage { return r.history }

// Thread names the response's chain's conversation.
func (r *Response) Thread() string { return r.thread }

// Loaded are the tool definitions the chain's tool searches loaded.
func (r *Response) Loaded() []json.RawMessage { return r.loaded }

// Store keeps stored responses per identity, for a time and within a byte
// bound; the oldest go first when the bound is reached.
type Store struct {
	mu       sync.Mutex
	byID     map[string]*Response
	order    *list.List // oldest first
	bytes    int64
	maxBytes int64
	ttl      time.Duration
	now      func() time.Time
	// shared counts the stored responses that hold each message (by its first byte): a
	// chain's responses share their history's messages, so each is counted once, while
	// any response holds it, rather than once per response (quadratic in the turns).
	shared map[*byte]int
	// records, once SetResponseRecords sets it, is where stored responses live instead.
	records *records
}

// New is a Store in memory of at most maxBytes (none when not positive), each response
// kept for ttl by the clock now.
func New(maxBytes int64, ttl time.Duration, now func() time.Time) *Store {
	return &Store{byID: map[string]*Response{}, order: list.New(), maxBytes: maxBytes, ttl: ttl, now: now,
		shared: map[*byte]int{}}
}

// ownSize is what a stored response counts against the bound besides its messages.
func ownSize(r *Response) int64 {
	n := len(r.body) + len(r.id) + len(r.owner) + len(r.thread) + 24*(len(r.history)+len(r.loaded)+len(r.input)) + 64
	for _, m := range r.input {
		n += len(m)
	}
	return int64(n)
}

// messages are the shared parts of r: its history and the tools its chain loaded.
func (r *Response) messages(visit func(m json.RawMessage)) {
	for _, m := range r.history {
		visit(m)
	}
	for _, m := range r.loaded {
		visit(m)
	}
}

// hold counts r's messages in, adding those no stored response held yet to the bytes.
func (st *Store) hold(r *Response) {
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
func (st *Store) release(r *Response) {
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
func (st *Store) put(r *Response) bool {
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
	for e := st.order.Front(); e != nil && now.After(e.Value.(*Response).expires); e = st.order.Front() {
		st.remove(e.Value.(*Response))
	}
	r.expires = now.Add(st.ttl)
	r.elem = st.order.PushBack(r)
	st.byID[r.id] = r
	st.hold(r)
	for st.bytes > st.maxBytes {
		st.remove(st.order.Front().Value.(*Response))
	}
	return true
}

// get returns the response id if owner may read it and it has not expired. A response
// of another identity is as absent as one never made.
func (st *Store) get(owner, id string) (*Response, bool) {
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
func (st *Store) delete(owner, id string) bool {
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
func (st *Store) size() int64 {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.bytes
}

func (st *Store) remove(r *Response) {
	st.order.Remove(r.elem)
	delete(st.byID, r.id)
	st.release(r)
}

// Keeper is where the Responses door keeps stored responses: this process's
// Store, or records that gateways share and that outlives them.
type Keeper interface {
	// Load returns owner's response id, whole, or nil when owner has none that can be
	// continued.
	Load(ctx context.Context, owner, id string) (*Response, error)
	// Body returns the response object of owner's response id; false when there is
	// none.
	Body(ctx context.Context, owner, id string) ([]byte, bool, error)
	// Input returns the input items of owner's response id; false when there is none.
	Input(ctx context.Context, owner, id string) ([]json.RawMessage, bool, error)
	// Save keeps r, which continues prev (nil: none).
	Save(ctx context.Context, r, prev *Response) error
	// Drop deletes owner's response id; it reports whether there was one.
	Drop(ctx context.Context, owner, id string) (bool, error)
}

var (
	_ Keeper = (*Store)(nil)
	_ Keeper = (*records)(nil)
)

func (st *Store) Load(_ context.Context, owner, id string) (*Response, error) {
	r, ok := st.get(owner, id)
	if !ok {
		return nil, nil
	}
	return r, nil
}

func (st *Store) Body(_ context.Context, owner, id string) ([]byte, bool, error) {
	r, ok := st.get(owner, id)
	if !ok {
		return nil, false, nil
	}
	return r.body, true, nil
}

func (st *Store) Input(_ context.Context, owner, id string) ([]json.RawMessage, bool, error) {
	r, ok := st.get(owner, id)
	if !ok {
		return nil, false, nil
	}
	return r.input, true, nil
}

// save puts r; one larger than the whole bound is not kept, as put decides.
func (st *Store) Save(_ context.Context, r, _ *Response) error {
	st.put(r)
	return nil
}

func (st *Store) Drop(_ context.Context, owner, id string) (bool, error) {
	return st.delete(owner, id), nil
}

// SetRecords has stored responses live in rec, each kept for ttl (zero: the store's
// own TTL); nil goes back to memory. See Server.SetResponseRecords.
func (st *Store) SetRecords(rec store.Records, ttl time.Duration) {
	if rec == nil {
		st.records = nil
		return
	}
	if ttl <= 0 {
		ttl = st.ttl
	}
	st.records = &records{rec: rec, ttl: ttl, timeout: recordTimeout}
}

// Keeper is where stored responses live.
func (st *Store) Keeper() Keeper {
	if st.records != nil {
		return st.records
	}
	return st
}

// Stores says whether responses are stored at all.
func (st *Store) Stores() bool {
	return st.records != nil || st.maxBytes > 0
}

// Unavailable is the answer when the store of responses fails.
func Unavailable(err error) error {
	return &backends.Error{Status: http.StatusServiceUnavailable, Type: "server_error", Code: "state_unavailable", RetryAfter: "1",
		Message: "the gateway's store of responses is unavailable, so stored responses cannot be read or kept; retry shortly", Err: err}
}
