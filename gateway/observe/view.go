package observe

import (
	"context"
	"hash/fnv"
	"io"
	"log/slog"
	"net/http"
	"net/netip"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/maskgate/maskgate/toolsearch/state"
)

// Options configure a View. The zero value of each field is its default.
type Options struct {
	// RequestLog is how many of the latest requests GET /admin/requests keeps. If zero,
	// DefaultRequestLog; negative keeps none.
	RequestLog int
	// EventInterval is how often GET /admin/events sends a snapshot. If zero, a second.
	EventInterval time.Duration
	// TracerProvider, if set, gets a span per request, per round of the tool loop, per
	// upstream call and per tool the gateway runs (trace.go). If nil, no span is made.
	TracerProvider trace.TracerProvider
	// Now is the clock. If nil, time.Now.
	Now func() time.Time
	// Logger receives what the view has to say (a dropped event stream). If nil, logs
	// are discarded.
	Logger *slog.Logger
	// Stopping, once done, ends the event streams and refuses new ones (the gateway's
	// shutdown). If nil, only CloseEvents does.
	Stopping context.Context

	// AdminKey guards every admin endpoint. If empty, they answer 404 admin_disabled.
	AdminKey string
	// TrustedProxies are the addresses of TLS-terminating proxies whose
	// X-Forwarded-Proto: https says the browser came over TLS (the session cookie is
	// then Secure). If empty, only the gateway's own TLS does.
	TrustedProxies []netip.Prefix
	// WriteError answers a request with err (a *backends.Error) in the gateway's error
	// envelope. If nil, the OpenAI envelope without the gateway's logging.
	WriteError func(w http.ResponseWriter, err error)
	// Profiles lists the gateway's profiles for GET /admin/profiles. If nil, none.
	Profiles func() []AdminProfile
	// Tools and ToolSearch serve GET /admin/tools and /admin/tools/search (the
	// gateway's /v1/tools handlers, for the profile the request's ?profile= names). If
	// nil, those paths are 404.
	Tools, ToolSearch http.HandlerFunc
	// Explain, if set, says what strategy auto chose for a profile on a backend and what
	// it rests on, for the live rows of profiles on auto.
	Explain func(profile, backend string) (*LiveAuto, bool)
	// Store is the thread state the threads API reports and clears, and whose
	// statistics the live events carry. If nil, the gateway keeps no state.
	Store state.Store
	// Thread is the store's id of the thread a client named (its X-Thread-Id or
	// metadata.thread_id) under a key and a profile, for DELETE /admin/threads/{id}.
	Thread func(id, key, profile string) string
}

// View is the operator's view: it is told of every request and serves what it saw under
// /admin/. Its methods are safe for concurrent use, and on a nil *View they do nothing.
type View struct {
	opt    Options
	now    func() time.Time
	log    *slog.Logger
	reqlog *requestLog
	live   *liveStats
	hub    eventHub
	tracer trace.Tracer // nil: tracing off
	signin signInGuard  // wrong admin keys per address, revoked sessions
}

// New returns a View for o.
func New(o Options) *View {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if o.EventInterval <= 0 {
		o.EventInterval = time.Second
	}
	if o.Stopping == nil {
		o.Stopping = context.Background()
	}
	if o.WriteError == nil {
		o.WriteError = writeEnvelope
	}
	v := &View{opt: o, now: o.Now, log: o.Logger, reqlog: newRequestLog(o.RequestLog), live: newLiveStats(o.Now())}
	if o.TracerProvider != nil {
		v.tracer = o.TracerProvider.Tracer(TracerName)
	}
	return v
}

// Register serves the admin API and the dashboard under /admin/ on mux.
func (v *View) Register(mux *http.ServeMux) {
	mux.HandleFunc("/admin/", v.admin)
}

// RequestBegun starts the request's span, continuing the client's trace when it sent a
// traceparent, and returns r with it in its context; r itself when tracing is off.
func (v *View) RequestBegun(r *http.Request, o *Request, b Begun) *http.Request {
	if v == nil || v.tracer == nil {
		return r
	}
	return v.startSpan(r, o, b)
}

// RoundBegun counts an upstream call and returns the context it runs under: with
// tracing, in a new round span and its upstream call's span, after ending the previous
// round's.
func (v *View) RoundBegun(ctx context.Context, o *Request, rd Round) context.Context {
	if v == nil {
		return ctx
	}
	o.rounds++
	noteLoaded(o, rd.Loaded)
	if o.span == nil {
		return ctx
	}
	return v.roundSpans(ctx, o, rd)
}

// RoundEnded notes an upstream answer the pipeline has read: its usage for the request
// log and, with tracing, its span's attributes, which it ends.
func (v *View) RoundEnded(o *Request, a Answer) {
	if v == nil {
		return
	}
	o.noteRound(a.Usage)
	if a.Model != "" {
		o.respModel = a.Model
	}
	if o.span != nil {
		endUpstream(o, a)
	}
}

// RequestEnded feeds the request log, the live statistics and the request's span with
// what the request did.
func (v *View) RequestEnded(o *Request, e Ended) {
	if v == nil {
		return
	}
	rec := v.record(o, &e)
	v.live.add(&e, &rec)
	v.endSpan(o, &e, &rec)
	v.reqlog.add(&rec) // last: a request in the log is in everything else
}

// noteLoaded records, under remove, the loaded set a round sends the engine.
func noteLoaded(o *Request, loaded []string) {
	if loaded == nil {
		return
	}
	h := fnv.New64a()
	for _, name := range loaded {
		h.Write([]byte(name))
		h.Write([]byte{0})
	}
	sum := h.Sum64()
	if o.rounds <= 1 {
		o.loadedFirst = sum
	} else if sum != o.loadedLast {
		o.loadedMoved = true
	}
	o.loadedLast = sum
}
