package gateway

import (
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/maskgate/maskgate/backends"
	"github.com/maskgate/maskgate/backends/oai"
	"github.com/maskgate/maskgate/gateway/access"
	"github.com/maskgate/maskgate/gateway/planner"
	"github.com/maskgate/maskgate/kvcache"
	"github.com/maskgate/maskgate/tenant"
	"github.com/maskgate/maskgate/toolsearch/profile"
)

// The planner's names, as the gateway's API has always spelled them (Options and its
// callers use them).
type (
	Profile      = planner.Profile
	ToolRunner   = planner.ToolRunner
	Alias        = planner.Alias
	Strategy     = planner.Strategy
	Capabilities = planner.Capabilities
	Chooser      = planner.Chooser
	ChoiceInput  = planner.ChoiceInput
	Observer     = planner.Observer
	Observation  = planner.Observation
	Explainer    = planner.Explainer
	CostChooser  = planner.CostChooser
)

const (
	HeaderProfile        = planner.HeaderProfile
	DefaultProfile       = planner.DefaultProfile
	HeaderClientTools    = planner.HeaderClientTools
	ModeServer           = planner.ModeServer
	ModeClient           = planner.ModeClient
	ClientToolsCallable  = planner.ClientToolsCallable
	ClientToolsManaged   = planner.ClientToolsManaged
	StrategyAuto         = planner.StrategyAuto
	StrategyEager        = planner.StrategyEager
	StrategyMask         = planner.StrategyMask
	StrategyAllowedTools = planner.StrategyAllowedTools
	StrategyRemove       = planner.StrategyRemove
	StrategyValidate     = planner.StrategyValidate
	StrategyIndex        = planner.StrategyIndex
)

// defaultProfile is the profile Options' own tool fields describe.
func defaultProfile(o *Options) *Profile {
	p := &Profile{Name: DefaultProfile, Hybrid: o.Hybrid, SearchTopK: o.SearchTopK, SearchMinScore: o.SearchMinScore,
		Strategy: o.Strategy, EagerBelow: o.EagerBelow, ToolMode: o.ToolMode, MaxRounds: o.MaxRounds,
		AutoLoad: o.AutoLoad, Progressive: o.Progressive, ClientTools: o.ClientTools, TemplateOrder: o.TemplateOrder}
	if o.Tools != nil {
		p.Catalog = profile.Static(o.Tools)
	}
	return p
}

// planInput is q, routed to up, as the planner reads it. unscoped files every caller's
// threads together (Server.unscopedThreads: a test's mutation).
func planInput(r *http.Request, q *request, up *Upstream, unscoped bool) planner.Input {
	c := callerOf(r.Context())
	in := planner.Input{Header: r.Header, Env: q.env, Profile: q.prof, Caller: c.name(), Thread: q.thread,
		ClientTools: q.clientTools, Hidden: q.hidden, ClientSearch: q.clientSearch}
	if !unscoped {
		in.Identity = threadIdentity(c.name(), q.prof.Name)
	}
	if up != nil {
		in.Backend, in.Upstream = up.Name, up.Backend
	}
	return in
}

// useProfile sets q's profile (pl.ProfileFor), sends an aliased model upstream under its
// backend name, and takes the request from the profile's limits in budgets (429 past
// them, counted in rejected).
func useProfile(r *http.Request, x *exchange, q *request, pl *planner.Planner, budgets tenant.Budgets, rejected *prometheus.CounterVec, now func() time.Time) (release func(), upstream string, err error) {
	p, upstream, err := pl.ProfileFor(r.Header, x.caller.key, q.env.Model)
	if err != nil {
		return nil, "", err
	}
	if upstream != "" {
		body, err := oai.Set(q.body, "model", []byte(quote(upstream)))
		if err != nil {
			return nil, "", err
		}
		env, err := oai.ParseEnvelope(body)
		if err != nil {
			return nil, "", err
		}
		q.body, q.env = body, env
	}
	q.prof, x.prof = p, p
	release, err = admitProfile(r, p, budgets, rejected, now)
	if err != nil {
		return nil, "", err
	}
	return release, upstream, nil
}

