package gateway

import (
	"context"
	"net/http"

	"github.com/maskgate/maskgate/backends"
	"github.com/maskgate/maskgate/gateway/planner"
)

// routingHint is the header a request's upstream calls carry for a session-affinity
// router (Upstream.HintHeader); the zero value sends none.
type routingHint struct{ name, value string }

// hinted is ctx carrying x's routing hint for the upstream transport
// (backends.HintTransport).
func (x *exchange) hinted(ctx context.Context) context.Context {
	return backends.WithRoutingHint(ctx, x.hint.name, x.hint.value)
}

// routingHint is the hint for a request to up: its thread (the plan's, or named the same
// way when tools are not managed) or its caller, hashed with the thread salt so the
// header reveals neither the client's ids nor its key.
func (s *Server) routingHint(r *http.Request, q *request, up *Upstream, plan *planner.Plan) routingHint {
	if up.HintHeader == "" {
		return routingHint{}
	}
	var v string
	switch up.HintValue {
	case HintCaller:
		v = s.threads.Caller(threadIdentity(callerOf(r.Context()).name(), q.prof.Name))
	default:
		if plan != nil {
			v = plan.Thread()
		} else {
			v = s.planner.Thread(planInput(r, q, up, s.unscopedThreads))
		}
	}
	return routingHint{up.HintHeader, v}
}
