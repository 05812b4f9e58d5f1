package kvcache

import (
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// clock is an injected clock that moves only when told.
type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time { return c.t }

var (
	constrainer = Engine{Capabilities: Capabilities{Constrains: true, CachesPrefixes: true}}
	// agent: tool results make the conversation grow fast; answers are short.
	agent = Workload{TurnsPerSession: 12, InputTokensPerTurn: 800, OutputTokensPerTurn: 50, LoadsPerSession: 6, TokensPerLoad: 450, StraysPerTurn: 0.05}
	// long: an agent with long sessions and many loads.
	long       = Workload{TurnsPerSession: 30, InputTokensPerTurn: 1000, OutputTokensPerTurn: 50, LoadsPerSession: 10, TokensPerLoad: 450, StraysPerTurn: 0.05}
	largeCat   = CatalogSize{Tools: 150, Tokens: 20000, MetaTokens: 450}
	hugeCat    = CatalogSize{Tools: 500, Tokens: 75000, MetaTokens: 450}
	approxOpts = cmpopts.EquateApprox(0, 1e-9)
)

// newModel returns a model of one backend, "gpu0", with prior w and a clock.
func newModel(e Engine, w Workload) (*CostModel, *fakeClock) {
	c := &fakeClock{t: time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)}
	m := NewCostModel(Options{Engines: map[string]Engine{"gpu0": e}, Prior: w, Now: c.now})
	return m, c
}

// play observes n sessions shaped like w: whole turns, one load per turn from the
// first, no strays.
func play(m *CostModel, profile string, n int, w Workload) {
	turns := int(math.Round(w.TurnsPerSession))
	for range n {
		m.ObserveSession(profile, "gpu0")
		for i := range turns {
			t := Turn{Input: int(w.InputTokensPerTurn), Output: int(w.OutputTokensPerTurn)}
			if i < int(w.LoadsPerSession) {
				t.Loads, t.LoadedTokens = 1, int(w.TokensPerLoad)
			}
			m.ObserveTurn(profile, "gpu0", t)
		}
	}
}

// Hand-computed with Fixed 10 ms, 1 ms per token, no context term, 2 ms per output
// token: see each case.
func TestSessionSeconds_HandComputed(t *testing.T) {
	e := Engine{
		Capabilities: Capabilities{CachesPrefixes: true},
		Prefill:      PrefillCost{Fixed: 0.01, PerToken: 0.001},
		Decode:       DecodeCost{PerToken: 0.002},
	}
	cat := CatalogSize{Tools: 5, Tokens: 1000, MetaTokens: 100}
	w := Workload{TurnsPerSession: 2, InputTokensPerTurn: 100, OutputTokensPerTurn: 10, LoadsPerSession: 2, TokensPerLoad: 50, StraysPerTurn: 0.5}
	for _, tc := range []struct {
		s      Strategy
		shared float64
		want   float64
	}{
		// Tools 1000 prefilled once (1.0); per turn input 0.11 + answer 0.02.
		{StrategyEager, 1, 1.0 + 2*0.13},
		// Tools 1100 (1.1); per turn input 0.11, a load (call decoded 0.04 + 60 tokens
		// prefilled 0.07), answer 0.02.
		{StrategyMask, 1, 1.1 + 2*0.24},
		{StrategyAllowedTools, 1, 1.1 + 2*0.24},
		// Tools 100 (0.1). Turn 1: input 0.11; load 0.04 + the 50 new tools, the 100
		// conversation tokens and the 60 of the round recomputed (0.22); answer 0.02.
		// Turn 2: input 0.11; load 0.04 + 50 + 270 + 60 tokens (0.39); answer 0.02.
		{StrategyRemove, 1, 0.1 + 0.39 + 0.56},
		// As mask, plus half a stray per turn: 0.06 decoded + 0.07 prefilled.
		{StrategyValidate, 1, 1.1 + 2*0.305},
		// Ten sessions share one prefill of the tools.
		{StrategyEager, 10, 0.1 + 2*0.13},
		{StrategyMask, 10, 0.11 + 2*0.24},
		{StrategyRemove, 10, 0.01 + 0.39 + 0.56},
		{StrategyValidate, 10, 0.11 + 2*0.305},
	} {
		if got := sessionSeconds(tc.s, w, cat, tc.shared, e); !near(got, tc.want, 1e-9) {
			t.Errorf("%s shared by %v: %.4f, want %.4f", tc.s, tc.shared, got, tc.want)
		}
	}
	// Without a prefix cache every call recomputes its prompt: 1110 then 1210 tokens.
	e.CachesPrefixes = false
	if got, want := sessionSeconds(StrategyEager, w, cat, 10, e), 1.11+0.02+1.22+0.02; !near(got, want, 1e-9) {
		t.Errorf("eager without a cache: %.4f, want %.4f", got, want)
	}
	if got := breakSeconds(StrategyMask, w, cat, 3, e); got != 0 {
		t.Errorf("breaking nothing cached costs %v", got)
	}
	e.CachesPrefixes = true
	// Tools 1100 (1.1), then 3 live sessions each recompute one turn's 110 tokens (0.11).
	if got, want := breakSeconds(StrategyMask, w, cat, 3, e), 1.1+3*0.11; !near(got, want, 1e-9) {
		t.Errorf("break cost %.4f, want %.4f", got, want)
	}
}

