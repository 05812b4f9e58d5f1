package observe

import (
	"context"
	"encoding/json"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/maskgate/maskgate/backends"
)

// The event streams of GET /admin/events: one publisher, running only while someone
// listens, sends a snapshot of the live statistics (live.go) to every subscriber each
// EventInterval.

// eventHub fans snapshots out to the event streams. Its publisher runs only while
// someone listens: it starts with the first subscriber and ends with the last, or when
// the hub closes (shutdown).
type eventHub struct {
	mu      sync.Mutex
	subs    map[*subscriber]struct{}
	running bool
	closed  bool
}

type subscriber struct {
	ch   chan []byte
	gone chan struct{} // closed when dropped or the hub closes
	slow atomic.Bool   // dropped for falling behind
	once sync.Once
}

func (sub *subscriber) drop() { sub.once.Do(func() { close(sub.gone) }) }

var (
	errTooManyStreams = &backends.Error{Status: http.StatusServiceUnavailable, Type: "server_error", Code: "too_many_streams", RetryAfter: "5",
		Message: "too many admin event streams are open; close one"}
	errEventsClosed = &backends.Error{Status: http.StatusServiceUnavailable, Type: "server_error", Code: "server_shutting_down",
		Message: "the gateway is shutting down"}
)

// join adds a subscriber, starting the publisher if it is the first.
func (v *View) join() (*subscriber, error) {
	h := &v.hub
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed || v.opt.Stopping.Err() != nil {
		return nil, errEventsClosed
	}
	if len(h.subs) >= maxSubscribers {
		return nil, errTooManyStreams
	}
	if h.subs == nil {
		h.subs = map[*subscriber]struct{}{}
	}
	sub := &subscriber{ch: make(chan []byte, subscriberQueue), gone: make(chan struct{})}
	h.subs[sub] = struct{}{}
	if !h.running {
		h.running = true
		go v.publish()
	}
	return sub, nil
}

func (v *View) leave(sub *subscriber) {
	v.hub.mu.Lock()
	delete(v.hub.subs, sub)
	v.hub.mu.Unlock()
	sub.drop()
}

// CloseEvents ends every admin event stream and refuses new ones: for the start of a
// graceful shutdown (http.Server.RegisterOnShutdown), since a stream that never ends
// would hold the shutdown for its whole grace period. The gateway's Stop does it too.
func (v *View) CloseEvents() {
	if v == nil {
		return
	}
	h := &v.hub
	h.mu.Lock()
	defer h.mu.Unlock()
	h.closed = true
	for sub := range h.subs {
		sub.drop()
	}
}

// publish sends a snapshot to every subscriber each interval; one whose queue is full
// (it does not read) is dropped, never waited for.
func (v *View) publish() {
	t := time.NewTicker(v.opt.EventInterval)
	defer t.Stop()
	for {
		select {
		case <-v.opt.Stopping.Done():
			v.CloseEvents()
		case <-t.C:
		}
		h := &v.hub
		h.mu.Lock()
		if len(h.subs) == 0 || h.closed {
			h.running = false
			h.mu.Unlock()
			return
		}
		n := len(h.subs)
		h.mu.Unlock()
		b := v.snapshotJSON(false, n)
		h.mu.Lock()
		for sub := range h.subs {
			select {
			case sub.ch <- b:
			default:
				delete(h.subs, sub)
				sub.slow.Store(true)
				sub.drop()
				v.log.Warn("admin event stream dropped: the client does not keep up")
			}
		}
		h.mu.Unlock()
	}
}

// snapshotJSON is one event's data.
func (v *View) snapshotJSON(history bool, subscribers int) []byte {
	snap := v.live.snapshot(v.now(), history)
	v.explainAuto(snap.Rows)
	snap.IntervalMS = v.opt.EventInterval.Milliseconds()
	snap.Subscribers = subscribers
	if v.opt.Store != nil {
		ctx, cancel := context.WithTimeout(v.opt.Stopping, time.Second)
		st, err := v.opt.Store.Stats(ctx)
		cancel()
		if err != nil {
			snap.ThreadsError = "the state store did not answer"
		} else {
			lt := &LiveThreads{Count: st.Threads, Bytes: st.Bytes}
			if !st.OldestAccess.IsZero() {
				t := st.OldestAccess.UTC()
				lt.OldestAccess = &t
			}
			snap.Threads = lt
		}
	}
	b, _ := json.Marshal(snap)
	return b
}

// events serves GET /admin/events: Server-Sent Events, one LiveSnapshot per
// EventInterval, the first at once and with history. A client that falls
// subscriberQueue events behind, or whose write blocks for eventsWriteTimeout, is
// dropped; the stream ends when the gateway shuts down.
func (v *View) events(w http.ResponseWriter, r *http.Request) {
	sub, err := v.join()
	if err != nil {
		v.opt.WriteError(w, err)
		return
	}
	defer v.leave(sub)
	rc := http.NewResponseController(w)
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	v.hub.mu.Lock()
	n := len(v.hub.subs)
	v.hub.mu.Unlock()
	first := append([]byte("retry: 2000\n\n"), sseFrame(v.snapshotJSON(true, n))...)
	send := func(b []byte) bool {
		_ = rc.SetWriteDeadline(time.Now().Add(eventsWriteTimeout))
		if _, err := w.Write(b); err != nil {
			return false
		}
		return rc.Flush() == nil
	}
	if !send(first) {
		return
	}
	for {
		select {
		case <-r.Context().Done():
			return
		case <-sub.gone:
			if sub.slow.Load() {
				// Dropped for not reading: abort the connection rather than end the
				// response and leave it open for another request.
				panic(http.ErrAbortHandler)
			}
			return
		case b := <-sub.ch:
			if !send(sseFrame(b)) {
				return
			}
		}
	}
}

func sseFrame(data []byte) []byte {
	out := make([]byte, 0, len(data)+8)
	out = append(out, "data: "...)
	out = append(out, data...)
	return append(out, '\n', '\n')
}

// explainAuto fills the rows of profiles on auto with the chooser's latest decisions.
func (v *View) explainAuto(rows []LiveRow) {
	if v.opt.Explain == nil {
		return
	}
	for i := range rows {
		r := &rows[i]
		if r.AutoChoice == "" {
			continue
		}
		if a, ok := v.opt.Explain(r.Profile, r.Backend); ok {
			r.Auto = a
		}
	}
}
