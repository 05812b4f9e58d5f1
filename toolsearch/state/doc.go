// Package state owns the loaded-tool state of threads: which tools a conversation has
// loaded (search_tools / load_tool), in load order, and the meta-tool exchanges the
// gateway ran on the conversation's behalf, kept so they can be spliced back where they
// happened.
//
// Two storages, as config's search.storage names them:
//
//   - memory: a Memory store, per thread, in process. Threads idle past the TTL are dropped
//     by Cleanup (the caller runs it, on a ticker or through Run; the package starts no
//     goroutine), and the store's size is bounded: past MaxBytes the least recently used
//     threads are evicted. A thread that loses its state falls back to what its messages
//     show (FromMessages) and to a cache miss: correctness survives, speed does not.
//   - context: FromMessages derives the loaded set from the request's own messages. A tool
//     is loaded while the call that loaded it and that call's result both remain in the
//     history, so it survives restarts and replicas by construction and needs no store.
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
// but the injected one. A request body is read, never re-encoded.
package state
