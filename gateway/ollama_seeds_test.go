package gateway_test

import (
	"net/http/httptest"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/maskgate/maskgate/backends"
	"github.com/maskgate/maskgate/backends/oai"
	"github.com/maskgate/maskgate/backends/ollama"
	"github.com/maskgate/maskgate/gateway"
	"github.com/maskgate/maskgate/internal/enginetest"
	"github.com/maskgate/maskgate/toolsearch/state"
)

// toolsSent is what Ollama's prompt is built from, as far as the gateway controls it.
func toolsSent(req *backends.Request) ([]byte, error) {
	tools, _ := oai.Get(req.Body, "tools")
	return tools, nil
}

// TestE2E_SeedsOnRealOllama: the gateway in front of a real Ollama (tiny random-weight
// model) over 30 seeds, the loaded set changing every 3 (ten sets). Ollama cannot
// constrain free decoding, so the gateway keeps the whole catalog in the prompt
// (validate) and the client forces a call among the loaded tools, which the Ollama
// backend turns into a format schema. Every name Ollama produced is in the loaded set
// the test chose (a name cut off by max_tokens is counted apart, never as allowed), the
// tools the prompt is built from are byte-identical across every loaded set, Ollama's
// runner reuses nearly all of each prompt from its cache (by its own debug log), and the
// gateway's estimate of that matches the runner's count round by round.
func TestE2E_SeedsOnRealOllama(t *testing.T) {
	// The runner's debug log says how many prompt tokens it reused: the engine's own
	// figure, to hold the gateway's estimate against.
	srv := enginetest.StartOllama(t, enginetest.OllamaOptions{Env: []string{"OLLAMA_DEBUG=1"}})
	be, err := ollama.New(ollama.Options{Name: "ollama", BaseURL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	obs := &recorder{Backend: be, prompt: toolsSent}
	mem := state.NewMemory(state.Options{})
	reg := prometheus.NewRegistry()
	gw := httptest.NewServer(gateway.New(gateway.Options{
		Upstreams: []gateway.Upstream{{Name: "ollama", Kind: "ollama", Models: []string{"*"}, Backend: obs}},
		Tools:     bigCatalog(t),
		State:     mem,
		Strategy:  gateway.StrategyValidate,
		Registry:  reg,

		ThreadSecret: testThreadSecret,
	}))
	defer gw.Close()

	const seeds = seedRun
	var reused []enginetest.CacheLoad // per seed, from the runner's log
	for seed := range seeds {
		loaded, thread := seedGroup("ollama", seed)
		mem.Load(testThreads.Thread(state.ThreadInput{Header: thread}), loaded...)
		body := forcedAmong(srv.Model, loaded, 48, seed)
		resp, out := postWithThread(t, gw, body, thread)
		if resp.StatusCode != 200 {
			t.Fatalf("seed %d: status %d: %s", seed, resp.StatusCode, out)
		}
		loads := enginetest.CacheLoads(srv.LogTail())
		if len(loads) == 0 {
			t.Fatalf("seed %d: no \"loading cache slot\" line in Ollama's debug log:\n%s", seed, srv.LogTail())
		}
		reused = append(reused, loads[len(loads)-1])
	}

	if len(obs.rounds) != seeds {
		t.Fatalf("%d engine calls, want %d (a stray call would have cost a round)", len(obs.rounds), seeds)
	}
	sum := checkSeedRounds(t, obs.rounds, func(i int) []string {
		loaded, _ := seedGroup("ollama", i)
		return loaded
	})
	// A name cut off by max_tokens proves nothing; the format schema writes the name
	// first, so nearly every seed's is whole.
	if sum.disabled != 0 || sum.allowed < seeds*9/10 {
		t.Errorf("%d calls: %d allowed, %d cut off in the name, %d disabled; want no disabled call and at least %d allowed",
			sum.calls(), sum.allowed, sum.truncated, sum.disabled, seeds*9/10)
	}
	if sum.hashes != 1 {
		t.Errorf("%d distinct tools arrays over %d loaded sets; the prompt must not move", sum.hashes, seedSets)
	}
	// What Ollama reused, by its own log, and the gateway's estimate of it, round by
	// round: the estimate is the gateway's, so it is held to the engine's count.
	var used, prompt int
	for i, r := range obs.rounds {
		if d := r.cached - reused[i].Used; d < -2 || d > 2 {
			t.Errorf("seed %d: the gateway estimated %d cached tokens, Ollama's runner reused %d of %d", i, r.cached, reused[i].Used, reused[i].Prompt)
		}
		if i > 0 {
			used += reused[i].Used
			prompt += reused[i].Prompt
		}
	}
	// docs/benchmarks.md: 30 of 30 calls named a loaded tool, none cut off, and
	// Ollama's runner reused 39,759 of 39,788 prompt tokens (99.93 %) after the first
	// request. Held exactly: Ollama decodes on one thread (enginetest.Threads) with
	// each seed's sampling over the seeded model, and the prompts are the test's, so
	// every run counts the same.
	if sum.allowed != seeds || sum.truncated != 0 || used != 39759 || prompt != 39788 {
		t.Errorf("%d allowed, %d cut off; Ollama reused %d of %d prompt tokens after the first request; the docs quote %d allowed, none cut off, 39,759 of 39,788",
			sum.allowed, sum.truncated, used, prompt, seeds)
	}
	if n := counter(t, reg, "maskgate_disabled_tool_calls_total", nil); n != 0 {
		t.Errorf("%v disabled calls", n)
	}
	t.Logf("ollama: %d seeds, %d calls: %d allowed, %d cut off in the name, %d disabled; tools %x; after the first request the runner reused %d of %d prompt tokens (%.2f%%), the gateway estimated %d of %d",
		seeds, sum.calls(), sum.allowed, sum.truncated, sum.disabled, obs.rounds[0].hash[:6], used, prompt, 100*float64(used)/float64(prompt), sum.cached, sum.prompts)
}
