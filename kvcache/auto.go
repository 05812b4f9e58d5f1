package kvcache

import (
	"fmt"
	"sync"
	"time"
)

// Defaults of Options.
const (
	DefaultMargin        = 0.10
	DefaultConfirm       = 3
	DefaultResidency     = 10 * time.Minute
	DefaultEagerMaxTools = 20
	DefaultHalfLife      = 512
)

// maxStarts bounds the session start times kept per profile and backend.
const maxStarts = 4096

// minPrefillSamples is how many measured timings replace an engine's configured prefill
// cost, and maxPrefillSamples how many recent ones the fit uses.
const (
	minPrefillSamples = 8
	maxPrefillSamples = 64
)

// Options configure a CostModel. The zero value of each field is its default.
type Options struct {
	// Engines are the backends by name. A backend not listed has the zero Engine: no
	// constraint, no allowed_tools, no prefix cache, default costs.
	Engines map[string]Engine
	// Prior is the workload assumed before anything is observed; it weighs as much as
	// one observed session. Zero fields take defaults: 8 turns per session, 400 input
	// and 100 output tokens per turn, 2 loads per session of two average tools each, and
	// 0.05 stray calls per turn.
	Prior Workload
	// Margin is how much cheaper (as a fraction) a challenger must be than the current
	// strategy to count towards a switch. If zero, DefaultMargin.
	Margin float64
	// Confirm is how many consecutive decisions a challenger must win by Margin before
	// the strategy switches. If zero, DefaultConfirm.
	Confirm int
	// Residency is how long a profile's shared prefix is taken to stay cached between
	// sessions: the sessions started within it share one prefill of the catalog, and as
	// many are expected in the next. If zero, DefaultResidency.
	Residency time.Duration
	// EagerMaxTools: eager is offered only for catalogs of fewer tools, as a model's tool
	// choice degrades with many (the cost model alone would always favour eager, which
	// has no meta-tools). If zero, DefaultEagerMaxTools.
	EagerMaxTools int
	// HalfLife is in sessions: when a profile has seen twice as many, its observations
	// are halved so that the workload follows changes. If zero, DefaultHalfLife.
	HalfLife int
	// Now is the clock. If nil, time.Now.
	Now func() time.Time
}

// Turn is what one request of a session did, as the gateway saw it.
type Turn struct {
	// Input is the prompt tokens this turn added outside the tools array: new messages
	// and tool results, the first turn's system prompt included; not the previous answer,
	// which Output counted.
	Input int
	// Output is the completion tokens of the turn.
	Output int
	// Loads is the tool loads during the turn (load_tool calls, auto-loading searches).
	Loads int
	// LoadedTokens is the tokens of the tool definitions those loads added.
	LoadedTokens int
	// Strays is the calls to tools outside the loaded set.
	Strays int
	// Constrained says the engine enforced the loaded set (mask, allowed_tools): Strays
	// then says nothing about the model's stray rate and is ignored.
	Constrained bool
}

// Estimate is one strategy's modelled engine seconds per session.
type Estimate struct {
	Strategy Strategy
	Seconds  float64
}

// Decision is the auto strategy's choice for a profile on a backend, with what it was
// based on; the gateway reports Strategy and may log the rest.
type Decision struct {
	// Strategy is the one to use.
	Strategy Strategy
	// Previous is the strategy of the decision before, or "" for the first.
	Previous Strategy
	// Switched says Strategy differs from a previous one.
	Switched bool
	// Reason says why, for logs and the admin API.
	Reason string
	// Estimates are the strategies open to the backend, in Strategies order; empty
	// before the profile's catalog is observed.
	Estimates []Estimate
	// Unfit are the strategies the backend can do that were not weighed because a
	// session under them outgrows the engine's context window (Engine.ContextTokens).
	Unfit []Strategy
	// Workload is the session the estimates assumed.
	Workload Workload
	// Shared is how many sessions share one prefill of the catalog: those started
	// within Options.Residency, at least one.
	Shared float64
}

// Seconds returns the estimate for s, if s was estimated.
func (d Decision) Seconds(s Strategy) (float64, bool) {
	for _, e := range d.Estimates {
		if e.Strategy == s {
			return e.Seconds, true
		}
	}
	return 0, false
}

// CostModel is the auto strategy: per profile and backend it keeps the observations the
// gateway feeds it, estimates each open strategy's engine time per session, and picks
// the cheapest with hysteresis, so that the prompt prefix — the thing being optimised —
// does not change on noise. It is safe for concurrent use.
//
// Profile and backend names label metrics: pass configured names only, never a value
// from a request.
type CostModel struct {
	opt Options

	mu      sync.Mutex
	engines map[string]*engineState
	states  map[stateKey]*autoState
}