func TestCostModel_WorkloadBlendsPriorAsOneSession(t *testing.T) {
	prior := Workload{TurnsPerSession: 8, InputTokensPerTurn: 400, OutputTokensPerTurn: 100, LoadsPerSession: 2, TokensPerLoad: 300, StraysPerTurn: 0.05}
	m, _ := newModel(constrainer, prior)
	m.ObserveCatalog("p", "gpu0", largeCat)
	m.ObserveSession("p", "gpu0")
	m.ObserveTurn("p", "gpu0", Turn{Input: 1000, Output: 50, Loads: 1, LoadedTokens: 600, Strays: 1})
	m.ObserveTurn("p", "gpu0", Turn{Input: 600, Output: 150, Strays: 3, Constrained: true})
	want := Workload{
		TurnsPerSession:     (8 + 2) / 2.0,
		InputTokensPerTurn:  (400*8 + 1600) / 10.0,
		OutputTokensPerTurn: (100*8 + 200) / 10.0,
		LoadsPerSession:     (2 + 1) / 2.0,
		TokensPerLoad:       (300*2 + 600) / 3.0,
		StraysPerTurn:       (0.05*8 + 1) / 9, // the constrained turn's strays do not count
	}
	if diff := cmp.Diff(want, m.Decide("p", "gpu0").Workload, approxOpts); diff != "" {
		t.Errorf("workload (-want +got):\n%s", diff)
	}

	// The prior's own defaults; a load defaults to two average tools of the catalog.
	m, _ = newModel(constrainer, Workload{})
	m.ObserveCatalog("p", "gpu0", CatalogSize{Tools: 10, Tokens: 1500, MetaTokens: 450})
	want = Workload{TurnsPerSession: 8, InputTokensPerTurn: 400, OutputTokensPerTurn: 100, LoadsPerSession: 2, TokensPerLoad: 300, StraysPerTurn: 0.05}
	if diff := cmp.Diff(want, m.Decide("p", "gpu0").Workload, approxOpts); diff != "" {
		t.Errorf("default workload (-want +got):\n%s", diff)
	}
}

func TestCostModel_NoCatalogYetFallsBackOnCapabilities(t *testing.T) {
	for _, tc := range []struct {
		caps Capabilities
		want Strategy
	}{
		{Capabilities{Constrains: true, CachesPrefixes: true}, StrategyMask},
		{Capabilities{AllowedTools: true}, StrategyAllowedTools},
		{Capabilities{CachesPrefixes: true}, StrategyRemove},
	} {
		m, _ := newModel(Engine{Capabilities: tc.caps}, Workload{})
		d := m.Decide("p", "gpu0")
		if d.Strategy != tc.want || len(d.Estimates) != 0 {
			t.Errorf("%+v: %s with %d estimates, want %s with none", tc.caps, d.Strategy, len(d.Estimates), tc.want)
		}
	}
}

