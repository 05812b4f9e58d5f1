// Package store keeps small records per owner, each linked to the record it continues,
// for stores that outlive one gateway process or are shared by several: the Responses
// API's stored responses, where each answer continues an earlier one.
//
// Two implementations: File, a folder on local disk (one process at a time, kept across
// restarts), and Redis, a Redis or Valkey server that every gateway behind a load
// balancer shares.
//
// # Chains
//
// A record names its parent, a record of the same owner ("" for none). Chain reads a
// record with its ancestors in one call. The stores keep a chain whole as long as they
// can:
//
//   - Put extends every ancestor's lifetime to at least the new record's, so a chain
//     lasts as long as its newest record (ancestors always outlive descendants).
//   - Delete hides a record at once (Chain of it finds nothing, a second Delete reports
//     false), but while it has descendants its data stays as their ancestor, until the
//     last of them goes.
//   - File evicts descendants before their ancestors.
//
// A chain can still end early: its oldest records were lost (a file found corrupt, a
// Redis server that evicted keys under maxmemory or lost them in a restart), or it is
// deeper than Chain's max. Chain then returns what it found; its first record's Parent
// is not empty. A caller that needs the whole chain checks exactly that.
//
// # Owners
//
// Every call names an owner, and a record is found only under the owner it was put
// with: owners never see each other's records, even under the same id. A record's
// parent is looked up under the same owner.
package store

import (
	"context"
	"errors"
	"time"
)

// Record is one stored record.
type Record struct {
	// Parent is the id of the record this one continues, under the same owner; "" for
	// none.
	Parent string
	// Data is opaque to the store; it is kept and returned unchanged.
	Data []byte
}

// Records is a store of records per owner. Implementations are safe for concurrent use.
type Records interface {
	// Put keeps r as owner's record id for ttl (which must be positive), replacing any
	// record of that id, and extends the lifetime of r's ancestors to at least as long.
	// A non-empty r.Parent must name a record of owner that is there (deleted ones
	// still are while they have descendants): if not, Put keeps nothing and fails with
	// ErrNoParent. The store keeps no reference to r.Data.
	Put(ctx context.Context, owner, id string, r Record, ttl time.Duration) error
	// Chain returns owner's record id and its ancestors, oldest first, at most max of
	// them (max < 1 counts as 1), or nil and no error when owner has no record id (never
	// put, expired, evicted or deleted). The chain is whole when its first record's
	// Parent is empty; otherwise it ended early (see the package doc). The records'
	// Data are the caller's.
	Chain(ctx context.Context, owner, id string, max int) ([]Record, error)
	// Delete removes owner's record id; it reports whether there was one.
	Delete(ctx context.Context, owner, id string) (bool, error)
	// Close releases the store; calls after it fail with ErrUnavailable.
	Close() error
}

// ErrUnavailable is what every failure of a store's backend matches (errors.Is): a
// Redis server down or timing out, a disk that fails, a store already closed. Such
// errors also match their cause (a context's error, for one).
var ErrUnavailable = errors.New("store: unavailable")

// ErrNoParent is Put's failure when the parent it names is not there.
var ErrNoParent = errors.New("store: the parent record is not there")

// ErrTooLarge is File's Put failure for a record larger than the whole byte bound.
var ErrTooLarge = errors.New("store: the record is larger than the store's bound")

// errClosed is the cause of calls to a closed store.
var errClosed = errors.New("store: closed")

// unavailable is a backend failure: it matches ErrUnavailable and its cause.
type unavailable struct {
	op  string
	err error
}

func (e *unavailable) Error() string   { return "store unavailable: " + e.op + ": " + e.err.Error() }
func (e *unavailable) Unwrap() []error { return []error{ErrUnavailable, e.err} }

func fail(op string, err error) error { return &unavailable{op: op, err: err} }

// maxWalk bounds the ancestors a store visits when it extends a chain's lifetime or
// deletes through it: a chain made into a cycle (a Put that replaces an ancestor with
// one naming its descendant) cannot loop for ever.
const maxWalk = 10000
