package kvcache

import (
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

// indexer is a llama-server-like backend that can serve index.
var indexer = Engine{Capabilities: Capabilities{Constrains: true, CachesPrefixes: true, Index: true}}

// Index's session worked out by hand: prefill 10 ms a call and 1 ms a token, no context
// term; constrained decode 3 ms a token and 2 µs a token per token of context (plain
// decode differs, so a plain decode would show). The definitions a load adds (50 tokens)
// come in its result, at the end: prefilled once, and read by every later decode.
func TestSessionSeconds_IndexHandComputed(t *testing.T) {
	e := Engine{
		Capabilities:      Capabilities{Constrains: true, CachesPrefixes: true, Index: true},
		Prefill:           PrefillCost{Fixed: 0.01, PerToken: 0.001},
		Decode:            DecodeCost{PerToken: 0.002, PerTokenContext: 1e-6},
		ConstrainedDecode: DecodeCost{PerToken: 0.003, PerTokenContext: 2e-6},
	}
	cat := CatalogSize{Tools: 5, Tokens: 1000, MetaTokens: 100, IndexTokens: 300}
	w := Workload{TurnsPerSession: 2, InputTokensPerTurn: 100, OutputTokensPerTurn: 10, LoadsPerSession: 2, TokensPerLoad: 50, StraysPerTurn: 0.5}
	// decode(c, n) = 0.003 n + 2e-6 (n c + n(n-1)/2)
	// The index, 300 tokens, prefilled once: 0.3.
	// Turn 1: input 100 on 300 cached: 0.11. The load_tool call, 20 tokens decoded over
	// 400: 0.06 + 2e-6 (8000 + 190) = 0.07638. Its round, 20 + 40 + the 50 tokens of
	// definitions, prefilled on 400 cached: 0.12. The answer, 10 tokens over 510:
	// 0.03 + 2e-6 (5100 + 45) = 0.04029. Conversation: 220.
	// Turn 2: input 0.11; the call over 620: 0.06 + 2e-6 (12400 + 190) = 0.08518; the
	// round 0.12; the answer over 730: 0.03 + 2e-6 (7300 + 45) = 0.04469. Conversation 440.
	want := 0.3 + (0.11 + 0.07638 + 0.12 + 0.04029) + (0.11 + 0.08518 + 0.12 + 0.04469)
	secs, ctx := session(StrategyIndex, w, cat, 1, e)
	if !near(secs, want, 1e-9) || !near(ctx, 300+440, 1e-9) {
		t.Errorf("index: %.6f s ending at %v tokens, want %.6f s at 740", secs, ctx, want)
	}
	// Ten sessions share one prefill of the index: 0.03 instead of 0.3.
	if got := sessionSeconds(StrategyIndex, w, cat, 10, e); !near(got, want-0.27, 1e-9) {
		t.Errorf("index shared by 10: %.6f, want %.6f", got, want-0.27)
	}
	// Remove decodes unconstrained over its own context and ends at the 100 meta-tool
	// tokens, two loads' 50 and two turns of 100 + 60 + 10: 540. Mask, over the whole
	// catalog: 1100 + 340 = 1440.
	for s, want := range map[Strategy]float64{StrategyRemove: 540, StrategyMask: 1440, StrategyEager: 1220, StrategyValidate: 1500} {
		if _, got := session(s, w, cat, 1, e); !near(got, want, 1e-9) {
			t.Errorf("%s ends at %v tokens, want %v", s, got, want)
		}
	}
	// Index breaks like any other: its 300 tokens prefilled (0.3), then each live
	// session's half conversation (110 tokens, 0.11) behind them.
	if got, want := breakSeconds(StrategyIndex, w, cat, 3, e), 0.3+3*0.11; !near(got, want, 1e-9) {
		t.Errorf("break to index: %.4f, want %.4f", got, want)
	}
}

// The window rules a strategy out by the context its session ends with (worked out in
// TestSessionSeconds_IndexHandComputed: eager 1220, mask 1440, remove 540, validate
// 1500, index 740); where no whole session fits, by its first turn; where nothing fits
// at all, by nothing.
func TestOpenStrategies_ContextWindow(t *testing.T) {
	e := indexer
	cat := CatalogSize{Tools: 5, Tokens: 1000, MetaTokens: 100, IndexTokens: 300}
	w := Workload{TurnsPerSession: 2, InputTokensPerTurn: 100, OutputTokensPerTurn: 10, LoadsPerSession: 2, TokensPerLoad: 50, StraysPerTurn: 0.5}
	all := []Strategy{StrategyEager, StrategyMask, StrategyRemove, StrategyValidate, StrategyIndex}
	for _, tc := range []struct {
		window      int
		open, unfit []Strategy
	}{
		{0, all, nil},
		{1500, all, nil},
		{1440, []Strategy{StrategyEager, StrategyMask, StrategyRemove, StrategyIndex}, []Strategy{StrategyValidate}},
		{1000, []Strategy{StrategyRemove, StrategyIndex}, []Strategy{StrategyEager, StrategyMask, StrategyValidate}},
		{740, []Strategy{StrategyRemove, StrategyIndex}, []Strategy{StrategyEager, StrategyMask, StrategyValidate}},
		{739, []Strategy{StrategyRemove}, []Strategy{StrategyEager, StrategyMask, StrategyValidate, StrategyIndex}},
		// No whole session fits 500. The first turn alone, with one load: remove
		// 100 + 50 + 170 = 320 fits; index 300 + 100 + 110 + 10 = 520 does not.
		{500, []Strategy{StrategyRemove}, []Strategy{StrategyEager, StrategyMask, StrategyValidate, StrategyIndex}},
		// Not even remove's first turn fits: every strategy is weighed.
		{300, all, nil},
	} {
		e.ContextTokens = tc.window
		open, unfit := openStrategies(e, w, cat, DefaultEagerMaxTools)
		if !cmp.Equal(open, tc.open) || !cmp.Equal(unfit, tc.unfit) {
			t.Errorf("window %d: open %v, unfit %v; want %v, %v", tc.window, open, unfit, tc.open, tc.unfit)
		}
	}
}

// A 500-tool catalog of 73,000 tokens (an index of 11,000) on a 64k context: mask's tools
// alone outgrow it, so mask and validate are never weighed, and auto serves index where
// it beats remove: long sessions (30 turns of 1,000 tokens, 10 loads), and agent sessions
// shared by many (12 turns of 800 tokens, 6 loads, a hundred sessions).
func TestCostModel_HugeCatalogOnASmallContextGetsIndex(t *testing.T) {
	cat := CatalogSize{Tools: 500, Tokens: 73000, MetaTokens: 450, IndexTokens: 11000}
	e := indexer
	e.ContextTokens = 65536
	for _, tc := range []struct {
		name     string
		w        Workload
		sessions int
		// ends: the context index's session ends with, by hand: the index, every
		// turn's input and answer, and every load's round with its definitions.
		ends float64
	}{
		{"long", long, 1, 11000 + 30*(1000+50) + 10*(20+40+450)},
		{"agent", agent, 100, 11000 + 12*(800+50) + 6*(20+40+450)},
	} {
		m, _ := newModel(e, tc.w)
		reg := prometheus.NewPedanticRegistry()
		if err := m.Register(reg); err != nil {
			t.Fatal(err)
		}
		m.ObserveCatalog("p", "gpu0", cat)
		for round := range 4 {
			play(m, "p", tc.sessions, tc.w)
			d := m.Decide("p", "gpu0")
			if _, ok := d.Seconds(StrategyMask); ok || d.Strategy == StrategyMask {
				t.Errorf("%s, round %d: mask weighed or served (%s; %+v)", tc.name, round, d.Strategy, d.Estimates)
			}
			if !cmp.Equal(d.Unfit, []Strategy{StrategyMask, StrategyValidate}) || !strings.Contains(d.Reason, "65536-token context") {
				t.Errorf("%s, round %d: unfit %v (%s), want mask and validate named", tc.name, round, d.Unfit, d.Reason)
			}
			idx, _ := d.Seconds(StrategyIndex)
			rm, _ := d.Seconds(StrategyRemove)
			if d.Strategy != StrategyIndex || !(idx < rm) {
				t.Errorf("%s, round %d: %s, index %.3fs against remove %.3fs (%s)", tc.name, round, d.Strategy, idx, rm, d.Reason)
			}
		}
		// The window is where index's session ends: one token less and it is out too.
		if _, c := session(StrategyIndex, tc.w, cat, 1, e); !near(c, tc.ends, 1e-6) {
			t.Errorf("%s: index ends at %v tokens, want %v", tc.name, c, tc.ends)
		}
		m.ObserveContext("gpu0", int(tc.ends)-1)
		if d := m.Decide("p", "gpu0"); d.Strategy != StrategyRemove || !slices.Contains(d.Unfit, StrategyIndex) {
			t.Errorf("%s: with %d tokens of context: %s, unfit %v (%s), want remove", tc.name, int(tc.ends)-1, d.Strategy, d.Unfit, d.Reason)
		}
		want := "# HELP maskgate_auto_engine_context_tokens The context window per request the auto strategy holds each backend's sessions to, configured (context_window) or reported by the engine; absent where unknown. A strategy whose modelled session outgrows it is not weighed.\n" +
			"# TYPE maskgate_auto_engine_context_tokens gauge\n" +
			"maskgate_auto_engine_context_tokens{backend=\"gpu0\"} " + strconv.Itoa(int(tc.ends)-1) + "\n"
		if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "maskgate_auto_engine_context_tokens"); err != nil {
			t.Errorf("%s: %v", tc.name, err)
		}
	}
}

