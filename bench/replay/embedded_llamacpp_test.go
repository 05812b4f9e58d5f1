//go:build llamacpp

package main

import (
	"context"
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
	c := Config{Target: TargetEmbedded, Catalogs: []int{20}, Scenarios: []string{ScenarioFresh},
		Strategies: []string{gateway.StrategyMask, gateway.StrategyRemove}, Turns: 3, Gen: 4, NumCtx: 8192}.withDefaults()
	be, err := embedded.New(embedded.Options{ModelPath: model, NumCtx: c.NumCtx, Slots: 2})
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
