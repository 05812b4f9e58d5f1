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

// TestE2E_HundredSeedsOnRealOllama: the gateway in front of a real Ollama (tiny
// random-weight model) over 100 seeds, the loaded set changing every 10. Ollama cannot
// constrain free decoding, so the gateway keeps the whole catalog in the prompt
// (validate) and the client forces a call among the loaded tools, which the Ollama
// backend turns into a format schema. Every name Ollama produced is allowed, the tools
// the prompt is built from are byte-identical across every loaded set, and the prefix
// estimate says Ollama could reuse nearly all of each prompt.
func TestE2E_HundredSeedsOnRealOllama(t *testing.T) {
	srv := enginetest.Ollama(t)
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

	const seeds = 100
	var allowedBy [][]string
	for seed := range seeds {
		loaded, thread := seedGroup("ollama", seed)
		mem.Load(testThreads.Thread(state.ThreadInput{Header: thread}), loaded...)
		body := forcedAmong(srv.Model, loaded, 48, seed)
		resp, out := postWithThread(t, gw, body, thread)
		if resp.StatusCode != 200 {
			t.Fatalf("seed %d: status %d: %s", seed, resp.StatusCode, out)
		}
		allowedBy = append(allowedBy, loaded)
	}

	if len(obs.rounds) != seeds {
		t.Fatalf("%d engine calls, want %d (a stray call would have cost a round)", len(obs.rounds), seeds)
	}
	sum := checkSeedRounds(t, obs.rounds, func(i int, _ seedRound) []string { return allowedBy[i] })
	if sum.hashes != 1 {
		t.Errorf("%d distinct tools arrays over 10 loaded sets; the prompt must not move", sum.hashes)
	}
	if rate := float64(sum.cached) / float64(sum.prompts); rate < 0.9 {
		t.Errorf("estimated cached %d of %d prompt tokens after the first request (%.3f), want ≥ 0.9", sum.cached, sum.prompts, rate)
	}
	if n := counter(t, reg, "maskgate_disabled_tool_calls_total", nil); n != 0 {
		t.Errorf("%v disabled calls", n)
	}
	t.Logf("ollama: %d calls over %d seeds, all loaded tools; one tools array; estimated cached %d / %d prompt tokens after the first", sum.calls, seeds, sum.cached, sum.prompts)
}