// On linear costs (prefill 10 ms a call and 1 ms a token; decode 2 ms a token, no
// context term: a cheap decode) mask and index differ only in what they prefill: mask its
// 4,950-token catalog once per shared sessions, index its 1,100-token index once per
// shared sessions and each load's 300 tokens of definitions. Two loads: index costs
// 0.001 × (600 − 3,850/shared) s more than mask. So many sessions sharing the catalog
// keep mask, one alone goes to index. Remove and index differ in what a load prefills:
// remove the conversation before it again (one load after 300 input tokens), index its
// own 650 tokens more than the meta-tools: one short session alone keeps remove.
func TestCostModel_MaskAndRemoveStillWinWhereTheyShould(t *testing.T) {
	e := indexer
	e.Prefill = PrefillCost{Fixed: 0.01, PerToken: 0.001}
	e.Decode = DecodeCost{PerToken: 0.002}
	cat := CatalogSize{Tools: 30, Tokens: 4500, MetaTokens: 450, IndexTokens: 1100}
	agentish := Workload{TurnsPerSession: 4, InputTokensPerTurn: 200, OutputTokensPerTurn: 30, LoadsPerSession: 2, TokensPerLoad: 300}
	short := Workload{TurnsPerSession: 1, InputTokensPerTurn: 300, OutputTokensPerTurn: 80, LoadsPerSession: 1, TokensPerLoad: 300}
	for _, tc := range []struct {
		name     string
		w        Workload
		sessions int
		want     Strategy
		// than is the strategy want is compared with, and by how many seconds it is
		// cheaper, by hand.
		than  Strategy
		saves float64
	}{
		{"many sessions", agentish, 100, StrategyMask, StrategyIndex, 0.001 * (600 - 3850.0/100)},
		{"one session", agentish, 1, StrategyIndex, StrategyMask, 0.001 * (3850 - 600)},
		// Remove re-prefills the 300 input tokens before its load; index prefills
		// 1,100 − 450 = 650 tokens more of tools.
		{"one short session", short, 1, StrategyRemove, StrategyIndex, 0.001 * (650 - 300)},
	} {
		m, _ := newModel(e, tc.w)
		m.ObserveCatalog("p", "gpu0", cat)
		play(m, "p", tc.sessions, tc.w)
		d := m.Decide("p", "gpu0")
		got, _ := d.Seconds(tc.want)
		other, _ := d.Seconds(tc.than)
		if d.Strategy != tc.want || !near(other-got, tc.saves, 1e-9) {
			t.Errorf("%s: %s; %s %.4fs, %s %.4fs, want %s cheaper by %.4fs (%+v)", tc.name, d.Strategy, tc.want, got, tc.than, other, tc.want, tc.saves, d.Estimates)
		}
	}
}

