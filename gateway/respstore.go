package gateway

import (
	"bytes"
	"container/list"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/maskgate/maskgate/gateway/store"
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
	// depth is, for a records-backed store, how many records its stored chain has
	// through it; 0 while it is not stored there. Its socket's next turn may read it
	// while the store is being written, hence atomic.
	depth atomic.Int32
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
	// records, once SetResponseRecords sets it, is where stored responses live instead.
	records *recordKeeper
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

// responseKeeper is where the Responses door keeps stored responses: this process's
// responseStore, or a recordKeeper that gateways share and that outlives them.
type responseKeeper interface {
	// load returns owner's response id, whole, or nil when owner has none that can be
	// continued.
	load(ctx context.Context, owner, id string) (*storedResponse, error)
	// body returns the response object of owner's response id; false when there is
	// none.
	body(ctx context.Context, owner, id string) ([]byte, bool, error)
	// save keeps r, which continues prev (nil: none).
	save(ctx context.Context, r, prev *storedResponse) error
	// drop deletes owner's response id; it reports whether there was one.
	drop(ctx context.Context, owner, id string) (bool, error)
}

var (
	_ responseKeeper = (*responseStore)(nil)
	_ responseKeeper = (*recordKeeper)(nil)
)

func (st *responseStore) load(_ context.Context, owner, id string) (*storedResponse, error) {
	r, ok := st.get(owner, id)
	if !ok {
		return nil, nil
	}
	return r, nil
}

func (st *responseStore) body(_ context.Context, owner, id string) ([]byte, bool, error) {
	r, ok := st.get(owner, id)
	if !ok {
		return nil, false, nil
	}
	return r.body, true, nil
}

// save puts r; one larger than the whole bound is not kept, as put decides.
func (st *responseStore) save(_ context.Context, r, _ *storedResponse) error {
	st.put(r)
	return nil
}

func (st *responseStore) drop(_ context.Context, owner, id string) (bool, error) {
	return st.delete(owner, id), nil
}

// SetResponseRecords has the Responses door keep stored responses (store: true, for
// previous_response_id and GET and DELETE /v1/responses/{id}) in rec rather than in
// this process's memory: every gateway given the same rec (a store.Redis) shares them,
// and a store.File keeps them across restarts. Each is kept for ttl after it is made,
// and its chain as long (zero: Options.StoreTTL); rec's own bound applies, not
// Options.StoreBytes. A nil rec goes back to memory.
//
// Call it after New and before the server serves. The caller closes rec, after the
// server has stopped. When rec fails, requests that need a stored response get a 503
// (code state_unavailable); a response that cannot be stored is answered all the same,
// and the failure logged.
func (s *Server) SetResponseRecords(rec store.Records, ttl time.Duration) {
	if rec == nil {
		s.responses.records = nil
		return
	}
	if ttl <= 0 {
		ttl = s.opt.StoreTTL
	}
	s.responses.records = &recordKeeper{rec: rec, ttl: ttl, timeout: recordTimeout}
}

// keeper is where stored responses live.
func (s *Server) keeper() responseKeeper {
	if s.responses.records != nil {
		return s.responses.records
	}
	return s.responses
}

// storesResponses says whether responses are stored at all.
func (s *Server) storesResponses() bool {
	return s.responses.records != nil || s.opt.StoreBytes > 0
}

// responsesUnavailable is the answer when the store of responses fails.
func responsesUnavailable(err error) error {
	return &apiError{Status: http.StatusServiceUnavailable, Type: "server_error", Code: "state_unavailable", RetryAfter: "1",
		Message: "the gateway's store of responses is unavailable, so stored responses cannot be read or kept; retry shortly", Err: err}
}

const (
	// recordDepth bounds a stored chain: a response that would be the 33rd record of
	// its chain is stored whole, as the first of a new one (its Parent empty), so that
	// reading a response reads at most 32 records.
	recordDepth = 32
	// recordTimeout bounds each call to the records, whatever the request's context.
	recordTimeout = 2 * time.Second
	// recordFormat is the first byte of a record's data.
	recordFormat = 1
)

// recordKeeper keeps stored responses as store.Records: each response is a record
// whose parent is the response it continued, holding what the response added to its
// chain, so a chain of n turns stores each message once, not n times.
//
// A record's data is the format byte (1), then as length-prefixed strings (a uvarint
// length, then the bytes): the response object, the thread; then the number of history
// messages before this record's (a uvarint), the number of its own, and each message;
// then the same for the loaded tool definitions. Messages are the client's and the
// engine's JSON bytes unchanged. A response's history is its chain's messages, oldest
// record first; the counts let load check that each record continues the one before.
type recordKeeper struct {
	rec     store.Records
	ttl     time.Duration
	timeout time.Duration
}

// recordParts is one record's data, decoded; its slices share the data's bytes.
type recordParts struct {
	body, thread         []byte
	histBase, loadedBase int
	hist, loaded         []json.RawMessage
}

func encodeRecord(r *storedResponse, histBase, loadedBase int) []byte {
	n := 1 + 4*binary.MaxVarintLen64 + len(r.body) + len(r.thread)
	for _, m := range r.history[histBase:] {
		n += binary.MaxVarintLen64 + len(m)
	}
	for _, m := range r.loaded[loadedBase:] {
		n += binary.MaxVarintLen64 + len(m)
	}
	b := make([]byte, 1, n)
	b[0] = recordFormat
	b = binary.AppendUvarint(b, uint64(len(r.body)))
	b = append(b, r.body...)
	b = binary.AppendUvarint(b, uint64(len(r.thread)))
	b = append(b, r.thread...)
	for _, part := range []struct {
		base int
		all  []json.RawMessage
	}{{histBase, r.history}, {loadedBase, r.loaded}} {
		b = binary.AppendUvarint(b, uint64(part.base))
		b = binary.AppendUvarint(b, uint64(len(part.all)-part.base))
		for _, m := range part.all[part.base:] {
			b = binary.AppendUvarint(b, uint64(len(m)))
			b = append(b, m...)
		}
	}
	return b
}

var errRecordFormat = errors.New("a stored response's record is not in a format this gateway reads")

// decodeRecord reads a record's data; with whole unset it stops after the body and
// thread.
func decodeRecord(b []byte, whole bool) (recordParts, error) {
	var p recordParts
	if len(b) == 0 || b[0] != recordFormat {
		return p, errRecordFormat
	}
	b = b[1:]
	ok := true
	num := func() int {
		v, n := binary.Uvarint(b)
		if n <= 0 || v > 1<<31 {
			ok = false
			return 0
		}
		b = b[n:]
		return int(v)
	}
	str := func() []byte {
		l := num()
		if !ok || l > len(b) {
			ok = false
			return nil
		}
		v := b[:l:l]
		b = b[l:]
		return v
	}
	msgs := func() []json.RawMessage {
		n := num()
		if !ok || n > len(b) { // each takes a byte at least
			ok = false
			return nil
		}
		out := make([]json.RawMessage, n)
		for i := range out {
			out[i] = str()
		}
		return out
	}
	p.body, p.thread = str(), str()
	if whole && ok {
		p.histBase, p.hist = num(), msgs()
		p.loadedBase, p.loaded = num(), msgs()
		ok = ok && len(b) == 0
	}
	if !ok {
		return recordParts{}, errRecordFormat
	}
	return p, nil
}

func (k *recordKeeper) load(ctx context.Context, owner, id string) (*storedResponse, error) {
	ctx, cancel := context.WithTimeout(ctx, k.timeout)
	defer cancel()
	chain, err := k.rec.Chain(ctx, owner, id, recordDepth)
	if err != nil || len(chain) == 0 || chain[0].Parent != "" {
		return nil, err // an incomplete chain cannot be continued: as absent
	}
	parts := make([]recordParts, len(chain))
	nh, nl := 0, 0
	for i, c := range chain {
		p, err := decodeRecord(c.Data, true)
		if err != nil || p.histBase != nh || p.loadedBase != nl {
			return nil, nil // not a chain this gateway wrote: as absent
		}
		parts[i] = p
		nh, nl = nh+len(p.hist), nl+len(p.loaded)
	}
	hist := make([]json.RawMessage, 0, nh)
	var loaded []json.RawMessage
	if nl > 0 {
		loaded = make([]json.RawMessage, 0, nl)
	}
	for _, p := range parts {
		hist, loaded = append(hist, p.hist...), append(loaded, p.loaded...)
	}
	last := parts[len(parts)-1]
	r := &storedResponse{id: id, owner: owner, body: last.body, history: hist, thread: string(last.thread), loaded: loaded}
	r.depth.Store(int32(len(chain)))
	return r, nil
}

func (k *recordKeeper) body(ctx context.Context, owner, id string) ([]byte, bool, error) {
	ctx, cancel := context.WithTimeout(ctx, k.timeout)
	defer cancel()
	chain, err := k.rec.Chain(ctx, owner, id, 1)
	if err != nil || len(chain) == 0 {
		return nil, false, err
	}
	p, err := decodeRecord(chain[0].Data, false)
	if err != nil {
		return nil, false, nil
	}
	return p.body, true, nil
}

// save writes r as what it adds to prev's chain when it can: prev is stored, of the
// same owner, its chain not at recordDepth yet, and r's history and loaded tools start
// with prev's. Otherwise, or if the store has lost prev meanwhile, r is written whole.
func (k *recordKeeper) save(ctx context.Context, r, prev *storedResponse) error {
	ctx, cancel := context.WithTimeout(ctx, k.timeout)
	defer cancel()
	if prev != nil && prev.owner == r.owner {
		if d := prev.depth.Load(); d > 0 && d < recordDepth && extends(r.history, prev.history) && extends(r.loaded, prev.loaded) {
			data := encodeRecord(r, len(prev.history), len(prev.loaded))
			err := k.rec.Put(ctx, r.owner, r.id, store.Record{Parent: prev.id, Data: data}, k.ttl)
			if err == nil {
				r.depth.Store(d + 1)
				return nil
			}
			if !errors.Is(err, store.ErrNoParent) && !errors.Is(err, store.ErrTooLarge) {
				return err
			}
		}
	}
	if err := k.rec.Put(ctx, r.owner, r.id, store.Record{Data: encodeRecord(r, 0, 0)}, k.ttl); err != nil {
		return err
	}
	r.depth.Store(1)
	return nil
}

// extends reports whether all starts with start: the same messages, which the door's
// appends share (so comparing where they start mostly settles it).
func extends(all, start []json.RawMessage) bool {
	if len(all) < len(start) {
		return false
	}
	for i, m := range start {
		a := all[i]
		if len(a) != len(m) || len(m) > 0 && &a[0] != &m[0] && !bytes.Equal(a, m) {
			return false
		}
	}
	return true
}

func (k *recordKeeper) drop(ctx context.Context, owner, id string) (bool, error) {
	ctx, cancel := context.WithTimeout(ctx, k.timeout)
	defer cancel()
	return k.rec.Delete(ctx, owner, id)
}
