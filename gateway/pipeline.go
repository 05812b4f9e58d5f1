package gateway

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"

	"github.com/maskgate/maskgate/backends"
	"github.com/maskgate/maskgate/backends/oai"
	"github.com/maskgate/maskgate/gateway/door"
	"github.com/maskgate/maskgate/gateway/observe"
	"github.com/maskgate/maskgate/gateway/planner"
)

// A doorway is one API surface on the gateway's one pipeline: Chat Completions,
// Responses, Messages. It translates its request into the Chat Completions request the
// pipeline runs, and the pipeline's output back through a door.Sink; it never runs the
// tool loop itself.
type doorway interface {
	// name labels the door's requests in metrics and logs.
	name() string
	// decode reads the door's request body into the pipeline's request, or returns a
	// client error.
	decode(r *http.Request, body []byte) (*request, error)
	// sink is where the answer to q goes: events over SSE when it streams, one object
	// when it does not.
	sink(w http.ResponseWriter, x *exchange, q *request) door.Sink
	// writeError answers err before anything was written, in the door's own envelope.
	writeError(w http.ResponseWriter, log *slog.Logger, err error) *apiError
}

// request is what the pipeline runs, whatever door it came through.
type request struct {
	// body is a Chat Completions request; env is its envelope (aliasing body).
	body []byte
	env  *oai.Envelope
	// thread, when the door carries its own conversation identity (prompt_cache_key,
	// previous_response_id's chain, metadata.user_id), names it; the caller's identity
	// still scopes it. Chat Completions' own fields are read from body.
	thread string
	// clientTools says the client's tools are what the model may call (less hidden),
	// as the Responses and Messages APIs mean them: those it declared without
	// deferring and those its own searches found. hidden names the tools in its tools
	// array that it defers and has not found yet (Anthropic's defer_loading without a
	// tool_reference, the Responses API's defer_loading without a tool_search_output).
	// See planner.Input.
	clientTools bool
	hidden      []string
	// custom names the client's Chat Completions custom tools, mapped onto functions
	// (chatcustom.go): their calls go back as custom calls, so the answer goes through
	// the door's sink, never relayed as the engine wrote it.
	custom map[string]bool
	// clientSearch says the client runs tool discovery itself (it deferred tools, or
	// declares its own search tool, or its searches found some): then its callable
	// tools alone may be called, and the gateway's meta-tools stay in the prompt, its
	// bytes unchanged, but are never allowed.
	clientSearch bool
	// refuse, when set, is the answer unless the request is passed to an upstream that
	// speaks its door (a continuation of a response the gateway does not hold may be one
	// the upstream does).
	refuse error
	// prof is the profile the request runs under (set by run).
	prof *Profile
	// early says the door's stream opens with events that need nothing from the model
	// (Responses' response.created, Messages' message_start): the loop sends them as
	// soon as the request is admitted, unless the server's streams begin late.
	early bool
	// effort is the client's reasoning switch where the chat body cannot carry it
	// (Messages' thinking), for backends.Request.ReasoningEffort.
	effort string
	// maxToolCalls bounds the calls the gateway runs itself in one answer (Responses'
	// max_tool_calls); nil for none.
	maxToolCalls *int
}

// serve is every door's handler: admission, the pipeline, and the bookkeeping.
func (s *Server) serve(w http.ResponseWriter, r *http.Request, d doorway) {
	s.admitted(w, r, d.name(), d.writeError, func(r *http.Request, x *exchange) error { return s.run(w, r, x, d) })
}

// admitted runs a request of door through run once the key's limits admit it, charges
// them with its usage, writes a failure with writeErr (unless the answer has begun) and
// records it: what every request the gateway routes goes through (doors and the
// endpoints it passes, passthrough.go).
func (s *Server) admitted(w http.ResponseWriter, r *http.Request, door string, writeErr func(http.ResponseWriter, *slog.Logger, error) *apiError,
	run func(*http.Request, *exchange) error) {
	x := &exchange{id: requestID(r.Context()), start: s.now(), now: s.now, backend: "none", model: "none", strategy: "none", status: http.StatusOK,
		caller: callerOf(r.Context()), door: door}
	r = s.ops.RequestBegun(r, &x.ops, observe.Begun{ID: x.id, Door: x.door, Start: x.start}) // r as it was when tracing is off
	release, err := s.access.Admit(r.Context(), x.caller.key)
	if err == nil {
		defer release()
		err = run(r, x)
		s.chargeAbandoned(r, x)
		s.access.Charge(context.WithoutCancel(r.Context()), x.caller.key, x.usage)
		if x.prof != nil && x.prof.LimitKey() != nil {
			s.access.Charge(context.WithoutCancel(r.Context()), x.prof.LimitKey(), x.usage)
		}
	}
	if err != nil {
		var ae *apiError
		if x.committed {
			// Already reported inside the stream; keep the failure in logs and metrics.
			ae = toAPIError(err)
			s.log.Warn("stream failed", "request_id", x.id, "backend", x.backend, "status", ae.Status, "error", err)
		} else {
			ae = writeErr(w, s.log, err)
		}
		x.status = ae.Status
		x.ops.Failed = ae.Code
		s.metrics.countFailure(x.backend, ae.Code)
	}
	if x.committed && x.stream {
		setAccounting(w.Header(), http.TrailerPrefix, x.usage, x.cache)
	}
	learn(s.planner, x)
	s.record(x)
	if x.held != nil && x.bodyWrites.Idle() { // else a transport may still be sending it: the collector's
		s.bodies.release(x.held)
	}
}