type stateKey struct{ profile, backend string }

type engineState struct {
	e          Engine
	configured Engine          // e as configured, before any fit
	measured   []PrefillSample // recent, oldest first
	decodes    []DecodeSample  // recent, oldest first
	// constrained are recent decodes under the gateway's constraint, oldest first.
	constrained []DecodeSample
	// fitted says which costs come from measurements rather than configuration.
	prefillFitted, decodeFitted, constrainedFitted bool
}

type autoState struct {
	catalog     CatalogSize
	haveCatalog bool
	// Observation sums.
	sessions, turns, input, output, loads, loadTokens, strays, strayTurns float64
	starts                                                                []time.Time // oldest first

	current, challenger Strategy
	streak              int
	// informed: a decision has been made on a whole measured session (the second one's
	// start), after which the prior no longer counts.
	informed bool
	last     Decision
	haveLast bool
	switches map[[2]Strategy]uint64
}

// NewCostModel returns a CostModel with nothing observed.
func NewCostModel(o Options) *CostModel {
	if o.Margin <= 0 {
		o.Margin = DefaultMargin
	}
	if o.Confirm <= 0 {
		o.Confirm = DefaultConfirm
	}
	if o.Residency <= 0 {
		o.Residency = DefaultResidency
	}
	if o.EagerMaxTools <= 0 {
		o.EagerMaxTools = DefaultEagerMaxTools
	}
	if o.HalfLife <= 0 {
		o.HalfLife = DefaultHalfLife
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	m := &CostModel{opt: o, engines: make(map[string]*engineState), states: make(map[stateKey]*autoState)}
	for name, e := range o.Engines {
		m.engines[name] = &engineState{e: e.withDefaults(), configured: e.withDefaults()}
	}
	m.opt.Engines = nil // copied above; the caller's map may change
	return m
}

// ObserveCatalog records the size of a profile's catalog as the backend sees it.
func (m *CostModel) ObserveCatalog(profile, backend string, c CatalogSize) {
	m.mu.Lock()
	defer m.mu.Unlock()
	st := m.state(profile, backend)
	st.catalog, st.haveCatalog = c, true
}

// ObserveSession records that a new session (thread) of the profile started.
func (m *CostModel) ObserveSession(profile, backend string) {
	now := m.opt.Now()
	m.mu.Lock()
	defer m.mu.Unlock()
	st := m.state(profile, backend)
	st.sessions++
	if len(st.starts) == maxStarts {
		st.starts = append(st.starts[:0], st.starts[1:]...)
	}
	st.starts = append(st.starts, now)
	if st.sessions >= float64(2*m.opt.HalfLife) {
		st.halve()
	}
}

// ObserveTurn records one request of a session of the profile.
func (m *CostModel) ObserveTurn(profile, backend string, t Turn) {
	m.mu.Lock()
	defer m.mu.Unlock()
	st := m.state(profile, backend)
	st.turns++
	st.input += float64(max(t.Input, 0))
	st.output += float64(max(t.Output, 0))
	st.loads += float64(max(t.Loads, 0))
	st.loadTokens += float64(max(t.LoadedTokens, 0))
	if !t.Constrained {
		st.strays += float64(max(t.Strays, 0))
		st.strayTurns++
	}
}

// ObservePrefill records a measured call on backend: the time to its first output token
// with cached tokens reused and computed prefilled. Once enough timings determine a fit
// (FitPrefill over the recent ones), it replaces the engine's configured prefill cost.
// Only timings from the real model count: a tiny test model's would mislead.
func (m *CostModel) ObservePrefill(backend string, s PrefillSample) {
	m.mu.Lock()
	defer m.mu.Unlock()
	es := m.engine(backend)
	if len(es.measured) == maxPrefillSamples {
		es.measured = append(es.measured[:0], es.measured[1:]...)
	}
	es.measured = append(es.measured, s)
	if len(es.measured) < minPrefillSamples {
		return
	}
	if p, err := FitPrefillOver(es.measured, es.configured.Prefill); err == nil {
		es.e.Prefill, es.prefillFitted = p, true
	}
}

// ObserveDecode records a measured decode on backend: output tokens after a context,
// timed from the first output token to the last. Once enough timings determine a fit
// (FitDecode over the recent ones) it replaces the engine's configured decode cost, which
// is derived from an H200's bandwidth, not measured.
func (m *CostModel) ObserveDecode(backend string, s DecodeSample) {
	m.observeDecode(backend, s, false)
}

// ObserveConstrainedDecode is ObserveDecode for a decode under the gateway's constraint
// (mask: a grammar, a structural tag, a token mask). Once both kinds have been measured,
// plain and constrained samples are fitted together with the constraint's extra cost per
// token as a term of its own (FitDecodeConstrained), which gives the cost mask pays
// (Engine.ConstrainedDecode).
func (m *CostModel) ObserveConstrainedDecode(backend string, s DecodeSample) {
	m.observeDecode(backend, s, true)
}

func (m *CostModel) observeDecode(backend string, s DecodeSample, constrained bool) {
	if s.Tokens < 2 || s.Seconds <= 0 {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	es := m.engine(backend)
	window := &es.decodes
	if constrained {
		window = &es.constrained
	}
	if len(*window) == maxPrefillSamples {
		*window = append((*window)[:0], (*window)[1:]...)
	}
	*window = append(*window, s)
	if len(es.decodes)+len(es.constrained) < minPrefillSamples {
		return
	}
	if len(es.decodes) > 0 && len(es.constrained) > 0 {
		// Both kinds: one fit with the constraint's extra cost as its own term.
		if d, c, err := FitDecodeConstrained(es.decodes, es.constrained, es.configured.Decode); err == nil {
			es.e.Decode, es.e.ConstrainedDecode, es.decodeFitted, es.constrainedFitted = d, c, true, true
			return
		}
	}
	// One kind only: the plain cost from whatever was measured. Constrained samples
	// alone cannot tell the constraint's cost from a token's, so mask keeps its
	// configured constrained cost (or the plain one) until plain samples come.
	all := es.decodes
	if len(all) == 0 {
		all = es.constrained
	}
	if len(all) < minPrefillSamples {
		return
	}
	if d, err := FitDecodeOver(all, es.configured.Decode); err == nil {
		es.e.Decode, es.decodeFitted = d, true
	}
}

// ConstrainedDecode returns the decode cost under the gateway's constraint the model uses
// for backend now, and whether it is fitted to measurements; zero when neither measured
// nor configured (mask then decodes at Decode's cost).
func (m *CostModel) ConstrainedDecode(backend string) (DecodeCost, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	es := m.engine(backend)
	return es.e.ConstrainedDecode, es.constrainedFitted
}

// Decode returns the decode cost the model uses for backend now.
func (m *CostModel) Decode(backend string) DecodeCost {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.engine(backend).e.Decode
}

// Prefill returns the prefill cost the model uses for backend now.
func (m *CostModel) Prefill(backend string) PrefillCost {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.engine(backend).e.Prefill
}

// Fitted reports which of backend's costs the model now fits to measurements (ObservePrefill,
// ObserveDecode) rather than takes from its configuration.
func (m *CostModel) Fitted(backend string) (prefill, decode bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	es := m.engine(backend)
	return es.prefillFitted, es.decodeFitted
}

// Decide returns the strategy for the profile's next request on backend. Each call is
// one decision for the hysteresis: the first picks the cheapest strategy; after that a
// challenger replaces the current one only when it has been cheaper by Margin for
// Confirm consecutive decisions and the saving over the next Residency's sessions
// exceeds the one-off cost of breaking the cached prefix. A strategy the backend can no
// longer do is left at once.
func (m *CostModel) Decide(profile, backend string) Decision {
	now := m.opt.Now()
	m.mu.Lock()
	defer m.mu.Unlock()
	st := m.state(profile, backend)
	e := m.engine(backend).e
	d := Decision{Previous: st.current}
	if !st.haveCatalog {
		d.Strategy = fallback(e.Capabilities)
		d.Reason = fmt.Sprintf("no catalog observed yet: %s from the backend's capabilities", d.Strategy)
		return d
	}
	d.Shared = st.shared(now, m.opt.Residency)
	d.Workload = st.workload(m.opt.Prior, st.catalog)
	var open []Strategy
	open, d.Unfit = openStrategies(e, d.Workload, st.catalog, m.opt.EagerMaxTools)
	for _, s := range open {
		d.Estimates = append(d.Estimates, Estimate{s, sessionSeconds(s, d.Workload, st.catalog, d.Shared, e)})
	}
	best := d.Estimates[0] // never empty: remove is always eligible, and open keeps one
	for _, x := range d.Estimates[1:] {
		if x.Seconds < best.Seconds {
			best = x
		}
	}
	cur, curOpen := d.Seconds(st.current)
	measured := st.sessions >= 2 && st.turns > 0 // a whole session has been seen
	switch {
	case st.current == "":
		d.Strategy = best.Strategy
		d.Reason = fmt.Sprintf("first decision: %s is cheapest at %.3gs per session", best.Strategy, best.Seconds)
	case measured && !st.informed && curOpen && best.Seconds < cur*(1-m.opt.Margin):
		// The first decisions rest on the prior; the first whole session measured
		// overrules it at once, beyond the margin, rather than after Confirm decisions:
		// the prior was never evidence.
		st.challenger, st.streak = "", 0
		d.Strategy = best.Strategy
		d.Reason = fmt.Sprintf("first session measured: %s is %.1f%% cheaper than %s, the prior's choice",
			best.Strategy, 100*(1-best.Seconds/cur), st.current)
	case !curOpen:
		d.Strategy = best.Strategy
		d.Reason = fmt.Sprintf("%s is not open to this backend; %s is cheapest", st.current, best.Strategy)
	case best.Strategy == st.current:
		st.challenger, st.streak = "", 0
		d.Strategy = st.current
		d.Reason = fmt.Sprintf("%s is cheapest at %.3gs per session", st.current, cur)
	case best.Seconds > cur*(1-m.opt.Margin):
		st.challenger, st.streak = "", 0
		d.Strategy = st.current
		d.Reason = fmt.Sprintf("%s is %.1f%% cheaper than %s, within the %.0f%% margin",
			best.Strategy, 100*(1-best.Seconds/cur), st.current, 100*m.opt.Margin)
	default:
		if st.challenger != best.Strategy {
			st.challenger, st.streak = best.Strategy, 0
		}
		st.streak++
		d.Strategy = st.current
		saving := (cur - best.Seconds) * d.Shared
		cost := breakSeconds(best.Strategy, d.Workload, st.catalog, d.Shared, e)
		switch {
		case st.streak < m.opt.Confirm:
			d.Reason = fmt.Sprintf("%s is %.1f%% cheaper than %s (%d of %d decisions)",
				best.Strategy, 100*(1-best.Seconds/cur), st.current, st.streak, m.opt.Confirm)
		case saving <= cost:
			d.Reason = fmt.Sprintf("%s is %.1f%% cheaper than %s, but saves %.3gs over the next %.0f sessions, less than the %.3gs of breaking the cached prefix",
				best.Strategy, 100*(1-best.Seconds/cur), st.current, saving, d.Shared, cost)
		default:
			d.Strategy = best.Strategy
			d.Reason = fmt.Sprintf("%s was %.1f%% cheaper than %s for %d decisions, saving %.3gs over the next %.0f sessions against %.3gs of breaking the cached prefix",
				best.Strategy, 100*(1-best.Seconds/cur), st.current, st.streak, saving, d.Shared, cost)
		}
	}
	if len(d.Unfit) > 0 {
		d.Reason += fmt.Sprintf("; %v do not fit the %d-token context", d.Unfit, e.ContextTokens)
	}
	if d.Strategy != st.current {
		if st.current != "" {
			d.Switched = true
			if st.switches == nil {
				st.switches = make(map[[2]Strategy]uint64)
			}
			st.switches[[2]Strategy{st.current, d.Strategy}]++
		}
		st.current, st.challenger, st.streak = d.Strategy, "", 0
	}
	st.informed = st.informed || measured
	st.last, st.haveLast = d, true
	return d
}

// Last returns the latest decision Decide made for the profile on backend, and false
// before the first. It decides nothing: the operator's view reads it.
func (m *CostModel) Last(profile, backend string) (Decision, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	st, ok := m.states[stateKey{profile, backend}]
	if !ok || !st.haveLast {
		return Decision{}, false
	}
	d := st.last
	d.Estimates = append([]Estimate(nil), d.Estimates...)
	d.Unfit = append([]Strategy(nil), d.Unfit...)
	return d, true
}

// fallback is the strategy before anything is known: the cheapest way to keep the
// prefix stable that the backend offers.
func fallback(c Capabilities) Strategy {
	switch {
	case c.Constrains:
		return StrategyMask
	case c.AllowedTools:
		return StrategyAllowedTools
	}
	return StrategyRemove
}

func (m *CostModel) state(profile, backend string) *autoState {
	k := stateKey{profile, backend}
	st, ok := m.states[k]
	if !ok {
		st = &autoState{}
		m.states[k] = st
	}
	return st
}

func (m *CostModel) engine(backend string) *engineState {
	es, ok := m.engines[backend]
	if !ok {
		es = &engineState{e: Engine{}.withDefaults(), configured: Engine{}.withDefaults()}
		m.engines[backend] = es
	}
	return es
}
