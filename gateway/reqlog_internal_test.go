package gateway

import (
	"testing"
	"time"

	"github.com/maskgate/maskgate/backends"
	"github.com/maskgate/maskgate/backends/oai"
)

// BenchmarkWatch is what the request log and live statistics add to every request's
// record, tracing off.
func BenchmarkWatch(b *testing.B) {
	s := New(Options{})
	u := &oai.Usage{PromptTokens: 1000, CompletionTokens: 20, PromptTokensDetails: &oai.PromptTokensDetails{CachedTokens: 900}}
	x := &exchange{id: "req_1", start: time.Now(), backend: "up", model: "m", strategy: StrategyEager, status: 200,
		stream: true, ttft: time.Millisecond, usage: u, cache: backends.CacheReported, door: "chat_completions"}
	b.ReportAllocs()
	for b.Loop() {
		s.watch(x, 5*time.Millisecond)
	}
}
