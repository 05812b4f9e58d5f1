package gateway

import (
	"encoding/json"
	"net/http"
	"strconv"

	"github.com/maskgate/maskgate/backends/oai"
	"github.com/maskgate/maskgate/gateway/door"
	"github.com/maskgate/maskgate/gateway/wsock"
)

// warmUp answers a response.create with generate: false: a response with no output
// that the next turn can continue, so a client can send its long instructions and
// tools ahead of the first question. The backend is not called, but the warm-up is a
// request all the same: the key's limits admit it (429), its model must be routed (404)
// and the key's (403), its conversation must fit the chain's bound (decode:
// history_too_large) and the backend's context window (the budget guard), and a stored
// one counts against the store's bound as any response.
func (a *responsesAPI) warmUp(w *socketWriter, r *http.Request, body []byte, sess *wsock.Session) {
	log := a.host.log
	d := &responsesDoor{api: a, ws: sess}
	release, err := a.host.admit(r)
	if err != nil {
		d.writeError(w, log, err)
		return
	}
	defer release()
	q, err := d.decode(r, body)
	if err == nil {
		err = q.refuse
	}
	if err == nil {
		err = a.host.warmRoute(r, q)
	}
	if err != nil {
		d.writeError(w, log, err)
		return
	}
	now := a.host.now
	x := &exchange{start: now(), now: now, stream: true}
	sk := d.sink(w, x, q)
	d.out.WarmUp = true
	if sk.Begin(door.Head{Model: q.env.Model, Created: now().Unix()}) != nil || sk.End(oai.FinishStop, nil) != nil {
		return
	}
	d.keep()
}

// admitWarmUp takes a warm-up from its key's limits, as serve takes any request.
func (s *Server) admitWarmUp(r *http.Request) (func(), error) {
	return s.access.Admit(r.Context(), callerOf(r.Context()).key)
}

// routeWarmUp checks a warm-up as run checks a request before calling the backend: the
// model routed, the key allowed it and its backend, the prompt within the backend's
// context window.
func (s *Server) routeWarmUp(r *http.Request, q *request) error {
	env := q.env
	rt, ok := s.router.lookup(env.Model)
	if !ok {
		return &apiError{Status: http.StatusNotFound, Type: "invalid_request_error", Param: "model", Code: "model_not_found",
			Message: "the model " + strconv.Quote(env.Model) + " is not served by this gateway; GET /v1/models lists the models it routes"}
	}
	if err := s.access.Allow(callerOf(r.Context()).key, env.Model, rt.up.Name, rt.up.Backend); err != nil {
		return err
	}
	msgs := make([][]byte, len(env.Messages))
	for i, m := range env.Messages {
		msgs[i] = m
	}
	return s.planner.CheckBudget(rt.up.ContextWindow, env.Object, env.Tools, msgs)
}

// historyTooLarge refuses a request whose chain would hold more than bound bytes: the
// history it continues (or the socket's last response), its tools loaded by searches,
// its instructions and its input.
func historyTooLarge(bound int64, parts ...[]json.RawMessage) error {
	if bound <= 0 {
		return nil
	}
	var n int64
	for _, ms := range parts {
		for _, m := range ms {
			n += int64(len(m))
		}
	}
	if n <= bound {
		return nil
	}
	return &apiError{Status: http.StatusBadRequest, Type: "invalid_request_error", Param: "input", Code: "history_too_large",
		Message: "this conversation would hold " + strconv.FormatInt(n, 10) + " bytes with this input, over the gateway's bound of " +
			strconv.FormatInt(bound, 10) + " for one chain of responses (doors.history_bytes); start a new conversation, or compact this one (POST /v1/responses/compact)"}
}
