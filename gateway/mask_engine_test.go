//go:build llamacpp

package gateway_test

import (
	"crypto/sha256"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/maskgate/maskgate/backends"
	"github.com/maskgate/maskgate/backends/embedded"
	"github.com/maskgate/maskgate/bench/tinymodel"
	"github.com/maskgate/maskgate/gateway"
	"github.com/maskgate/maskgate/internal/enginetest"
	"github.com/maskgate/maskgate/toolsearch/state"
)

// maskSeeds is the number of seeds of the mask run (MASKGATE_MASK_SEEDS overrides the
// 100 for a quick look).
var maskSeeds = func() int {
	if n, err := strconv.Atoi(os.Getenv("MASKGATE_MASK_SEEDS")); err == nil && n > 0 {
		return n
	}
	return 100
}()

// renderedPrompt is what the embedded engine prefills for a request: its hash is the
// prompt cache's key.
func renderedPrompt(be *embedded.Backend) func(*backends.Request) ([]byte, error) {
	return func(req *backends.Request) ([]byte, error) {
		p, err := be.Prompt(req)
		return []byte(p), err
	}
}

// TestMaskEngine_HundredSeedsCallOnlyLoadedToolsOnAByteStablePrompt runs the gateway in
// front of the embedded engine (llama.cpp, tiny random-weight model) over 100 seeds, the
// loaded set changing every 10. The client forces a call among the loaded tools; the
// random model, unconstrained, names tools all over the 25-tool catalog (whose 22
// misc_tool_NN names share long prefixes). Under mask:
//   - every name the engine produced is in the allowed set,
//   - the rendered prompt is byte-identical across all loaded sets (one hash),
//   - so after the first request the engine serves nearly all of it from its cache;
//
// and under remove, for contrast, the prompt changes with the loaded set.
func TestMaskEngine_HundredSeedsCallOnlyLoadedToolsOnAByteStablePrompt(t *testing.T) {
	dir, err := os.UserCacheDir()
	if err != nil {
		dir = t.TempDir()
	}
	model := enginetest.TinyModelFile(t, filepath.Join(dir, "maskgate", "models"), tinymodel.Options{})
	be, err := embedded.New(embedded.Options{ModelPath: model, NumCtx: 8192, Slots: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer be.Close()

	run := func(t *testing.T, strategy string, seeds int) (*recorder, *prometheus.Registry) {
		obs := &recorder{Backend: be, prompt: renderedPrompt(be)}
		mem := state.NewMemory(state.Options{})
		reg := prometheus.NewRegistry()
		gw := httptest.NewServer(gateway.New(gateway.Options{
			Upstreams: []gateway.Upstream{{Name: "embedded", Kind: "embedded", Models: []string{"*"}, Backend: obs}},
			Tools:     bigCatalog(t),
			State:     mem,
			Strategy:  strategy,
			Registry:  reg,

			ThreadSecret: testThreadSecret,
		}))
		defer gw.Close()
		start := time.Now()
		for seed := range seeds {
			if seed%25 == 0 {
				t.Logf("%s: seed %d at %v", strategy, seed, time.Since(start).Round(time.Millisecond))
			}
			loaded, thread := seedGroup(strategy, seed)
			mem.Load(testThreads.Thread(state.ThreadInput{Header: thread}), loaded...)
			body := forcedAmong("tiny", loaded, 40, seed)
			resp, out := postWithThread(t, gw, body, thread)
			if resp.StatusCode != 200 {
				t.Fatalf("seed %d: status %d: %s", seed, resp.StatusCode, out)
			}
			if got := resp.Header.Get(gateway.HeaderStrategy); got != strategy {
				t.Fatalf("seed %d: strategy %q, want %s", seed, got, strategy)
			}
		}
		return obs, reg
	}

	t.Run("mask", func(t *testing.T) {
		obs, reg := run(t, gateway.StrategyMask, maskSeeds)
		if len(obs.rounds) != maskSeeds {
			t.Fatalf("%d engine calls, want %d (one per seed)", len(obs.rounds), maskSeeds)
		}
		for i, r := range obs.rounds {
			if want := []string{"search_tools", "load_tool"}; len(r.allowed) < 3 || !slices.Equal(r.allowed[:2], want) {
				t.Errorf("seed %d: the gateway allowed %v, want the meta-tools then the loaded tools", i, r.allowed)
			}
		}
		// The client narrowed the call to the loaded tools: the meta-tools, though
		// allowed, must not come out either.
		sum := checkSeedRounds(t, obs.rounds, func(_ int, r seedRound) []string { return r.allowed[2:] })
		if sum.hashes != 1 {
			t.Errorf("%d distinct prompts over 10 loaded sets; mask must keep one", sum.hashes)
		}
		if rate := float64(sum.cached) / float64(sum.prompts); rate < 0.95 {
			t.Errorf("cached %d of %d prompt tokens after the first request (%.3f), want ≥ 0.95", sum.cached, sum.prompts, rate)
		}
		if n := counter(t, reg, "maskgate_disabled_tool_calls_total", nil); n != 0 {
			t.Errorf("%v disabled calls under mask", n)
		}
		t.Logf("mask: %d calls over %d seeds, all allowed; 1 prompt hash; cached %d / %d prompt tokens after the first request", sum.calls, maskSeeds, sum.cached, sum.prompts)
	})

	t.Run("unconstrained_strays", func(t *testing.T) {
		// The same whole-catalog prompt with no allowed set and a plain required call:
		// the random model names tools outside any one loaded set, so the mask above is
		// what kept it in.
		obs := &recorder{Backend: be, prompt: renderedPrompt(be)}
		gw := httptest.NewServer(gateway.New(gateway.Options{
			Upstreams: []gateway.Upstream{{Name: "embedded", Models: []string{"*"}, Backend: obs}},
			Tools:     bigCatalog(t),
			State:     state.NewMemory(state.Options{}),
			Strategy:  gateway.StrategyEager,
		}))
		defer gw.Close()
		stray := map[string]int{}
		start := time.Now()
		for seed := range 20 {
			body := fmt.Sprintf(`{"model":"tiny","messages":[{"role":"system","content":"You are an agent with tools."},{"role":"user","content":"do it"}],"tool_choice":"required","max_tokens":40,"seed":%d,"temperature":1.0}`, seed)
			postWithThread(t, gw, body, "free")
		}
		for _, r := range obs.rounds {
			for _, n := range r.called {
				if n != "misc_tool_00" {
					stray[n]++
				}
			}
		}
		if len(stray) < 2 {
			t.Fatalf("unconstrained, the model called only %v besides misc_tool_00: the mask test would prove nothing", stray)
		}
		t.Logf("unconstrained: %d other names over 20 seeds (%v)", len(stray), time.Since(start))
	})

	t.Run("remove_for_contrast", func(t *testing.T) {
		obs, _ := run(t, gateway.StrategyRemove, 30)
		hashes := map[[sha256.Size]byte]bool{}
		for _, r := range obs.rounds {
			hashes[r.hash] = true
		}
		if len(hashes) < 3 {
			t.Errorf("remove gave %d distinct prompts over 3 loaded sets; the contrast is gone", len(hashes))
		}
		t.Logf("remove: %d distinct prompts over 3 loaded sets", len(hashes))
	})
}