func TestCostModel_OneShortSessionSmallCatalog(t *testing.T) {
	short := Workload{TurnsPerSession: 1, InputTokensPerTurn: 300, OutputTokensPerTurn: 80, LoadsPerSession: 1, TokensPerLoad: 300, StraysPerTurn: 0.05}
	for _, tc := range []struct {
		cat  CatalogSize
		want Strategy
	}{
		{CatalogSize{Tools: 12, Tokens: 1800, MetaTokens: 450}, StrategyEager},
		// Same tokens, too many tools for eager: the meta-tools and one load beat
		// prefilling the whole catalog for one session.
		{CatalogSize{Tools: 30, Tokens: 1800, MetaTokens: 450}, StrategyRemove},
	} {
		m, _ := newModel(constrainer, short)
		m.ObserveCatalog("p", "gpu0", tc.cat)
		play(m, "p", 1, short)
		if d := m.Decide("p", "gpu0"); d.Strategy != tc.want {
			t.Errorf("%d tools: %s (%s), want %s; estimates %+v", tc.cat.Tools, d.Strategy, d.Reason, tc.want, d.Estimates)
		}
	}
}

func TestCostModel_ManySessionsOfALargeCatalogGetMask(t *testing.T) {
	for _, tc := range []struct {
		sessions int
		want     Strategy
	}{
		{1, StrategyRemove}, // one session pays the whole catalog prefill alone
		{100, StrategyMask}, // a hundred share it
	} {
		m, _ := newModel(constrainer, agent)
		m.ObserveCatalog("p", "gpu0", largeCat)
		play(m, "p", tc.sessions, agent)
		d := m.Decide("p", "gpu0")
		if d.Strategy != tc.want || d.Shared != float64(tc.sessions) {
			t.Errorf("%d sessions: %s shared by %v (%s), want %s; estimates %+v", tc.sessions, d.Strategy, d.Shared, d.Reason, tc.want, d.Estimates)
		}
	}
}

func TestCostModel_OnlyStrategiesTheBackendCanDo(t *testing.T) {
	for _, tc := range []struct {
		caps   Capabilities
		want   Strategy
		others []Strategy
	}{
		{Capabilities{CachesPrefixes: true}, StrategyValidate, []Strategy{StrategyRemove, StrategyValidate}},
		{Capabilities{AllowedTools: true, CachesPrefixes: true}, StrategyAllowedTools, []Strategy{StrategyAllowedTools, StrategyRemove, StrategyValidate}},
		{Capabilities{}, StrategyRemove, []Strategy{StrategyRemove}},
	} {
		m, _ := newModel(Engine{Capabilities: tc.caps}, agent)
		m.ObserveCatalog("p", "gpu0", largeCat)
		play(m, "p", 100, agent) // the case where mask wins when it can
		d := m.Decide("p", "gpu0")
		var got []Strategy
		for _, e := range d.Estimates {
			got = append(got, e.Strategy)
		}
		if d.Strategy != tc.want || !cmp.Equal(got, tc.others) {
			t.Errorf("%+v: %s among %v, want %s among %v", tc.caps, d.Strategy, got, tc.want, tc.others)
		}
	}
}

// Sharing moves mask from 12% dearer than remove to 4% cheaper and back: within the
// margin, so the strategy stays put.
func TestCostModel_HysteresisDoesNotFlap(t *testing.T) {
	m, clk := newModel(constrainer, agent)
	m.ObserveCatalog("p", "gpu0", largeCat)
	play(m, "p", 1, agent)
	if d := m.Decide("p", "gpu0"); d.Strategy != StrategyRemove {
		t.Fatalf("first decision %s, want remove", d.Strategy)
	}
	for round := range 4 {
		play(m, "p", 99, agent)
		d := m.Decide("p", "gpu0")
		mask, _ := d.Seconds(StrategyMask)
		remove, _ := d.Seconds(StrategyRemove)
		if !(mask < remove && mask > 0.9*remove) {
			t.Fatalf("round %d: the premise fails: mask %.3f, remove %.3f", round, mask, remove)
		}
		if d.Strategy != StrategyRemove || d.Switched || !strings.Contains(d.Reason, "within the 10% margin") {
			t.Errorf("round %d, shared: %s, switched %v (%s)", round, d.Strategy, d.Switched, d.Reason)
		}
		clk.t = clk.t.Add(DefaultResidency + time.Second) // every session expires
		play(m, "p", 1, agent)
		if d := m.Decide("p", "gpu0"); d.Strategy != StrategyRemove || d.Shared != 1 {
			t.Errorf("round %d, alone: %s shared by %v (%s)", round, d.Strategy, d.Shared, d.Reason)
		}
	}
}

