// Package state owns the loaded-tool state of threads: which tools a conversation has
// loaded (search_tools / load_tool), in load order, and the meta-tool exchanges the
// gateway ran on the conversation's behalf, kept so they can be spliced back where they
// happened.
//
// # Storages
//
// The gateway keeps state through the Store interface; config's search.storage names
// where:
//
//   - memory: a Memory store (Memory.Store), per thread, in process. Threads idle past the
//     TTL are dropped by Cleanup (the caller runs it, on a ticker or through Run; the
//     package starts no goroutine), and the store's size is bounded: past MaxBytes the
//     least recently used threads are evicted. Nothing survives a restart and nothing is
//     shared between instances. It never fails. A thread that loses its state falls back
//     to what its messages show (FromMessages) and to a cache miss: correctness
//     survives, speed does not.
//   - file: a File store (OpenFile), one file per thread in a data directory that one
//     process owns (it holds an flock on the directory's LOCK file; a second opener fails
//     with ErrLocked). Every update is written to a temporary file, synced, renamed into
//     place and the directory synced before the call returns, so a restart or a crash
//     loses nothing acknowledged, and a file is checksummed (SHA-256) so a torn or
//     corrupt one is never loaded: it is logged and removed. State is also held in
//     memory, so reads cost no disk access beyond recording the access time (the file's
//     modification time). TTL, NoExpiry and MaxBytes work as memory's, Bytes counting
//     the files' sizes. Updates cost a few milliseconds of fsync; one instance only.
//   - redis: package redisstore, in Redis or Valkey, shared by every instance behind a
//     load balancer. Each call is one atomic Lua script, so instances racing on a thread
//     load each name once and read one order, and the first Pin wins for all. Redis
//     expires idle threads itself (each access sets the keys' TTL again), each thread's
//     size is capped by dropping its oldest splices, and restarts lose nothing that the
//     server kept (its persistence is the operator's choice).
//   - context: FromMessages derives the loaded set from the request's own messages. A tool
//     is loaded while the call that loaded it and that call's result both remain in the
//     history, so it survives restarts and replicas by construction and needs no store.
//
// Errors: a Store fails only when the store itself does (a disk, the network, Redis, a
// timeout, a store used after Close), and then always with a *Unavailable, which
// errors.Is matches to ErrUnavailable: the gateway answers 503 and the next request tries
// again. The Redis store fails within its dial and read timeouts (500ms and 1s by
// default) and recovers by itself when the server does. Threads that are unknown,
// expired or evicted are not errors: Get reports them with false.
//
// # Threads
//
// Thread resolution (Threads.Thread) names the conversation a request belongs to. It is
// namespaced by the caller's authenticated identity, so two identities never share a
// thread whatever ids they send, and salted with a secret, so an id shows nothing of
// who sent it. A request that names no thread has none unless fingerprinting is on, and
// then shares only with its own identity's conversations that open alike (see Thread).
//
// # Never
//
// No tool loaded in one thread is visible in another: every Snapshot is a deep copy, and
// nothing is shared between entries. No package state, no goroutines of its own, no clock
// but the injected one (the Redis store reads the wall clock only for Stats'
// OldestAccess; Redis keeps the TTLs on its own clock). A request body is read, never
// re-encoded: splices come back from every store byte for byte.
package state
