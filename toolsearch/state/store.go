package state

import (
	"context"
	"errors"
)

// Store keeps thread state where the gateway can reach it: in process (Memory.Store), in
// a data directory that survives restarts (OpenFile), or in Redis / Valkey shared by
// every instance behind a load balancer (package redisstore).
//
// Every method is safe for concurrent use, and each update is atomic: two callers racing
// on one thread, in one process or in two, never lose each other's writes, never load a
// name twice and agree on the load order. Reads and writes count as accesses for the TTL.
//
// A Store returns an error only when the store itself failed (a disk, a network, a
// server, a timeout, a store used after Close); such errors satisfy
// errors.Is(err, ErrUnavailable) and are *Unavailable, which the gateway answers with a
// 503. A thread that was never seen, has expired or was evicted is not an error: Get
// reports it with false.
type Store interface {
	// Get returns thread's state, and false when the store holds none.
	Get(ctx context.Context, thread string) (Snapshot, bool, error)
	// Load appends to thread's loaded tools the names not yet loaded, creating the
	// thread if needed, and returns those newly loaded, in order. Loading is idempotent:
	// a name keeps the place of its first load.
	Load(ctx context.Context, thread string, names ...string) ([]string, error)
	// AddSplice appends an exchange to thread's, creating the thread if needed.
	AddSplice(ctx context.Context, thread string, s Splice) error
	// Pin sets thread's key to value unless key is set, creating the thread if needed,
	// and returns the value key now holds: the first writer wins.
	Pin(ctx context.Context, thread, key, value string) (string, error)
	// Delete drops thread's state and reports whether there was any.
	Delete(ctx context.Context, thread string) (bool, error)
	// Clear drops every thread and returns how many there were.
	Clear(ctx context.Context) (int, error)
	// Cleanup drops the threads idle past the TTL and returns how many. A store that
	// expires threads by itself (Redis) returns 0.
	Cleanup(ctx context.Context) (int, error)
	// Stats reports the store's size.
	Stats(ctx context.Context) (Stats, error)
	// Close releases what the store holds (a directory lock, connections). The File and
	// Redis stores then fail every call with an Unavailable error wrapping ErrClosed;
	// Memory's Store has nothing to release and stays usable.
	Close() error
}

var (
	// ErrUnavailable is what every store failure is, through errors.Is.
	ErrUnavailable = errors.New("thread state store unavailable")
	// ErrClosed is the cause of the failures of a store used after Close.
	ErrClosed = errors.New("thread state store closed")
)

// Unavailable is the error of a store that failed: Err says why (an I/O error, a Redis
// error or timeout, ErrClosed, the caller's context ending). It matches ErrUnavailable
// and unwraps to Err.
type Unavailable struct {
	Err error
}

func (e *Unavailable) Error() string {
	if e.Err == nil {
		return ErrUnavailable.Error()
	}
	return ErrUnavailable.Error() + ": " + e.Err.Error()
}

// Unwrap returns Err.
func (e *Unavailable) Unwrap() error { return e.Err }

// Is reports whether target is ErrUnavailable.
func (e *Unavailable) Is(target error) bool { return target == ErrUnavailable }

// Store returns m as a Store. It never fails: the context is not consulted and Close
// does nothing (the Memory stays usable).
func (m *Memory) Store() Store { return memoryStore{m} }

type memoryStore struct{ m *Memory }

func (s memoryStore) Get(_ context.Context, thread string) (Snapshot, bool, error) {
	snap, ok := s.m.Get(thread)
	return snap, ok, nil
}

func (s memoryStore) Load(_ context.Context, thread string, names ...string) ([]string, error) {
	return s.m.Load(thread, names...), nil
}

func (s memoryStore) AddSplice(_ context.Context, thread string, sp Splice) error {
	s.m.AddSplice(thread, sp)
	return nil
}

func (s memoryStore) Pin(_ context.Context, thread, key, value string) (string, error) {
	return s.m.PinValue(thread, key, value), nil
}

func (s memoryStore) Delete(_ context.Context, thread string) (bool, error) {
	return s.m.Delete(thread), nil
}

func (s memoryStore) Clear(context.Context) (int, error)   { return s.m.Clear(), nil }
func (s memoryStore) Cleanup(context.Context) (int, error) { return s.m.Cleanup(), nil }
func (s memoryStore) Stats(context.Context) (Stats, error) { return s.m.Stats(), nil }
func (s memoryStore) Close() error                         { return nil }
