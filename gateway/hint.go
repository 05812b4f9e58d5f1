package gateway

import (
	"context"
	"net/http"

	"github.com/maskgate/maskgate/backends"
	"github.com/maskgate/maskgate/gateway/planner"
)

// routingHint is what a request's upstream calls tell a router in front of the engines
// about its conversation: value (salted: the thread's or the caller's) in the header
// name (Upstream.HintHeader), the session token remembered for value in the header
// token (Upstream.SessionTokenHeader), and nvext members in a Chat Completions body
// (Upstream.NVExt). The zero value tells nothing.
type routingHint struct {
	name, value string
	token       string
	tokens      *backends.SessionTokens
	nvext       backends.NVExt
}

// hinted is ctx carrying x's routing hint and session token for the upstream transport
// (backends.HintTransport).
func (x *exchange) hinted(ctx context.Context) context.Context {
	ctx = backends.WithRoutingHint(ctx, x.hint.name, x.hint.value)
	return backends.WithSessionToken(ctx, x.hint.token, x.hint.value, x.hint.tokens)
}

// hintedBody is a Chat Completions body with x's nvext members merged in (the client's
// own kept); a body that does not parse goes as it is, for the upstream to refuse.
func (x *exchange) hintedBody(body []byte) []byte {
	if x.hint.nvext.Empty() {
		return body
	}
	out, err := x.hint.nvext.Apply(body, x.hint.value)
	if err != nil {
		return body
	}
	return out
}

// routingHint is the hint for a request to up: its thread (the plan's, or named the same
// way when tools are not managed) or its caller, hashed with the thread salt so no
// header or member reveals the client's ids or its key.
func (s *Server) routingHint(r *http.Request, q *request, up *Upstream, plan *planner.Plan) routingHint {
	h := s.hintFor(up)
	if !h.named() {
		return h
	}
	switch up.HintValue {
	case HintCaller:
		h.value = s.threads.Caller(threadIdentity(callerOf(r.Context()).name(), q.prof.Name))
	default:
		if plan != nil {
			h.value = plan.Thread()
		} else {
			h.value = s.planner.Thread(planInput(r, q, up, s.unscopedThreads))
		}
	}
	if h.value == "" {
		h.name = ""
	}
	return h
}

// hintFor is up's hint without its value.
func (s *Server) hintFor(up *Upstream) routingHint {
	h := routingHint{name: up.HintHeader, nvext: up.NVExt}
	if t := s.router.tokens[up]; t != nil {
		h.token, h.tokens = up.SessionTokenHeader, t
	}
	return h
}

// named reports whether h sends the conversation's value anywhere.
func (h routingHint) named() bool {
	return h.name != "" || h.tokens != nil || h.nvext.SessionControl
}
