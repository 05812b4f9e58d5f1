package tenant

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
)

// Errors of Gate.Acquire.
var (
	// ErrQueueFull: every slot is taken and the queue is full.
	ErrQueueFull = errors.New("backend busy: every slot is taken and the queue is full")
	// ErrQueueTimeout is the cause a caller gives its context's queue deadline
	// (context.WithTimeoutCause), so that a wait that ran out is told apart from a client
	// that left.
	ErrQueueTimeout = errors.New("backend busy: no slot freed before the queue deadline")
)

// Gate caps the requests in flight to one backend. Past the cap, up to MaxQueue
// requests wait, first come first served, each until a slot frees or its context ends;
// past that they are refused at once. It holds no goroutine of its own.
type Gate struct {
	slots    chan struct{}
	maxQueue int64
	queued   atomic.Int64
}

// NewGate returns a Gate of maxInFlight slots (at least 1) and a queue of maxQueue.
func NewGate(maxInFlight, maxQueue int) *Gate {
	return &Gate{slots: make(chan struct{}, max(maxInFlight, 1)), maxQueue: int64(max(maxQueue, 0))}
}

// Acquire takes a slot, waiting in the queue if there is room. It returns ErrQueueFull
// when there is none, or context.Cause(ctx) when ctx ends first (ErrQueueTimeout for a
// deadline set with that cause). release frees the slot; calling it again does nothing.
func (g *Gate) Acquire(ctx context.Context) (release func(), err error) {
	select {
	case g.slots <- struct{}{}:
		return g.releaser(), nil
	default:
	}
	if g.queued.Add(1) > g.maxQueue {
		g.queued.Add(-1)
		return nil, ErrQueueFull
	}
	defer g.queued.Add(-1)
	select {
	case g.slots <- struct{}{}:
		return g.releaser(), nil
	case <-ctx.Done():
		return nil, context.Cause(ctx)
	}
}

func (g *Gate) releaser() func() { return sync.OnceFunc(func() { <-g.slots }) }

// InFlight is the number of slots taken; Queued the number of requests waiting.
func (g *Gate) InFlight() int { return len(g.slots) }
func (g *Gate) Queued() int   { return int(g.queued.Load()) }

// Cap is the number of slots.
func (g *Gate) Cap() int { return cap(g.slots) }
