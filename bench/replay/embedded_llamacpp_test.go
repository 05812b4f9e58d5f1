//go:build llamacpp

package main

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/maskgate/maskgate/backends/embedded"
	"github.com/maskgate/maskgate/bench/tinymodel"
	"github.com/maskgate/maskgate/gateway"
	"github.com/maskgate/maskgate/internal/enginetest"
	"github.com/maskgate/maskgate/kvcache"
)

// TestEmbedded_ShortReplayOnTheTinyModel replays a short session under mask and remove
// on llama.cpp in process: the engine's own cached-token counts must obey the same
// identities, and a conversation that grows at the end must reuse its prefix.
func TestEmbedded_ShortReplayOnTheTinyModel(t *testing.T) {
	dir, err := os.UserCacheDir()
	if err != nil {
		dir = t.TempDir()
	}
	model := enginetest.TinyModelFile(t, filepath.Join(dir, "maskgate", "models"), tinymodel.Options{})
	c := Config{Target: TargetEmbedded, Threads: enginetest.Threads, Catalogs: []int{20}, Scenarios: []string{ScenarioFresh},
		Strategies: []string{string(gateway.StrategyMask), string(gateway.StrategyRemove)}, Turns: 3, Gen: 4, NumCtx: 8192}.withDefaults()
	be, err := embedded.New(embedded.Options{ModelPath: model, NumCtx: c.NumCtx, Slots: 2, Threads: enginetest.Threads})
	if err != nil {
		t.Fatal(err)
	}
	defer be.Close()
	tg := &engineTarget{about: TargetInfo{Name: "embedded", Kind: "embedded", Model: "tiny"}, scr: scripted(be, c),
		caps: kvcache.Capabilities{Constrains: true, AllowedTools: true, CachesPrefixes: true}}
	rep, err := Replay(context.Background(), c, tg)
	if err != nil {
		t.Fatal(err)
	}
	checkSane(t, rep)
	for _, r := range rep.Runs {
		if r.Served != r.Strategy {
			t.Errorf("%s: the gateway served %q", r.Strategy, r.Served)
		}
		turns := r.Sessions[0].Turns
		if len(turns) != 3 {
			t.Fatalf("%s: %d turns", r.Strategy, len(turns))
		}
		for _, tr := range turns {
			if tr.Cache != "reported" {
				t.Errorf("%s turn %d: X-Maskgate-Cache %q, want the engine's reported count", r.Strategy, tr.Turn, tr.Cache)
			}
			if tr.Turn > 0 && tr.Cached == 0 {
				t.Errorf("%s turn %d: nothing cached of %d prompt tokens; the conversation only grew", r.Strategy, tr.Turn, tr.Prompt)
			}
		}
	}
}

// TestEmbedded_TheREADMEFigures replays the profile scenario of the README's embedded
// run (results/embedded-tiny: 20 tools, sessions of 10 turns, 4 of one profile, 4
// output tokens a round) under mask and remove, and holds the figures the README quotes
// from it exactly, as quoted: from the second session on, mask computes 760 tokens a
// session against remove's 2,658 (the mean of sessions 2–4, to the token), with 98.7 %
// cached after each session's first turn. Token counts are the engine's own, and nothing
// in them varies: the prompts are the script's (the engine's output is replaced by the
// scripted reply), the engine decodes greedily on one thread over a seeded model, and
// the sessions run one after another, so every run reuses the same prefixes (two runs
// gave the same counts).
func TestEmbedded_TheREADMEFigures(t *testing.T) {
	c := Config{Target: TargetEmbedded, Threads: enginetest.Threads, Seed: 1, Catalogs: []int{20}, Scenarios: []string{ScenarioProfile},
		Strategies: []string{string(gateway.StrategyMask), string(gateway.StrategyRemove)}, Sessions: 4, Turns: 10, Gen: 4}.withDefaults()
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
	runs := map[string]RunResult{}
	for _, r := range rep.Runs {
		runs[r.Strategy] = r
	}
	mask, remove := runs[string(gateway.StrategyMask)], runs[string(gateway.StrategyRemove)]
	if math.Round(mask.ComputedLater) != 760 || math.Round(remove.ComputedLater) != 2658 {
		t.Errorf("from the second session on, mask computed %.1f tokens a session and remove %.1f; the README quotes 760 and 2,658", mask.ComputedLater, remove.ComputedLater)
	}
	if h := fmt.Sprintf("%.1f", 100*mask.HitRateAfterFirst); h != "98.7" {
		t.Errorf("mask cached %s%% after each session's first turn; the README quotes 98.7%%", h)
	}
	if mask.DisabledMetric != 0 {
		t.Errorf("%d disabled calls under mask from a script that never strays where the allowed set refuses", mask.DisabledMetric)
	}
	t.Logf("mask %.3f, remove %.3f computed tokens a session from the second on; mask cached %.4f%% after turn 0", mask.ComputedLater, remove.ComputedLater, 100*mask.HitRateAfterFirst)
}
