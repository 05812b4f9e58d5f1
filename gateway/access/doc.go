// Package access is tenancy at the gateway's edge: who a request is (Authenticate puts
// the client key it presented in the request's context) and whether it may go on (the
// key's limits, the model and backend its key may use, a slot of the backend's gate).
// The pipeline gets a caller and a release func from it, nothing more.
//
// It owns the answers these checks give — 401, 403, 429 and 503 as backends.Error with
// Retry-After where retrying helps — and the counters of what it refused
// (Metrics). The limits themselves are tenant's: Budgets for keys, Gate for backends.
//
// It must never log or echo a presented key, keep state of its own beyond what Guard
// holds, or write a response body: the gateway renders every refusal in the door's own
// envelope (Guard.Refuse).
package access
