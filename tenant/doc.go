// Package tenant owns who a caller is and how much it may ask for: client keys (stored
// and compared as SHA-256 hashes), the identity a key stands for, per-key limits (token
// buckets for requests and tokens per minute, a cap on concurrent requests) and the
// admission gate in front of each backend (a cap on requests in flight with a bounded,
// deadline-bound queue).
//
// Identity is the key's configured name. Everything the gateway keeps per caller —
// threads, loaded sets, hidden exchanges, strategy pins — is keyed by it, never by a
// string the client sent alone; a key shared by two clients makes them one identity.
//
// The gateway enforces limits through Budgets. Local adapts Limiter, whose state is this
// process's memory: N gateways behind a load balancer would give a key N times its
// limits. Package tenant/redislimit keeps the same buckets and concurrency slots in
// Redis or Valkey, shared by every gateway using that server.
//
// # Never
//
// It never holds a key in plain text: Keyring keeps hashes only, and a presented key is
// hashed and compared with every configured hash in constant time. It never writes HTTP
// responses, reads the environment or the clock except through the injected Now; it
// starts no goroutine and has no package state. A Gate's waiters select on their
// context, so a client that leaves or a deadline that passes frees its place at once.
package tenant