// readRequest reads the request body under the server's size and time limits, into a
// buffer the request holds until it has ended: the caller gives held back to
// s.bodies.release then, and keeps no slice of the body past that.
func (s *Server) readRequest(w http.ResponseWriter, r *http.Request) (body []byte, held *[]byte, err error) {
	body, held, err = s.bodies.read(http.MaxBytesReader(w, r.Body, s.opt.MaxRequestBytes), r.ContentLength)
	if err != nil {
		if errors.Is(err, errBodyTooSlow) {
			return nil, nil, err // the server cancelled the request on the failed read: still answer it
		}
		if r.Context().Err() != nil {
			return nil, nil, context.Cause(r.Context())
		}
		return nil, nil, err
	}
	return body, held, nil
}

// run is the pipeline: route, admit, plan the tools, then either hand the request to
// the backend as it is (relayed byte for byte where the door is Chat Completions) or run
// the tool loop.
func (s *Server) run(w http.ResponseWriter, r *http.Request, x *exchange, d doorway) error {
	raw, held, err := s.readRequest(w, r)
	if err != nil {
		return err
	}
	if held != nil {
		// The buffer goes back to the pool once the request ends and no upstream write
		// of it is under way.
		x.held = held
		var ctx context.Context
		ctx, x.bodyWrites = backends.TrackBody(r.Context())
		r = r.WithContext(ctx)
	}
	q, err := d.decode(r, raw)
	if err != nil {
		return err
	}
	releaseProfile, alias, err := useProfile(r, x, q, s.planner, s.budgets, s.metrics.rejected, s.now)
	if err != nil {
		return err
	}
	defer releaseProfile()
	if alias != "" {
		// A door's own body, passed as it is to an upstream that speaks the door, names
		// the backend model too.
		if raw, err = oai.Set(raw, "model", []byte(quote(alias))); err != nil {
			return err
		}
	}
	env := q.env
	x.ops.Model = env.Model
	rt, ok := s.router.lookup(env.Model)
	if !ok {
		return &apiError{Status: http.StatusNotFound, Type: "invalid_request_error", Param: "model", Code: "model_not_found",
			Message: fmt.Sprintf("the model %q is not served by this gateway; GET /v1/models lists the models it routes", env.Model)}
	}
	if err := s.access.Allow(x.caller.key, env.Model, rt.up.Name, rt.up.Backend); err != nil {
		return err
	}
	x.backend, x.model, x.stream, x.reasoning = rt.up.Name, rt.label, env.Stream, rt.reasoning
	x.historyReasoning = mentionsReasoning(env.Messages)
	x.effort = q.effort
	x.maxHeld = rt.up.MaxResponseBytes
	if x.maxHeld <= 0 {
		x.maxHeld = defaultMaxResponseBytes
	}
	x.strategy = StrategyEager // every tool the client sent reaches the model unchanged
	release, err := s.access.AdmitBackend(r.Context(), x.caller.key, rt.up.Name, rt.up.QueueTimeout)
	if err != nil {
		return err
	}
	defer release()
	if k := x.caller.key; k != nil && k.IsolateCache {
		x.cacheSalt = s.threads.CacheSalt(k.Name)
	}

	if err := fitWindow(w, s.log, d, q, s.planner, rt.up.ContextWindow); err != nil {
		return err
	}
	env = q.env
	q.maxToolCalls = toolCallLimit(d)
	plan, err := s.planner.Plan(r.Context(), planInput(r, q, rt.up, s.unscopedThreads))
	if err != nil {
		return err
	}
	x.hint = s.routingHint(r, q, rt.up, plan)
	if plan == nil {
		if nd, ok := d.(nativeDoor); ok {
			if p, ok := rt.up.Backend.(backends.DoorPasser); ok && p.PassesDoor(nd.native()) {
				return passNative(w, r, x, p, nd, raw, env.Stream)
			}
		}
	}
	if q.refuse != nil {
		return q.refuse
	}
	noteContent(r.Context(), w, s.log, d, rt.up.Backend, q.body)
	body := q.body
	x.plan = plan
	if plan != nil {
		if err := s.planner.CheckBudget(rt.up.ContextWindow, env.Object, plan.ToolsArray(), plan.Messages()); err != nil {
			return err
		}
		x.promptEstimate = func() int { return s.planner.PromptTokens(plan.ToolsArray(), plan.Messages()) }
		x.strategy = plan.Strategy()
		if plan.Thread() != "" {
			w.Header().Set(HeaderThread, plan.Thread())
		}
		if q.prof.ToolMode != ModeClient {
			return s.streamLoop(w, r, x, d, rt.up.Backend, q, plan, true)
		}
		if body, err = plan.UpstreamBody(env.Object, env.Stream); err != nil {
			return err
		}
	} else {
		msgs := make([][]byte, len(env.Messages))
		for i, m := range env.Messages {
			msgs[i] = m
		}
		if err := s.planner.CheckBudget(rt.up.ContextWindow, env.Object, env.Tools, msgs); err != nil {
			return err
		}
		x.promptEstimate = func() int { return s.planner.PromptTokens(env.Tools, msgs) }
	}
	if _, chat := d.(chatDoor); !chat || plan != nil || q.custom != nil {
		// A plan in client mode goes through the loop too, for one round: it holds the
		// tool calls to the end, where a call outside the allowed set is refused.
		q.body = body
		return s.streamLoop(w, r, x, d, rt.up.Backend, q, plan, false)
	}
	return s.pass(w, r, x, rt, plan, env, body)
}

