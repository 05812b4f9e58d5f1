package gateway

import (
	"net/http"
	"sync"
	"time"
)

// Keep-alive frames. Anthropic sends ping events now and then in its streams, and its
// SDKs read them as events of no consequence; OpenAI sends no keep-alive event of its
// own, and a comment line (a line starting with ':') is what the SSE standard gives
// every parser to ignore, so Chat Completions gets that. A Responses stream gets an
// event, response.in_progress again (keepAliveEventer): Codex ends a turn whose
// stream sends no event for 300 s, comments or not.
var (
	keepAliveComment = []byte(": keep-alive\n\n")
	keepAlivePing    = []byte("event: ping\ndata: {\"type\":\"ping\"}\n\n")
)

// keepAliver is a door whose streams take keep-alives: frame is what it writes, nil
// when none (a WebSocket, whose transport pings by itself).
type keepAliver interface {
	keepAliveFrame() []byte
}

// keepAliveEventer is a door whose keep-alive is an event of its stream, which its sink
// writes and numbers (the Responses door's response.in_progress): events, given w and x,
// is asked every interval, writes one when the stream has been silent that long, and
// says how long until it is due again; nil when the stream takes none.
type keepAliveEventer interface {
	keepAliveEvents(w http.ResponseWriter, x *exchange) (events func(interval time.Duration) (time.Duration, error))
}

// keepAlive writes a door's keep-alive frame into a begun stream that has been silent
// for its interval: during a long prefill, or while the gateway runs its own tool
// rounds, proxies and clients with a read timeout would otherwise cut the stream.
//
// It writes from its own goroutine, so every write to the client goes through its
// lock (sendFrame and commitStream take it; they are the only writers of a stream the
// loop answers), and it writes only once the stream's headers are out: before that an
// error can still be an HTTP status, and the handler's own writes are not shared.
//
// Time is the wall clock, as the write deadline's: silence is what a proxy between
// gateway and client measures.
type keepAlive struct {
	mu        sync.Mutex
	w         http.ResponseWriter
	rc        *http.ResponseController
	frame     []byte
	interval  time.Duration
	committed bool      // the stream's headers are out
	last      time.Time // the latest write to the client
	failed    bool      // a keep-alive write failed: the client is gone, none more
	// events, for a door whose keep-alive is an event (keepAliveEventer), writes it in
	// place of frame.
	events func(interval time.Duration) (time.Duration, error)

	done, exited chan struct{}
}

// startKeepAlive starts keep-alives for x's stream, answered on w through d, when the
// server sends them and the door takes them; stop ends them and returns once no
// keep-alive write is under way. Without keep-alives, stop does nothing.
func (s *Server) startKeepAlive(w http.ResponseWriter, x *exchange, d doorway, stream bool) (stop func()) {
	if !stream || s.opt.KeepaliveInterval <= 0 {
		return func() {}
	}
	k := &keepAlive{w: w, rc: http.NewResponseController(w), interval: s.opt.KeepaliveInterval,
		last: time.Now(), done: make(chan struct{}), exited: make(chan struct{})}
	if ke, ok := d.(keepAliveEventer); ok {
		if k.events = ke.keepAliveEvents(w, x); k.events == nil {
			return func() {}
		}
		x.keep = k // the events' writes take its lock as the stream's do
		go k.runEvents()
	} else {
		ka, ok := d.(keepAliver)
		if !ok {
			return func() {}
		}
		if k.frame = ka.keepAliveFrame(); k.frame == nil {
			return func() {}
		}
		x.keep = k
		go k.run()
	}
	return func() {
		close(k.done)
		<-k.exited
	}
}

func (k *keepAlive) run() {
	defer close(k.exited)
	t := time.NewTimer(k.interval)
	defer t.Stop()
	for {
		select {
		case <-k.done:
			return
		case <-t.C:
		}
		k.mu.Lock()
		wait := k.interval
		if k.committed && !k.failed {
			if wait = k.interval - time.Since(k.last); wait <= 0 {
				if _, err := k.w.Write(k.frame); err != nil || k.rc.Flush() != nil {
					k.failed = true // the write deadline cut the request, or the client left
				}
				k.last, wait = time.Now(), k.interval
			}
		}
		failed := k.failed
		k.mu.Unlock()
		if failed {
			return
		}
		t.Reset(wait)
	}
}

// runEvents asks the door's events every interval, or when it says the next is due,
// until stop or a failed write. The door's sink judges the silence (it knows when it
// last wrote) and writes the event, taking the lock as every write of the stream does.
func (k *keepAlive) runEvents() {
	defer close(k.exited)
	t := time.NewTimer(k.interval)
	defer t.Stop()
	for {
		select {
		case <-k.done:
			return
		case <-t.C:
		}
		wait, err := k.events(k.interval)
		if err != nil {
			return // the write deadline cut the request, or the client left
		}
		t.Reset(wait)
	}
}

// lock takes the client's writer for one write of the stream (k may be nil: no
// keep-alives); unlock records the write.
func (k *keepAlive) lock() {
	if k != nil {
		k.mu.Lock()
	}
}

func (k *keepAlive) unlock(committed bool) {
	if k != nil {
		k.last = time.Now()
		k.committed = k.committed || committed
		k.mu.Unlock()
	}
}
