package gateway

import (
	"context"
	"net/http"

	"github.com/maskgate/maskgate/backends/oai"
)

// metered runs h, an endpoint that generates nothing but still costs the gateway work
// (counting tokens, listing or searching tools, which under hybrid search is an
// embeddings call, listing models), once the caller's key's limits admit it: it counts
// against the key's requests per minute and concurrency like any request, and a key
// past them gets the 429 in the endpoint's envelope.
func (s *Server) metered(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		release, err := s.access.Admit(r.Context(), callerOf(r.Context()).key)
		if err != nil {
			writeErrorAs(w, s.log, err, envelopeFor(r))
			return
		}
		defer release()
		h(w, r)
	}
}

// chargeAbandoned charges the key (and the request's profile) with an estimate of the
// prompt when a request reached the engine and ended without a usage to charge: the
// client hung up, or a stream broke, before the engine's usage arrived. Tokens per
// minute would otherwise charge nothing for a prompt the engine was sent, and a client
// that abandons every stream would never be limited. The estimate is the budget guard's
// count (tiktoken over the tools and messages sent), made only here, when it is needed.
func (s *Server) chargeAbandoned(r *http.Request, x *exchange) {
	if x.usage != nil || x.promptEstimate == nil || (r.Context().Err() == nil && !x.committed) {
		return
	}
	u := &oai.Usage{PromptTokens: x.promptEstimate()}
	u.TotalTokens = u.PromptTokens
	ctx := context.WithoutCancel(r.Context())
	s.access.Charge(ctx, x.caller.key, u)
	if x.prof != nil && x.prof.LimitKey() != nil {
		s.access.Charge(ctx, x.prof.LimitKey(), u)
	}
}