// admitProfile takes a request from p's limits in budgets (429 past them, counted in
// rejected).
func admitProfile(r *http.Request, p *Profile, budgets tenant.Budgets, rejected *prometheus.CounterVec, now func() time.Time) (release func(), err error) {
	p.MarkUsed(now())
	release, refused, err := budgets.Admit(r.Context(), p.LimitKey())
	if err != nil {
		return nil, access.Unavailable(err)
	}
	if refused != nil {
		rejected.WithLabelValues("profile "+p.Name, refused.Reason).Inc()
		return nil, &apiError{Status: http.StatusTooManyRequests, Type: "rate_limit_error", Code: "rate_limit_exceeded",
			Message:    "the profile " + quote(p.Name) + " is at its " + refused.Reason + " limit of " + strconv.Itoa(refused.Limit) + "; retry after the time in Retry-After",
			RetryAfter: access.RetryAfter(refused.RetryAfter), Err: refused}
	}
	return release, nil
}

// backendRequest is one call to the backend: body, with the history's reasoning under
// the backend's member, and under a plan what the plan routes on (planner.Plan.Route).
func backendRequest(x *exchange, p *planner.Plan, body []byte, model string, stream bool) *backends.Request {
	if x.historyReasoning {
		body = x.reasoning.rewrite(body)
	}
	req := &backends.Request{Body: body, Model: model, Stream: stream, CacheSalt: x.cacheSalt, ReasoningEffort: x.effort,
		// Catalog first only where the tools array holds still: the client's tools as
		// sent (no plan), the whole catalog, or index's meta-tools and index. Under
		// remove it changes with the loaded set, and ahead of the system prompt it would
		// move that prompt with it (the embedded replay: remove computed 2,929 tokens a
		// session instead of 2,658).
		CatalogFirst: x.prof != nil && !x.prof.TemplateOrder && (p == nil || p.StableTools())}
	if p != nil {
		p.Route(req, x.cacheSalt)
	}
	return req
}

// learn reports a finished managed request to the planner, for a chooser that learns.
func learn(pl *planner.Planner, x *exchange) {
	if x.plan == nil || x.status != http.StatusOK || !pl.Learns() {
		return
	}
	prefills, decodes := timingSamples(x)
	pl.Observe(x.plan, planner.Outcome{Backend: x.backend, Usage: x.usage, Prefills: prefills, Decodes: decodes,
		Constrained: x.strategy == StrategyMask || (x.strategy == StrategyIndex && x.plan.Constrained())})
}

// timingSamples are the request's measured engine costs. The engine's own timings of
// each round are preferred. Without them the gateway's clock serves where it times the
// engine alone: a streamed answer of one round, whose time to the first chunk is
// prefill (plus one step) and whose time from there to the last chunk is the decode of
// the tokens after it.
func timingSamples(x *exchange) (prefills []kvcache.PrefillSample, decodes []kvcache.DecodeSample) {
	if len(x.engine) > 0 {
		for _, t := range x.engine {
			prefills = append(prefills, kvcache.PrefillSample{Cached: t.Cached, Computed: t.Computed, Seconds: t.PrefillSeconds})
			if t.DecodeSteps > 0 {
				decodes = append(decodes, kvcache.DecodeSample{Context: t.Cached + t.Computed + 1, Tokens: t.DecodeSteps, Seconds: t.DecodeSeconds})
			}
		}
		return prefills, decodes
	}
	u := x.usage
	if u == nil || !x.stream || x.ttft <= 0 || x.plan == nil || len(x.plan.Hidden()) > 0 {
		return nil, nil
	}
	a := accounting(u, x.cache)
	prefills = []kvcache.PrefillSample{{Cached: a.Cached, Computed: a.Computed, Seconds: x.ttft.Seconds()}}
	if n := u.CompletionTokens - 1; n > 0 && x.lastFrame > x.ttft {
		decodes = []kvcache.DecodeSample{{Context: u.PromptTokens + 1, Tokens: n, Seconds: (x.lastFrame - x.ttft).Seconds()}}
	}
	return prefills, decodes
}
