package gateway_test

import (
	"context"
	"crypto/sha256"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/maskgate/maskgate/backends"
	"github.com/maskgate/maskgate/backends/oai"
	"github.com/maskgate/maskgate/backends/ollama"
	"github.com/maskgate/maskgate/gateway"
	"github.com/maskgate/maskgate/internal/enginetest"
	"github.com/maskgate/maskgate/toolsearch/state"
)

// ollamaRound is what Ollama did in one backend call, before the gateway's own check.
type ollamaRound struct {
	toolsHash [sha256.Size]byte // of the tools the gateway sent: Ollama's prompt is built from them
	called    []string
	prompt    int
	cached    int
	answer    string
}

type ollamaObserved struct {
	backends.Backend
	mu     sync.Mutex
	rounds []ollamaRound
}

func (o *ollamaObserved) ChatCompletion(ctx context.Context, req *backends.Request) (*backends.Response, error) {
	tools, _ := oai.Get(req.Body, "tools")
	resp, err := o.Backend.ChatCompletion(ctx, req)
	if err != nil {
		return nil, err
	}
	a, err := readAnswer(resp.Body)
	if err != nil {
		return nil, err
	}
	r := ollamaRound{toolsHash: sha256.Sum256(tools), prompt: a.prompt, cached: a.cached, answer: a.body, called: a.called}
	o.mu.Lock()
	o.rounds = append(o.rounds, r)
	o.mu.Unlock()
	return resp, nil
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
	obs := &ollamaObserved{Backend: be}
	mem := state.NewMemory(state.Options{})
	reg := prometheus.NewRegistry()
	gw := httptest.NewServer(gateway.New(gateway.Options{
		Upstreams: []gateway.Upstream{{Name: "ollama", Kind: "ollama", Models: []string{"*"}, Backend: obs}},
		Tools:     bigCatalog(t),
		State:     mem,
		Strategy:  gateway.StrategyValidate,
		Registry:  reg,
	}))
	defer gw.Close()

	const seeds = 100
	var allowedBy [][]string
	for seed := range seeds {
		loaded, thread := seedGroup("ollama", seed)
		mem.Load(state.Thread(state.ThreadInput{Header: thread}), loaded...)
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
	hashes := map[[sha256.Size]byte]bool{}
	calls, cached, prompt := 0, 0, 0
	for i, r := range obs.rounds {
		hashes[r.toolsHash] = true
		if len(r.called) == 0 {
			t.Errorf("seed %d: a forced call named nothing: %.300s", i, r.answer)
		}
		for _, n := range r.called {
			calls++
			if !allowedCall(allowedBy[i], n) {
				t.Errorf("seed %d: Ollama called %q; loaded %v", i, n, allowedBy[i])
			}
		}
		if i > 0 {
			cached += r.cached
			prompt += r.prompt
		}
	}
	if len(hashes) != 1 {
		t.Errorf("%d distinct tools arrays over 10 loaded sets; the prompt must not move", len(hashes))
	}
	if rate := float64(cached) / float64(prompt); rate < 0.9 {
		t.Errorf("estimated cached %d of %d prompt tokens after the first request (%.3f), want ≥ 0.9", cached, prompt, rate)
	}
	if n := counter(t, reg, "maskgate_disabled_tool_calls_total", nil); n != 0 {
		t.Errorf("%v disabled calls", n)
	}
	t.Logf("ollama: %d calls over %d seeds, all loaded tools; one tools array; estimated cached %d / %d prompt tokens after the first", calls, seeds, cached, prompt)
}
