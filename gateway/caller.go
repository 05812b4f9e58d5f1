package gateway

import (
	"context"
	"net/http"

	"github.com/maskgate/maskgate/gateway/access"
	"github.com/maskgate/maskgate/tenant"
)

// caller is who sent a request: the key it presented, or nil without keys configured
// (access.Guard.Authenticate decides).
type caller struct{ key *tenant.Key }

// name is the identity: the key's name, "" for the anonymous caller.
func (c caller) name() string {
	if c.key == nil {
		return ""
	}
	return c.key.Name
}

// label is the identity as metrics label it.
func (c caller) label() string { return access.Label(c.key) }

// callerOf is the caller authentication put in ctx; anonymous if none.
func callerOf(ctx context.Context) caller { return caller{key: access.KeyOf(ctx)} }

// quote is s as a JSON string, for messages that name what the client sent.
func quote(s string) string { return `"` + jsonEscape(s) + `"` }

// DefaultQueueTimeout is an Upstream's QueueTimeout when it has none.
const DefaultQueueTimeout = access.DefaultQueueTimeout

// newAccess is the edge of s's /v1/ requests: its keys, budgets and metrics, a gate per
// upstream that caps its requests in flight, and refusals in the client's envelope.
func newAccess(s *Server) *access.Guard {
	g := &access.Guard{Keys: s.opt.Keys, AnyHost: s.opt.AnyHost, Budgets: s.budgets, Gates: map[string]*tenant.Gate{}, Log: s.log,
		Metrics: access.Metrics{Rejected: s.metrics.rejected, KeyTokens: s.metrics.keyTokens, InFlight: s.metrics.inFlight, Queued: s.metrics.queued},
		Refuse:  func(w http.ResponseWriter, r *http.Request, err error) { writeErrorAs(w, s.log, err, envelopeFor(r)) }}
	for _, u := range s.opt.Upstreams {
		if u.MaxInFlight > 0 {
			g.Gates[u.Name] = tenant.NewGate(u.MaxInFlight, u.MaxQueue)
		}
	}
	return g
}