// A profile on mask leaves it at once when the engine reports a window its sessions
// outgrow, rather than after the hysteresis: a strategy that does not fit is not open.
func TestCostModel_AWindowReportedLaterLeavesMaskAtOnce(t *testing.T) {
	e := indexer
	e.Prefill = PrefillCost{Fixed: 0.01, PerToken: 0.001}
	e.Decode = DecodeCost{PerToken: 0.002}
	cat := CatalogSize{Tools: 30, Tokens: 4500, MetaTokens: 450, IndexTokens: 1100}
	w := Workload{TurnsPerSession: 4, InputTokensPerTurn: 200, OutputTokensPerTurn: 30, LoadsPerSession: 2, TokensPerLoad: 300}
	m, _ := newModel(e, w)
	m.ObserveCatalog("p", "gpu0", cat)
	play(m, "p", 100, w)
	if d := m.Decide("p", "gpu0"); d.Strategy != StrategyMask {
		t.Fatalf("before the window: %s (%s), want mask", d.Strategy, d.Reason)
	}
	// Mask ends at 4,950 + 4 × 230 + 2 × 60 = 5,990 tokens; index at 1,100 + 920 +
	// 2 × 360 = 2,740.
	m.ObserveContext("gpu0", 4096)
	d := m.Decide("p", "gpu0")
	if d.Strategy != StrategyIndex || !d.Switched || !strings.Contains(d.Reason, "mask is not open") {
		t.Errorf("with a 4096-token window: %s switched %v (%s), want index at once", d.Strategy, d.Switched, d.Reason)
	}
	if got := m.ContextTokens("gpu0"); got != 4096 {
		t.Errorf("window %d, want 4096", got)
	}
	m.ObserveContext("gpu0", 0) // says nothing
	if got := m.ContextTokens("gpu0"); got != 4096 {
		t.Errorf("after a zero report: window %d, want 4096 still", got)
	}
}

// Index is weighed only where the backend can serve it and the index's size is known.
func TestCostModel_IndexOnlyWhereTheBackendServesIt(t *testing.T) {
	cat := CatalogSize{Tools: 500, Tokens: 73000, MetaTokens: 450, IndexTokens: 11000}
	noIndex := cat
	noIndex.IndexTokens = 0
	for _, tc := range []struct {
		name string
		caps Capabilities
		cat  CatalogSize
		want bool
	}{
		{"a constraining backend without Index", constrainer.Capabilities, cat, false},
		{"an Index backend", indexer.Capabilities, cat, true},
		{"an Index backend, the index unmeasured", indexer.Capabilities, noIndex, false},
		{"a hosted loader", Capabilities{CachesPrefixes: true, Index: true}, cat, true},
	} {
		m, _ := newModel(Engine{Capabilities: tc.caps}, long)
		m.ObserveCatalog("p", "gpu0", tc.cat)
		play(m, "p", 1, long)
		d := m.Decide("p", "gpu0")
		if _, got := d.Seconds(StrategyIndex); got != tc.want || (!tc.want && d.Strategy == StrategyIndex) {
			t.Errorf("%s: index weighed %v, want %v; served %s", tc.name, got, tc.want, d.Strategy)
		}
	}
}
