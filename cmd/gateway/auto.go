package main

import (
	"github.com/maskgate/maskgate/backends"
	"github.com/maskgate/maskgate/gateway"
	"github.com/maskgate/maskgate/kvcache"
)

// costModel is strategy auto's cost model over the configured backends: what each can
// do bounds its strategies. Every kind here reuses a cached prompt prefix (self-hosted
// engines by default, OpenAI and Anthropic as a service); costs are the model's defaults,
// calibrated on prefill timings measured on one H200 with an 8B-shaped model
// (kvcache.H200Llama8BSamples), until the gateway measures better.
func costModel(ups []gateway.Upstream) *kvcache.CostModel {
	engines := make(map[string]kvcache.Engine, len(ups))
	for _, u := range ups {
		c, ok := u.Backend.(backends.ToolConstrainer)
		engines[u.Name] = kvcache.Engine{Capabilities: kvcache.Capabilities{
			Constrains:     ok && c.ConstrainsTools(),
			AllowedTools:   u.Kind == "openai",
			CachesPrefixes: true,
		}}
	}
	return kvcache.NewCostModel(kvcache.Options{Engines: engines})
}
