package state

import (
	"container/list"
	"context"
	"encoding/json"
	"log/slog"
	"maps"
	"sync"
	"time"
)

// Defaults for Options.
const (
	DefaultTTL = time.Hour
	// NoExpiry, as Options.TTL, keeps idle threads (config: ttl: never).
	NoExpiry        time.Duration = -1
	DefaultMaxBytes               = 64 << 20
)

// Options configure a Memory store. The zero value is usable.
type Options struct {
	// TTL is how long a thread is kept after its last access (Get, Load or AddSplice).
	// If zero, DefaultTTL (1h); NoExpiry keeps threads until MaxBytes pushes the least
	// recently used out.
	TTL time.Duration
	// MaxBytes bounds the store's estimated size (see Stats.Bytes). Past it, the least
	// recently used threads are evicted, the one just written last of all. If zero,
	// DefaultMaxBytes (64 MiB).
	MaxBytes int
	// Now is the clock. If nil, time.Now.
	Now func() time.Time
	// Logger receives what a File store has to report (files it found corrupt and
	// removed, files it could not remove). If nil, slog.Default(). Memory logs nothing.
	Logger *slog.Logger
}

// Splice is a meta-tool exchange the gateway ran itself (assistant call, tool result,
// ...), to be put back into the conversation on the client's next request.
type Splice struct {
	// After is how many of the client's messages preceded the exchange.
	After int
	// Anchor is AnchorOf the client message the exchange followed (the last of those
	// After), so that Place puts it back after that message wherever a rewritten history
	// moved it. Empty when After is 0, and in splices kept before anchors were recorded
	// (placed by After alone).
	Anchor string
	// Messages are the exchange's messages, as the gateway serialized them.
	Messages []json.RawMessage
}

// Snapshot is a thread's state at one moment. It is a copy: changing it changes nothing
// in the store, and later changes to the store do not show in it.
type Snapshot struct {
	// Loaded are the loaded tool names, in load order.
	Loaded []string
	// Splices are the exchanges to put back, in the order they were added.
	Splices []Splice
	// Pins are the thread's pinned values by key (see PinValue and Store.Pin); nil when
	// there are none.
	Pins map[string]string
}

// Stats describe a store.
type Stats struct {
	// Threads is how many threads are held.
	Threads int
	// OldestAccess is the least recent access among them; zero when there are none.
	OldestAccess time.Time
	// Bytes is the estimated size of the state held: names, thread ids and messages, plus
	// a fixed overhead per thread, tool and message.
	Bytes int
}

// Per-item overheads of the size estimate: map entries, slice headers, list elements.
const (
	threadOverhead  = 256
	nameOverhead    = 32
	messageOverhead = 32
)

// Memory keeps thread state in process. It is safe for concurrent use.
type Memory struct {
	ttl      time.Duration
	maxBytes int
	now      func() time.Time

	mu      sync.Mutex
	threads map[string]*list.Element // of *entry
	lru     list.List                // front: most recently used
	bytes   int
}

type entry struct {
	thread  string
	loaded  []string
	set     map[string]struct{}
	splices []Splice
	pins    map[string]string
	access  time.Time
	bytes   int
}

// NewMemory returns an empty store.
func NewMemory(o Options) *Memory {
	m := &Memory{ttl: o.TTL, maxBytes: o.MaxBytes, now: o.Now, threads: map[string]*list.Element{}}
	switch {
	case o.TTL == 0:
		m.ttl = DefaultTTL
	case o.TTL < 0:
		m.ttl = 0 // no expiry
	}
	if m.maxBytes <= 0 {
		m.maxBytes = DefaultMaxBytes
	}
	if m.now == nil {
		m.now = time.Now
	}
	return m
}

// Get returns thread's state, and false when the store has none (never seen, deleted,
// expired or evicted). It counts as an access.
func (m *Memory) Get(thread string) (Snapshot, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	e := m.live(thread)
	if e == nil {
		return Snapshot{}, false
	}
	m.touch(e)
	return e.snapshot(), true
}

// Load appends names to thread's loaded tools, creating the thread if needed. A name
// already loaded keeps its place (loading is idempotent), so the order is first-load
// order. It returns the names newly loaded, in order.
func (m *Memory) Load(thread string, names ...string) []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	e := m.entry(thread)
	var added []string
	for _, n := range names {
		if _, ok := e.set[n]; ok {
			continue
		}
		e.set[n] = struct{}{}
		e.loaded = append(e.loaded, n)
		added = append(added, n)
		m.grow(e, len(n)+nameOverhead)
	}
	m.evict()
	return added
}

