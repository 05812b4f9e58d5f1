package main

import (
	"context"
	"log/slog"
	"time"

	"github.com/maskgate/maskgate/backends"
	"github.com/maskgate/maskgate/gateway"
	"github.com/maskgate/maskgate/kvcache"
)

// costModel is strategy auto's cost model over the configured backends: what each can
// do bounds its strategies. Every kind here reuses a cached prompt prefix (self-hosted
// engines by default, OpenAI and Anthropic as a service); costs are the model's defaults,
// calibrated on prefill timings measured on one H200 with an 8B-shaped model
// (kvcache.H200Llama8BSamples), until the gateway measures better. A backend's
// context_window bounds the sessions it is given (a strategy whose session outgrows it is
// not weighed); where it is not configured, learnContexts asks the engine.
func costModel(ups []gateway.Upstream) *kvcache.CostModel {
	engines := make(map[string]kvcache.Engine, len(ups))
	for _, u := range ups {
		c, ok := u.Backend.(backends.ToolConstrainer)
		l, loads := u.Backend.(backends.ToolLoader)
		engines[u.Name] = kvcache.Engine{Capabilities: kvcache.Capabilities{
			Constrains:     ok && c.ConstrainsTools(),
			AllowedTools:   u.Kind == "openai",
			CachesPrefixes: true,
			Index:          loads && l.LoadsTools() != backends.LoadNone,
		}, ContextTokens: u.ContextWindow}
	}
	return kvcache.NewCostModel(kvcache.Options{Engines: engines})
}

// contextReporter is a backend that can say its engine's context window per request:
// llama-server's GET /props, the embedded engine's num_ctx.
type contextReporter interface {
	ContextTokens(ctx context.Context) (int, error)
}

// Retries of learnContexts: the first after this, each one twice as late, at most
// maxContextRetry apart.
const (
	firstContextRetry = time.Second
	maxContextRetry   = time.Minute
)

// learnContexts gives cm the context window of each backend whose context_window is not
// configured and whose engine can say it (contextReporter). An engine not up yet is asked
// again, first after first and then ever less often, until it answers or ctx ends. It
// returns at once; the asking runs in the background.
func learnContexts(ctx context.Context, cm *kvcache.CostModel, ups []gateway.Upstream, first time.Duration, log *slog.Logger) {
	for _, u := range ups {
		r, ok := u.Backend.(contextReporter)
		if !ok || u.ContextWindow > 0 {
			continue
		}
		go func(name string) {
			wait := first
			for {
				actx, cancel := context.WithTimeout(ctx, 10*time.Second)
				n, err := r.ContextTokens(actx)
				cancel()
				if err == nil && n > 0 {
					cm.ObserveContext(name, n)
					log.Info("context window", "backend", name, "tokens", n)
					return
				}
				select {
				case <-ctx.Done():
					return
				case <-time.After(wait):
				}
				wait = min(2*wait, maxContextRetry)
			}
		}(u.Name)
	}
}
