package main

import (
	"context"
	"errors"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"github.com/maskgate/maskgate/backends"
	"github.com/maskgate/maskgate/gateway"
	"github.com/maskgate/maskgate/kvcache"
)

// windowBackend says its context window after failing fails times; loads says how it
// serves index.
type windowBackend struct {
	n, fails int
	asked    *atomic.Int32
	loads    backends.LoadKind
}

func (windowBackend) ChatCompletion(context.Context, *backends.Request) (*backends.Response, error) {
	return nil, errors.New("not here")
}

func (w windowBackend) ContextTokens(context.Context) (int, error) {
	if int(w.asked.Add(1)) <= w.fails {
		return 0, errors.New("connection refused")
	}
	return w.n, nil
}

func (w windowBackend) ConstrainsTools() bool         { return true }
func (w windowBackend) LoadsTools() backends.LoadKind { return w.loads }

// A configured context_window is the model's and the engine is not asked; an engine that
// can say its window is asked until it answers; index is weighed where the backend loads
// tools.
func TestCostModel_WindowsAndIndexFromTheBackends(t *testing.T) {
	var askedConfigured, askedLate atomic.Int32
	ups := []gateway.Upstream{
		{Name: "configured", Kind: "llamacpp", ContextWindow: 65536, Backend: windowBackend{n: 999, asked: &askedConfigured, loads: backends.LoadByDefinition}},
		{Name: "late", Kind: "llamacpp", Backend: windowBackend{n: 32768, fails: 2, asked: &askedLate}},
	}
	cm := costModel(ups)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	learnContexts(ctx, cm, ups, 10*time.Millisecond, slog.New(slog.DiscardHandler))
	for deadline := time.Now().Add(30 * time.Second); cm.ContextTokens("late") == 0 && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	if got, n := cm.ContextTokens("late"), askedLate.Load(); got != 32768 || n != 3 {
		t.Errorf("late: window %d after %d asks, want 32768 after 3", got, n)
	}
	if got, n := cm.ContextTokens("configured"), askedConfigured.Load(); got != 65536 || n != 0 {
		t.Errorf("configured: window %d after %d asks, want 65536 and none", got, n)
	}
	cat := kvcache.CatalogSize{Tools: 500, Tokens: 73000, MetaTokens: 450, IndexTokens: 11000}
	for _, tc := range []struct {
		backend string
		index   bool
	}{{"configured", true}, {"late", false}} {
		cm.ObserveCatalog("p", tc.backend, cat)
		d := cm.Decide("p", tc.backend)
		if _, ok := d.Seconds(kvcache.StrategyIndex); ok != tc.index {
			t.Errorf("%s: index weighed %v, want %v (%+v)", tc.backend, ok, tc.index, d.Estimates)
		}
		// Neither window holds mask's 73,450 tokens of tools.
		if _, ok := d.Seconds(kvcache.StrategyMask); ok || d.Strategy == kvcache.StrategyMask {
			t.Errorf("%s: mask weighed on a small context (%s, %+v)", tc.backend, d.Strategy, d.Estimates)
		}
	}
}
