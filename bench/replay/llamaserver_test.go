package main

import (
	"context"
	"fmt"
	"math"
	"testing"

	"github.com/maskgate/maskgate/gateway"
	"github.com/maskgate/maskgate/internal/enginetest"
	"github.com/maskgate/maskgate/kvcache"
)

// TestLlamaServer_AutoFitsTheEnginesCosts replays one profile's sessions on a real
// llama-server (the tiny random-weight model, built from llama.cpp's source) under mask,
// remove and auto. Mask and remove are the test's ground truth: their engine seconds per
// session, timed at the backend call by the replay's own clock. Auto's cost model must
// have replaced the H200 defaults with costs fitted to this engine's own timings, and
// where its fitted estimates differ by more than its 10 % margin they must rank the two
// strategies as the engine's seconds did.
//
// What it cannot tell: whether auto's choice follows the fit. On this workload the H200
// defaults choose remove as well (the test logs their choice), so the strategy auto
// serves would be the same with the fit ignored; the served strategy is checked against
// the ground truth all the same, which catches an auto that serves the dearer one. A
// workload where the two disagree was tried (20 tools, configured costs that favour
// mask): auto kept mask for all three sessions though remove cost 77 % less (4.4 s
// against 19.6 s a session on a loaded machine), its fit seeing only the strategy it
// served and its hysteresis needing three decisions in a row, at 1,465 s a run. So the
// claim that auto follows the engine's costs is not made; docs/strategies.md says so.
func TestLlamaServer_AutoFitsTheEnginesCosts(t *testing.T) {
	// Two threads, not enginetest.Threads: on one, the prefill timings of this workload's
	// short prompts left the fit without a per-token term in 2 of 5 runs on a loaded
	// machine (auto then keeps its configured costs, and the test fails).
	srv := enginetest.StartLlamaServer(t, enginetest.LlamaServerOptions{CtxSize: 32768, Args: []string{"--threads", "2"}})
	c := Config{Target: TargetURL, Kind: "llamacpp", URL: srv.URL, Model: "tiny", Seed: 3, Catalogs: []int{100},
		Scenarios: []string{ScenarioProfile}, Sessions: 3, Turns: 8, Gen: 12,
		Strategies: []string{string(gateway.StrategyMask), string(gateway.StrategyRemove), string(gateway.StrategyAuto)}}.withDefaults()
	tg, err := newTarget(c)
	if err != nil {
		t.Fatal(err)
	}
	defer tg.close()
	rep, err := Replay(context.Background(), c, tg)
	if err != nil {
		t.Fatal(err)
	}
	checkSane(t, rep)
	runs := map[string]*RunResult{}
	for i := range rep.Runs {
		runs[rep.Runs[i].Strategy] = &rep.Runs[i]
	}
	mask, remove, auto := runs["mask"], runs["remove"], runs["auto"]
	for _, r := range []*RunResult{mask, remove} {
		t.Logf("%s: %.3f engine s/session (sessions %.3f, %.3f, %.3f), computed tokens %d in the first session, %.0f in later ones, hit rate %.3f",
			r.Strategy, r.EngineSeconds, r.Sessions[0].EngineSeconds, r.Sessions[1].EngineSeconds, r.Sessions[2].EngineSeconds,
			r.ComputedFirst, r.ComputedLater, r.HitRate)
	}
	a := auto.Auto
	if a == nil {
		t.Fatal("the auto run reported no cost model")
	}
	t.Logf("auto: prefill %+v (fitted %v), decode %+v (fitted %v)", a.Prefill, a.PrefillMeasured, a.Decode, a.DecodeMeasured)
	t.Logf("auto: next decision %s: %s; estimates %+v", a.Decision.Strategy, a.Decision.Reason, a.Decision.Estimates)
	if !a.PrefillMeasured || !a.DecodeMeasured {
		t.Fatalf("auto still uses configured costs (prefill fitted %v, decode fitted %v): the engine's timings did not reach it",
			a.PrefillMeasured, a.DecodeMeasured)
	}
	if a.Prefill == kvcache.DefaultPrefill() || a.Decode == kvcache.DefaultDecode() {
		t.Fatalf("fitted costs equal the H200 defaults: %+v %+v", a.Prefill, a.Decode)
	}

	cheaper, dearer := mask, remove
	if remove.EngineSeconds < mask.EngineSeconds {
		cheaper, dearer = remove, mask
	}
	gap := 1 - cheaper.EngineSeconds/dearer.EngineSeconds
	served := make([]string, len(auto.Sessions))
	for i, s := range auto.Sessions {
		served[i] = s.Turns[0].Strategy
	}
	t.Logf("measured: %s is %.1f%% cheaper per session; auto served %v", cheaper.Strategy, 100*gap, served)
	if gap >= kvcache.DefaultMargin && served[2] != cheaper.Strategy {
		t.Errorf("auto served %s in the third session, on measured costs; the engine's own seconds say %s is %.1f%% cheaper (%.3f s against %.3f s a session)",
			served[2], cheaper.Strategy, 100*gap, cheaper.EngineSeconds, dearer.EngineSeconds)
	}
	// Where the model is confident (its estimates differ by more than its margin), it
	// must rank the two as the engine did. Auto serves one strategy and learns the
	// engine's costs from it: under remove it never sees a long context, so its estimate
	// of mask leans on the configured context terms and may come out close to remove's.
	em, okM := a.Decision.Seconds(kvcache.StrategyMask)
	er, okR := a.Decision.Seconds(kvcache.StrategyRemove)
	if !okM || !okR {
		t.Fatalf("estimates %+v lack mask or remove", a.Decision.Estimates)
	}
	confident := math.Abs(em-er) > kvcache.DefaultMargin*max(em, er)
	if gap >= kvcache.DefaultMargin && confident && (em < er) != (cheaper.Strategy == "mask") {
		t.Errorf("estimates mask %.3f s, remove %.3f s rank the strategies against the measured %s %.3f s, %s %.3f s",
			em, er, cheaper.Strategy, cheaper.EngineSeconds, dearer.Strategy, dearer.EngineSeconds)
	}
	// What the H200 defaults would have chosen for the same workload: the figure the
	// README sets against the measured choice.
	d := defaultChoice(a.Decision.Workload, auto.CatalogTokens, c.Catalogs[0], len(auto.Sessions))
	t.Logf("with the H200 default costs the same workload would get %s (%s)", d.Strategy, fmt.Sprint(d.Estimates))
	if math.IsNaN(gap) {
		t.Fatal("no engine time measured")
	}
}

// defaultChoice is the cost model's first decision, with the H200 default costs, for
// workload w as its prior and the run's sessions sharing one cached catalog.
func defaultChoice(w kvcache.Workload, catalogTokens, tools, sessions int) kvcache.Decision {
	m := kvcache.NewCostModel(kvcache.Options{Prior: w,
		Engines: map[string]kvcache.Engine{"e": {Capabilities: kvcache.Capabilities{Constrains: true, CachesPrefixes: true}}}})
	m.ObserveCatalog("p", "e", kvcache.CatalogSize{Tools: tools, Tokens: catalogTokens})
	for range sessions {
		m.ObserveSession("p", "e")
	}
	return m.Decide("p", "e")
}