// AddSplice records an exchange for thread, creating the thread if needed. The messages
// are copied.
func (m *Memory) AddSplice(thread string, s Splice) {
	m.mu.Lock()
	defer m.mu.Unlock()
	e := m.entry(thread)
	s = copySplice(s)
	size := len(s.Anchor)
	for _, msg := range s.Messages {
		size += len(msg) + messageOverhead
	}
	e.splices = append(e.splices, s)
	m.grow(e, size)
	m.evict()
}

// PinValue sets thread's key to value unless key is already set, creating the thread if
// needed, and returns the value key now holds: the first writer wins and every later
// caller learns its value. The auto strategy pins a thread's strategy this way, keyed by
// backend.
func (m *Memory) PinValue(thread, key, value string) string {
	m.mu.Lock()
	defer m.mu.Unlock()
	e := m.entry(thread)
	if held, ok := e.pins[key]; ok {
		return held
	}
	if e.pins == nil {
		e.pins = map[string]string{}
	}
	e.pins[key] = value
	m.grow(e, len(key)+len(value)+nameOverhead)
	m.evict()
	return value
}

// Delete drops thread's state and reports whether there was any.
func (m *Memory) Delete(thread string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	el, ok := m.threads[thread]
	if ok {
		m.remove(el)
	}
	return ok
}

// Clear drops every thread and returns how many there were.
func (m *Memory) Clear() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	n := len(m.threads)
	m.threads = map[string]*list.Element{}
	m.lru.Init()
	m.bytes = 0
	return n
}

// Cleanup drops the threads idle for longer than the TTL and returns how many.
func (m *Memory) Cleanup() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.now()
	n := 0
	// The list is in access order, so the expired threads are all at the back.
	for el := m.lru.Back(); el != nil; el = m.lru.Back() {
		if !m.expired(el.Value.(*entry), now) {
			break
		}
		m.remove(el)
		n++
	}
	return n
}

// Run calls Cleanup every interval until ctx is done.
func (m *Memory) Run(ctx context.Context, every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			m.Cleanup()
		}
	}
}

// Stats reports the store's size. Expired threads not yet cleaned up are counted.
func (m *Memory) Stats() Stats {
	m.mu.Lock()
	defer m.mu.Unlock()
	s := Stats{Threads: len(m.threads), Bytes: m.bytes}
	if el := m.lru.Back(); el != nil {
		s.OldestAccess = el.Value.(*entry).access
	}
	return s
}

// live returns thread's entry, or nil; an expired one is dropped.
func (m *Memory) live(thread string) *entry {
	el, ok := m.threads[thread]
	if !ok {
		return nil
	}
	e := el.Value.(*entry)
	if m.expired(e, m.now()) {
		m.remove(el)
		return nil
	}
	return e
}

// entry returns thread's live entry, creating it, and marks it used.
func (m *Memory) entry(thread string) *entry {
	e := m.live(thread)
	if e == nil {
		e = &entry{thread: thread, set: map[string]struct{}{}}
		m.threads[thread] = m.lru.PushFront(e)
		m.grow(e, len(thread)+threadOverhead)
	}
	m.touch(e)
	return e
}

func (m *Memory) touch(e *entry) {
	e.access = m.now()
	m.lru.MoveToFront(m.threads[e.thread])
}

func (m *Memory) expired(e *entry, now time.Time) bool {
	return m.ttl > 0 && now.Sub(e.access) > m.ttl
}

func (m *Memory) grow(e *entry, n int) {
	e.bytes += n
	m.bytes += n
}

func (m *Memory) remove(el *list.Element) {
	e := el.Value.(*entry)
	m.lru.Remove(el)
	delete(m.threads, e.thread)
	m.bytes -= e.bytes
}

// evict drops least recently used threads until the store fits. The thread just written
// is at the front, so it goes last: only when it alone exceeds MaxBytes.
func (m *Memory) evict() {
	for m.bytes > m.maxBytes {
		el := m.lru.Back()
		if el == nil {
			return
		}
		m.remove(el)
	}
}

func (e *entry) snapshot() Snapshot { return snapshotOf(e.loaded, e.splices, e.pins) }

// snapshotOf deep-copies a thread's parts into a Snapshot.
func snapshotOf(loaded []string, splices []Splice, pins map[string]string) Snapshot {
	s := Snapshot{Loaded: append([]string(nil), loaded...)}
	if len(splices) > 0 {
		s.Splices = make([]Splice, len(splices))
		for i, sp := range splices {
			s.Splices[i] = copySplice(sp)
		}
	}
	if len(pins) > 0 {
		s.Pins = maps.Clone(pins)
	}
	return s
}

func copySplice(s Splice) Splice {
	out := Splice{After: s.After, Anchor: s.Anchor}
	if s.Messages != nil {
		out.Messages = make([]json.RawMessage, len(s.Messages))
		for i, msg := range s.Messages {
			out.Messages[i] = append(json.RawMessage(nil), msg...)
		}
	}
	return out
}
