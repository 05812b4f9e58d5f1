// Package replicas serves one configured backend from several identical engines (one
// per URL), as a single backends.Backend, so the gateway routes, chooses its tool
// strategy and relays exactly as it does for one engine.
//
// Which replica answers is kvcache.Router's decision: the home of the request's prefix
// (the catalog every session of a profile shares), or the replica that served its
// thread last, unless that one is much busier than the least loaded. The other
// replicas, in the router's order, are the failover.
//
// Failover happens only before the first byte reaches the gateway: an unreachable
// replica, a 429/502/503/504, or a stream that breaks before its first chunk is retried
// on the next candidate; a client error (400, 404, ...) is not, since every replica would
// answer it the same way. Once a replica has produced a chunk or a whole answer the
// request is committed to it, and a later failure reaches the client as it would from a
// single engine: re-running a generation on another replica could not be spliced into
// bytes the client already has.
//
// A replica that cannot be reached is marked down at once; a background health check
// (Start) pings every replica and marks it up or down. Which replica served is shown to
// the client as its position in the configured list (X-Maskgate-Replica), never its
// address.
//
// The package never writes to the client and keeps no package-level state; every
// goroutine it starts ends when the context given to Start is done or Close is called.
package replicas
