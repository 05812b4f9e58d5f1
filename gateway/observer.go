package gateway

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/maskgate/maskgate/backends/oai"
	"github.com/maskgate/maskgate/gateway/observe"
	"github.com/maskgate/maskgate/gateway/planner"
	"github.com/maskgate/maskgate/toolsearch/state"
)

// HeaderThread names, on managed requests that have a thread, the thread the gateway
// filed the request under: an opaque id (an HMAC, under the process's thread secret, of
// the caller's identity and thread id: it shows nothing of either, nor of any key) that
// the admin API accepts.
const HeaderThread = "X-Maskgate-Thread"

// opsObserver is what the pipeline tells the operator's view (gateway/observe), at the
// points where it knows something: a request begun, a round begun and its answer read,
// a tool run begun and ended, the request ended. It is told, it never answers but with
// a context for the spans; the pipeline keeps the observer's notes of each request in
// exchange.ops.
type opsObserver interface {
	RequestBegun(r *http.Request, o *observe.Request, b observe.Begun) *http.Request
	RoundBegun(ctx context.Context, o *observe.Request, rd observe.Round) context.Context
	RoundEnded(o *observe.Request, a observe.Answer)
	ToolBegun(ctx context.Context, name, id, typ string) (context.Context, trace.Span)
	ToolEnded(ctx context.Context, sp trace.Span, errType string)
	RequestEnded(o *observe.Request, e observe.Ended)
	CloseEvents()
}

var _ opsObserver = (*observe.View)(nil)

// newOperatorView is s's operator's view: what it shows of s beyond the requests
// (profiles, catalogs, thread state, auto's decisions) it reads through these.
func newOperatorView(s *Server) *observe.View {
	o := observe.Options{
		RequestLog: s.opt.RequestLog, EventInterval: s.opt.EventInterval, TracerProvider: s.opt.TracerProvider,
		Now: s.now, Logger: s.log, Stopping: s.stopping, AdminKey: s.opt.AdminKey, Store: s.store,
		TrustedProxies: s.opt.TrustedProxies,
		WriteError:     func(w http.ResponseWriter, err error) { writeError(w, s.log, err) },
		Profiles:       func() []observe.AdminProfile { return adminProfiles(s.planner.Profiles()) },
		Tools:          asProfile(listTools(s.planner, s.log)),
		ToolSearch:     asProfile(searchTools(s.planner, s.log)),
		Thread: func(id, key, profile string) string {
			return s.threads.Thread(state.ThreadInput{Header: id, Identity: threadIdentity(key, profile)})
		},
	}
	if ex, ok := s.opt.Chooser.(Explainer); ok {
		o.Explain = func(profile, backend string) (*observe.LiveAuto, bool) {
			d, ok := ex.Explain(profile, backend)
			if !ok {
				return nil, false
			}
			a := &observe.LiveAuto{Strategy: string(d.Strategy), Reason: d.Reason, Estimates: make([]observe.LiveEstimate, len(d.Estimates))}
			for j, e := range d.Estimates {
				a.Estimates[j] = observe.LiveEstimate{Strategy: string(e.Strategy), SecondsPerSession: e.Seconds}
			}
			for _, s := range d.Unfit {
				a.Unfit = append(a.Unfit, string(s))
			}
			return a, true
		}
	}
	return observe.New(o)
}

// ended is what the pipeline knows of x once it has ended, total after its start.
func ended(x *exchange, total time.Duration) observe.Ended {
	e := observe.Ended{Start: x.start, Total: total, ID: x.id, Key: x.caller.label(), Door: x.door, Status: x.status,
		Stream: x.stream, TTFT: x.ttft, LastFrame: x.lastFrame, Backend: x.backend, Replica: x.replica,
		Strategy: string(x.strategy), Usage: x.usage, Cache: string(x.cache)}
	if x.prof != nil {
		e.Profile, e.Auto = x.prof.Name, x.prof.Strategy == StrategyAuto || x.prof.Strategy == ""
	}
	if x.usage != nil {
		e.Account = accounting(x.usage, x.cache)
	}
	if p := x.plan; p != nil {
		e.Chose, e.Thread, e.CatalogVersion, e.DisabledCalls = string(p.Strategy()), p.Thread(), p.Catalog().Version(), p.Strays()
		e.Remove = p.Strategy() == StrategyRemove
		if p.Thread() != "" {
			e.Opens = opening{p}
		}
	}
	return e
}

// opening is a plan as the request log asks it whether its request opens the thread.
type opening struct{ p *planner.Plan }

// OpensThread says whether the client's messages (with the thread's hidden exchanges
// spliced in) hold no assistant message: the conversation starts with this request.
func (o opening) OpensThread() bool {
	for i, m := range o.p.Messages() {
		if i >= o.p.ClientMessages() {
			break
		}
		if role, ok := oai.Get(m, "role"); ok && string(role) == `"assistant"` {
			return false
		}
	}
	return true
}

// underRemove is, under strategy remove, the tools round calls under p show the engine
// (observe.Round.Loaded); nil under any other.
func underRemove(s *Server, p *planner.Plan) []string {
	if p == nil || p.Strategy() != StrategyRemove {
		return nil
	}
	if names := p.Active(); names != nil {
		return names
	}
	return []string{}
}

// answer is what the operator's view learns of a round's answer x read.
func (rd *round) answer(x *exchange) observe.Answer {
	return observe.Answer{Usage: rd.usage, Model: rd.model, Finish: rd.finish, Strategy: string(x.strategy),
		Replica: x.replica, Calls: len(rd.calls), Names: rd}
}

// CallNames are the names of the round's tool calls, in their order (observe.Names).
func (rd *round) CallNames() []string {
	calls := rd.toolCalls()
	names := make([]string, 0, len(calls))
	for _, c := range calls {
		names = append(names, c.Function.Name)
	}
	return names
}

// threadIdentity is what a thread is filed within: the caller's identity, and its
// profile unless the default (one key's threads under two profiles are two threads:
// their catalogs differ).
func threadIdentity(key, profile string) string {
	if profile == "" || profile == DefaultProfile {
		return key
	}
	return key + "\x00profile " + profile
}

// adminProfiles are set's profiles as GET /admin/profiles lists them: the default
// first, then by name.
func adminProfiles(profiles []*planner.Profile) []observe.AdminProfile {
	out := make([]observe.AdminProfile, 0, len(profiles))
	for _, p := range profiles {
		ap := observe.AdminProfile{Name: p.Name, Strategy: string(p.Strategy), ToolMode: p.ToolMode}
		if ap.Strategy == "" {
			ap.Strategy = string(StrategyAuto)
		}
		if ix := p.Index(); ix != nil {
			ap.Tools, ap.Version = ix.Catalog().Len(), ix.Catalog().Version()
		}
		out = append(out, ap)
	}
	slices.SortFunc(out, func(a, b observe.AdminProfile) int {
		switch {
		case a.Name == DefaultProfile:
			return -1
		case b.Name == DefaultProfile:
			return 1
		}
		return strings.Compare(a.Name, b.Name)
	})
	return out
}

// asProfile runs a /v1/tools handler for the profile ?profile= names (default: the
// default profile), as a caller that may choose any.
func asProfile(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		r2 := r.Clone(r.Context())
		r2.Header.Del(HeaderProfile)
		if p := r.URL.Query().Get("profile"); p != "" {
			r2.Header.Set(HeaderProfile, p)
		}
		h(w, r2)
	}
}