func TestCostModel_SwitchesAfterConfirmDecisions(t *testing.T) {
	m, _ := newModel(constrainer, long)
	m.ObserveCatalog("p", "gpu0", hugeCat) // attention over 75k tokens: remove is cheaper
	play(m, "p", 100, long)
	if d := m.Decide("p", "gpu0"); d.Strategy != StrategyRemove {
		t.Fatalf("with the huge catalog: %s (%+v), want remove", d.Strategy, d.Estimates)
	}
	// The catalog shrinks: mask is a third cheaper. Confirm is 3 by default.
	m.ObserveCatalog("p", "gpu0", largeCat)
	for i := 1; i <= 3; i++ {
		d := m.Decide("p", "gpu0")
		if i < 3 && (d.Strategy != StrategyRemove || d.Switched) {
			t.Errorf("decision %d: %s (%s), want to stay on remove", i, d.Strategy, d.Reason)
		}
		if i == 3 && (d.Strategy != StrategyMask || !d.Switched || d.Previous != StrategyRemove) {
			t.Errorf("decision %d: %s switched %v from %s (%s), want remove → mask", i, d.Strategy, d.Switched, d.Previous, d.Reason)
		}
	}
	if d := m.Decide("p", "gpu0"); d.Strategy != StrategyMask || d.Switched {
		t.Errorf("after the switch: %s switched %v", d.Strategy, d.Switched)
	}
}

func TestCostModel_BreakCostHoldsASmallSaving(t *testing.T) {
	w := agent
	w.LoadsPerSession = 12
	m, _ := newModel(constrainer, w)
	m.ObserveCatalog("p", "gpu0", hugeCat)
	play(m, "p", 1, w)
	if d := m.Decide("p", "gpu0"); d.Strategy != StrategyRemove {
		t.Fatalf("with the huge catalog: %s (%+v), want remove", d.Strategy, d.Estimates)
	}
	m.ObserveCatalog("p", "gpu0", largeCat)
	for i := 1; i <= 6; i++ {
		d := m.Decide("p", "gpu0")
		mask, _ := d.Seconds(StrategyMask)
		remove, _ := d.Seconds(StrategyRemove)
		if brk := breakSeconds(StrategyMask, d.Workload, largeCat, 1, constrainer.withDefaults()); !(mask < 0.9*remove && remove-mask < brk) {
			t.Fatalf("the premise fails: mask %.3f, remove %.3f, break %.3f", mask, remove, brk)
		}
		if d.Strategy != StrategyRemove {
			t.Fatalf("decision %d: %s (%s), want remove", i, d.Strategy, d.Reason)
		}
		if i >= 3 && !strings.Contains(d.Reason, "breaking the cached prefix") {
			t.Errorf("decision %d: reason %q", i, d.Reason)
		}
	}
	play(m, "p", 9, w) // ten sessions to share the saving
	if d := m.Decide("p", "gpu0"); d.Strategy != StrategyMask || !d.Switched {
		t.Errorf("with ten sessions: %s (%s), want a switch to mask", d.Strategy, d.Reason)
	}
}

func TestCostModel_MeasuredPrefillReplacesTheDefault(t *testing.T) {
	m, _ := newModel(constrainer, agent)
	truth := PrefillCost{Fixed: 0.02, PerToken: 2e-5, PerTokenContext: 1e-9}
	shapes := [][2]int{{0, 100}, {0, 3000}, {0, 20000}, {5000, 200}, {5000, 4000}, {30000, 100}, {30000, 1000}, {60000, 500}}
	for i, s := range shapes {
		m.ObservePrefill("gpu0", PrefillSample{s[0], s[1], truth.Seconds(s[0], s[1])})
		got := m.Prefill("gpu0")
		if i < len(shapes)-1 && got != DefaultPrefill() {
			t.Fatalf("after %d samples: %+v, want the default still", i+1, got)
		}
	}
	got := m.Prefill("gpu0")
	if !near(got.Fixed, truth.Fixed, 1e-9) || !near(got.PerToken, truth.PerToken, 1e-12) || !near(got.PerTokenContext, truth.PerTokenContext, 1e-16) {
		t.Errorf("after 8 samples: %+v, want %+v", got, truth)
	}
}