// streamLoop runs the loop with d's sink, and keep-alives while it streams.
func (s *Server) streamLoop(w http.ResponseWriter, r *http.Request, x *exchange, d doorway, be backends.Backend, q *request, plan *planner.Plan, managed bool) error {
	sk := d.sink(w, x, q)
	stop := s.startKeepAlive(w, x, d, q.env.Stream)
	defer stop()
	return s.loop(r, x, be, q, plan, managed, sk)
}

// pass sends a Chat Completions request to the backend in one round and relays its
// answer byte for byte (less the usage the gateway asked for on the client's behalf).
func (s *Server) pass(w http.ResponseWriter, r *http.Request, x *exchange, rt route, plan *planner.Plan, env *oai.Envelope, body []byte) error {
	// The gateway needs usage on every stream for its accounting; a client that did not
	// ask for it gets the stream without it.
	dropUsage := env.Stream && !env.IncludeUsage
	if dropUsage && plan == nil { // upstreamBody asked already
		obj := env.Object
		if b := obj.Bytes(); len(b) != len(body) || len(b) == 0 || &b[0] != &body[0] {
			// The body was rewritten after the envelope was read (a model alias): index
			// it again.
			var err error
			if obj, err = oai.ParseObject(body); err != nil {
				return err
			}
		}
		body = requestUsage(obj)
	}
	uctx := s.ops.RoundBegun(r.Context(), &x.ops, observe.Round{N: -1, Backend: x.backend, Stream: x.stream, Loaded: underRemove(s, plan)}) // the upstream call's span, ended with the request's
	t := s.now()
	resp, err := rt.up.Backend.ChatCompletion(x.hinted(uctx), backendRequest(x, plan, x.hintedBody(body), env.Model, env.Stream))
	x.upstream += s.now().Sub(t)
	if err != nil {
		return err
	}
	x.strategy = planner.Label(plan, x.strategy, resp.Strategy)
	copyHeaders(w.Header(), resp.Header)
	if resp.Stream != nil {
		// Keep-alives once the stream has begun: a pause between the engine's chunks.
		stop := s.startKeepAlive(w, x, chatDoor{}, true)
		defer stop()
		return s.relay(w, r, x, resp, dropUsage)
	}
	return whole(w, x, resp)
}

// doorError is ae as a door writes it.
func doorError(ae *apiError) door.Error {
	return door.Error{Status: ae.Status, Type: ae.Type, Code: ae.Code, Param: ae.Param, Message: ae.Message, Overflow: ae.Overflow}
}
