//go:build llamacpp

package gateway_test

import (
	"crypto/sha256"
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
	"github.com/maskgate/maskgate/backends/oai"
	"github.com/maskgate/maskgate/bench/tinymodel"
	"github.com/maskgate/maskgate/gateway"
	"github.com/maskgate/maskgate/internal/enginetest"
	"github.com/maskgate/maskgate/toolsearch/meta"
	"github.com/maskgate/maskgate/toolsearch/state"
)

// maskSeeds is the number of seeds of the mask run (MASKGATE_MASK_SEEDS overrides the
// seedRun, ten loaded sets, for a quick look).
var maskSeeds = func() int {
	if n, err := strconv.Atoi(os.Getenv("MASKGATE_MASK_SEEDS")); err == nil && n > 0 {
		return n
	}
	return seedRun
}()

// renderedPrompt is what the embedded engine prefills for a request: its hash is the
// prompt cache's key.
func renderedPrompt(be *embedded.Backend) func(*backends.Request) ([]byte, error) {
	return func(req *backends.Request) ([]byte, error) {
		p, err := be.Prompt(req)
		return []byte(p), err
	}
}

// TestMaskEngine_SeedsCallOnlyLoadedToolsOnAByteStablePrompt runs the gateway in front
// of the embedded engine (llama.cpp, tiny random-weight model) over 30 seeds, the loaded
// set changing every 3 (ten sets). The client forces a call among the loaded tools. Under
// mask:
//   - the gateway sends the engine the meta-tools and the loaded set the test chose,
//   - every name the engine produced is in the loaded set the test chose (a name cut off
//     by max_tokens is counted apart, never as allowed),
//   - the rendered prompt is byte-identical across all loaded sets (one hash),
//   - so after the first request the engine serves nearly all of it from its cache;
//
// unconstrained, the same requests (the same prompt, by hash) stray outside the loaded
// set, so the mask is what kept the calls in; and under remove, for contrast, the prompt
// changes with the loaded set.
func TestMaskEngine_SeedsCallOnlyLoadedToolsOnAByteStablePrompt(t *testing.T) {
	dir, err := os.UserCacheDir()
	if err != nil {
		dir = t.TempDir()
	}
	model := enginetest.TinyModelFile(t, filepath.Join(dir, "maskgate", "models"), tinymodel.Options{})
	be, err := embedded.New(embedded.Options{ModelPath: model, NumCtx: 8192, Slots: 1, Threads: enginetest.Threads})
	if err != nil {
		t.Fatal(err)
	}
	defer be.Close()

	loadedAt := func(strategy gateway.Strategy) func(i int) []string {
		return func(i int) []string {
			loaded, _ := seedGroup(string(strategy), i)
			return loaded
		}
	}
	run := func(t *testing.T, strategy gateway.Strategy, seeds int) (*recorder, *prometheus.Registry) {
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
			if seed%10 == 0 {
				t.Logf("%s: seed %d at %v", strategy, seed, time.Since(start).Round(time.Millisecond))
			}
			loaded, thread := seedGroup(string(strategy), seed)
			mem.Load(testThreads.Thread(state.ThreadInput{Header: thread}), loaded...)
			body := forcedAmong("tiny", loaded, 40, seed)
			resp, out := postWithThread(t, gw, body, thread)
			if resp.StatusCode != 200 {
				t.Fatalf("seed %d: status %d: %s", seed, resp.StatusCode, out)
			}
			if got := resp.Header.Get(gateway.HeaderStrategy); got != string(strategy) {
				t.Fatalf("seed %d: strategy %q, want %s", seed, got, strategy)
			}
		}
		return obs, reg
	}

	// The mask run's rounds: the control below replays its requests.
	var masked []seedRound
	t.Run("mask", func(t *testing.T) {
		obs, reg := run(t, gateway.StrategyMask, maskSeeds)
		if len(obs.rounds) != maskSeeds {
			t.Fatalf("%d engine calls, want %d (one per seed)", len(obs.rounds), maskSeeds)
		}
		masked = obs.rounds
		loaded := loadedAt(gateway.StrategyMask)
		for i, r := range obs.rounds {
			if want := append([]string{meta.SearchTools, meta.LoadTool}, loaded(i)...); !slices.Equal(r.allowed, want) {
				t.Errorf("seed %d: the gateway allowed %v, want the meta-tools then the loaded tools %v", i, r.allowed, want)
			}
		}
		// The client narrowed the call to the loaded tools: the meta-tools, though
		// allowed, must not come out either.
		sum := checkSeedRounds(t, obs.rounds, loaded)
		// Every seed names a tool (checkSeedRounds fails one that does not); a name cut
		// off by max_tokens proves nothing, so most must be whole.
		if sum.disabled != 0 || sum.allowed < maskSeeds*9/10 {
			t.Errorf("%d calls: %d allowed, %d cut off in the name, %d disabled; want no disabled call and at least %d allowed",
				sum.calls(), sum.allowed, sum.truncated, sum.disabled, maskSeeds*9/10)
		}
		if sum.hashes != 1 {
			t.Errorf("%d distinct prompts over %d loaded sets; mask must keep one", sum.hashes, (maskSeeds+seedsPerSet-1)/seedsPerSet)
		}
		// docs/benchmarks.md: of 30 forced calls, 30 named a loaded tool, none was cut off,
		// and 50,489 of 50,518 prompt tokens (99.94 %) were cached after the first
		// request. Held exactly for the test's own 30 seeds: each seed samples on one
		// thread over the seeded model and the prompts are the test's, so every run
		// counts the same. Another seed count (MASKGATE_MASK_SEEDS) is held to the floors.
		if maskSeeds == seedRun {
			if sum.allowed != 30 || sum.truncated != 0 || sum.cached != 50489 || sum.prompts != 50518 {
				t.Errorf("%d calls: %d allowed, %d cut off; cached %d of %d prompt tokens after the first request; the docs quote 30 allowed, none cut off, 50,489 of 50,518",
					sum.calls(), sum.allowed, sum.truncated, sum.cached, sum.prompts)
			}
		} else if rate := float64(sum.cached) / float64(sum.prompts); !(rate >= 0.995) {
			t.Errorf("cached %d of %d prompt tokens after the first request (%.4f), want ≥ 0.995", sum.cached, sum.prompts, rate)
		}
		if n := counter(t, reg, "maskgate_disabled_tool_calls_total", nil); n != 0 {
			t.Errorf("%v disabled calls under mask", n)
		}
		t.Logf("mask: %d seeds, %d calls: %d allowed, %d cut off in the name, %d disabled; prompt %x; cached %d / %d prompt tokens after the first request (%.2f%%)",
			maskSeeds, sum.calls(), sum.allowed, sum.truncated, sum.disabled, obs.rounds[0].hash[:6], sum.cached, sum.prompts, 100*float64(sum.cached)/float64(sum.prompts))
	})

	t.Run("unconstrained_same_prompt_strays", func(t *testing.T) {
		// The mask run's own requests, spread over its loaded sets, sent again to the
		// same engine without the constraint: no Request.Allowed, and tool_choice
		// "required" instead of the client's allowed_tools (the engine enforces both the
		// same way), so a call is still forced but may name any tool in the prompt. The
		// prompt must hash as the mask run's did: the constraint is the only difference.
		n := min(20, len(masked))
		if n < 10 {
			t.Fatalf("the mask subtest left %d requests to replay, want ≥ 10: run both, with MASKGATE_MASK_SEEDS ≥ 10", len(masked))
		}
		loaded := loadedAt(gateway.StrategyMask)
		var sum seedSummary
		strays := map[string]int{}
		for k := range n {
			i := k * len(masked) / n
			req := masked[i].sent
			req.Allowed = nil
			body, err := oai.Set(req.Body, "tool_choice", []byte(`"required"`))
			if err != nil {
				t.Fatal(err)
			}
			req.Body = body
			p, err := be.Prompt(&req)
			if err != nil {
				t.Fatal(err)
			}
			if h := sha256.Sum256([]byte(p)); h != masked[i].hash {
				t.Fatalf("seed %d: the unconstrained prompt hashes %x, the mask run's %x: not the same prompt", i, h[:6], masked[i].hash[:6])
			}
			resp, err := be.ChatCompletion(t.Context(), &req)
			if err != nil {
				t.Fatalf("seed %d: %v", i, err)
			}
			a, err := readAnswer(resp.Body)
			if err != nil {
				t.Fatal(err)
			}
			for _, name := range a.called {
				switch judgeCall(loaded(i), name) {
				case callAllowed:
					sum.allowed++
				case callTruncated:
					sum.truncated++
				default:
					sum.disabled++
					strays[name]++
				}
			}
		}
		// docs/benchmarks.md: unconstrained, the same prompts called a tool outside the
		// seed's loaded set 19 times in 20, naming four different tools; held exactly
		// for the test's own 30 seeds, as above. Otherwise: a random model over 27 names
		// picks one of the 1–3 loaded ones rarely; 5 calls is a floor far below that.
		if maskSeeds == seedRun {
			if sum.calls() != 20 || sum.disabled != 19 || len(strays) != 4 {
				t.Errorf("unconstrained, %d of %d calls left the loaded set (%d distinct names: %v); the docs quote 19 of 20, four names",
					sum.disabled, sum.calls(), len(strays), strays)
			}
		} else if sum.disabled < 5 || len(strays) < 3 {
			t.Errorf("unconstrained, %d of %d calls left the loaded set (%d distinct names: %v); want ≥ 5 calls and ≥ 3 names, or the mask run proves nothing",
				sum.disabled, sum.calls(), len(strays), strays)
		}
		t.Logf("unconstrained, same prompt %x: %d calls over %d seeds: %d to a loaded tool, %d cut off in the name, %d outside the loaded set (%d names: %v)",
			masked[0].hash[:6], sum.calls(), n, sum.allowed, sum.truncated, sum.disabled, len(strays), strays)
	})

	t.Run("remove_for_contrast", func(t *testing.T) {
		obs, _ := run(t, gateway.StrategyRemove, 3*seedsPerSet)
		hashes := map[[sha256.Size]byte]bool{}
		for _, r := range obs.rounds {
			hashes[r.hash] = true
		}
		if len(hashes) != 3 {
			t.Errorf("remove gave %d distinct prompts over 3 loaded sets, want 3: one per set", len(hashes))
		}
		t.Logf("remove: %d distinct prompts over 3 loaded sets", len(hashes))
	})
}
