package wsock

import (
	"errors"
	"sync"
	"time"
)

var (
	errQueueFull   = errors.New("wsock: send queue full")
	errQueueClosed = errors.New("wsock: send queue closed")
)

// outQueue holds the events waiting for the connection's writer, bounded in count and
// bytes. Senders wait for room; the writer pops one event at a time, so room frees as
// the client reads.
type outQueue struct {
	mu       sync.Mutex
	ring     []*[]byte
	head, n  int
	bytes    int64
	maxN     int
	maxBytes int64
	closed   bool
	// ready holds a token when the queue may have events for the writer.
	ready chan struct{}
	// space, when not nil, is closed (and cleared) at the next pop or close: senders
	// waiting for room wait on it.
	space chan struct{}
}

func newOutQueue(maxN int, maxBytes int64) *outQueue {
	return &outQueue{
		ring:     make([]*[]byte, min(maxN, 64)),
		maxN:     maxN,
		maxBytes: maxBytes,
		ready:    make(chan struct{}, 1),
	}
}

// push queues b, waiting at most wait for room. It returns errQueueFull when there was
// no room in time, errQueueClosed once the queue is closed; the caller keeps b then.
func (q *outQueue) push(b *[]byte, wait time.Duration) error {
	size := int64(len(*b))
	var timer *time.Timer
	defer func() {
		if timer != nil {
			putTimer(timer)
		}
	}()
	for {
		q.mu.Lock()
		if q.closed {
			q.mu.Unlock()
			return errQueueClosed
		}
		if q.n == 0 || (q.n < q.maxN && q.bytes+size <= q.maxBytes) {
			q.put(b)
			q.bytes += size
			q.mu.Unlock()
			select {
			case q.ready <- struct{}{}:
			default:
			}
			return nil
		}
		if q.space == nil {
			q.space = make(chan struct{})
		}
		space := q.space
		q.mu.Unlock()
		if timer == nil {
			timer = getTimer(wait)
		}
		select {
		case <-space:
		case <-timer.C:
			return errQueueFull
		}
	}
}

// put appends b to the ring, growing it up to maxN. q.mu is held.
func (q *outQueue) put(b *[]byte) {
	if q.n == len(q.ring) {
		grown := make([]*[]byte, min(max(2*len(q.ring), 1), q.maxN))
		for i := 0; i < q.n; i++ {
			grown[i] = q.ring[(q.head+i)%len(q.ring)]
		}
		q.ring, q.head = grown, 0
	}
	q.ring[(q.head+q.n)%len(q.ring)] = b
	q.n++
}

// pop takes the oldest event, or nil when there is none or the queue is closed.
func (q *outQueue) pop() *[]byte {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.n == 0 || q.closed {
		return nil
	}
	b := q.ring[q.head]
	q.ring[q.head] = nil
	q.head = (q.head + 1) % len(q.ring)
	q.n--
	q.bytes -= int64(len(*b))
	if q.space != nil {
		close(q.space)
		q.space = nil
	}
	return b
}

// close drops every queued event and wakes the senders waiting for room.
func (q *outQueue) close() {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed {
		return
	}
	q.closed = true
	for ; q.n > 0; q.n-- {
		putBuf(q.ring[q.head])
		q.ring[q.head] = nil
		q.head = (q.head + 1) % len(q.ring)
	}
	q.ring, q.bytes = nil, 0
	if q.space != nil {
		close(q.space)
		q.space = nil
	}
}

// eventBufs recycles the copies Send makes of events.
var eventBufs = sync.Pool{New: func() any {
	b := make([]byte, 0, 512)
	return &b
}}

func getBuf() *[]byte { return eventBufs.Get().(*[]byte) }

func putBuf(b *[]byte) {
	if cap(*b) > 64<<10 {
		return
	}
	*b = (*b)[:0]
	eventBufs.Put(b)
}

// timers recycles the timers of senders waiting for room (Go 1.23 timers: after Stop
// or Reset no stale tick is delivered, so a pooled timer is as good as a new one).
var timers sync.Pool

func getTimer(d time.Duration) *time.Timer {
	if t, ok := timers.Get().(*time.Timer); ok {
		t.Reset(d)
		return t
	}
	return time.NewTimer(d)
}

func putTimer(t *time.Timer) {
	t.Stop()
	timers.Put(t)
}