// The prior decides until a whole session has been measured; then the measurement
// overrules it at once (beyond the margin), not after Confirm decisions, and the prior no
// longer counts in the workload.
func TestCostModel_FirstMeasuredSessionOverrulesThePrior(t *testing.T) {
	prior := Workload{TurnsPerSession: 30, InputTokensPerTurn: 1000, OutputTokensPerTurn: 50, LoadsPerSession: 20, TokensPerLoad: 450, StraysPerTurn: 0.05}
	short := Workload{TurnsPerSession: 4, InputTokensPerTurn: 100, OutputTokensPerTurn: 20, LoadsPerSession: 1, TokensPerLoad: 200, StraysPerTurn: 0.05}
	m, _ := newModel(constrainer, prior)
	m.ObserveCatalog("p", "gpu0", largeCat)
	if d := m.Decide("p", "gpu0"); d.Strategy != StrategyMask {
		t.Fatalf("on the prior (long sessions, many loads): %s, want mask", d.Strategy)
	}
	play(m, "p", 1, short)
	if d := m.Decide("p", "gpu0"); d.Strategy != StrategyMask {
		t.Errorf("mid-first-session: %s; the prior should still stand (%s)", d.Strategy, d.Reason)
	}
	m.ObserveSession("p", "gpu0") // the second session starts: the first is whole
	d := m.Decide("p", "gpu0")
	if d.Strategy != StrategyRemove || !d.Switched || !strings.Contains(d.Reason, "first session measured") {
		t.Errorf("after one measured session: %s switched %v (%s)", d.Strategy, d.Switched, d.Reason)
	}
	if w := d.Workload; w.OutputTokensPerTurn != short.OutputTokensPerTurn || w.TurnsPerSession != 4.0/2 {
		// Two sessions observed (the second has no turns yet), four turns: the prior's
		// 50 tokens a turn no longer count.
		t.Errorf("workload %+v still blends the prior", w)
	}
}

// Turns whose sessions were never seen starting (conversations that began before a
// restart) make one long session, not an unbounded one: the workload stops at
// MaxTurnsPerSession turns, and a decision costs the same after 100,000 such turns as
// after 300.
func TestDecide_TurnsWithoutSessionsAreBounded(t *testing.T) {
	m, _ := newModel(constrainer, agent)
	m.ObserveCatalog("p", "gpu0", largeCat)
	for range 100_000 {
		m.ObserveTurn("p", "gpu0", Turn{Input: 800, Output: 50})
	}
	d := m.Decide("p", "gpu0")
	if d.Workload.TurnsPerSession != MaxTurnsPerSession {
		t.Errorf("turns per session %v after 100,000 turns and no session, want %d", d.Workload.TurnsPerSession, MaxTurnsPerSession)
	}
	if s, _ := d.Seconds(StrategyMask); s <= 0 || math.IsInf(s, 0) || math.IsNaN(s) {
		t.Errorf("mask's estimate %v", s)
	}
}

// BenchmarkDecide is one decision of a profile that has seen many turns: what every
// managed request under auto asks, under the model's lock.
func BenchmarkDecide(b *testing.B) {
	for _, turns := range []int{300, 100_000} {
		b.Run(fmt.Sprintf("turns=%d", turns), func(b *testing.B) {
			m, _ := newModel(constrainer, agent)
			m.ObserveCatalog("p", "gpu0", largeCat)
			for range turns {
				m.ObserveTurn("p", "gpu0", Turn{Input: 800, Output: 50})
			}
			b.ReportAllocs()
			for b.Loop() {
				m.Decide("p", "gpu0")
			}
		})
	}
}
