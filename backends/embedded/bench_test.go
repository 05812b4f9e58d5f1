//go:build llamacpp

package embedded

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// BenchmarkPrefill measures prompt tokens decoded per second with nothing cached: each
// iteration changes the first byte of the system prompt.
func BenchmarkPrefill(b *testing.B) {
	be := newBackend(b, Options{Slots: 1})
	words := strings.Repeat("the quick brown fox jumps over the lazy dog ", 200)
	var tokens int
	var elapsed time.Duration
	for i := 0; b.Loop(); i++ {
		m := msgs("system", fmt.Sprintf("%c%s", 'A'+i%26, words), "user", "Summarize.")
		start := time.Now()
		c := complete(b, be, map[string]any{"messages": m, "max_tokens": 1}, nil)
		elapsed += time.Since(start)
		tokens += c.Usage.PromptTokens - c.Usage.PromptTokensDetails.CachedTokens
	}
	b.ReportMetric(float64(tokens)/elapsed.Seconds(), "prefill_tok/s")
}

// BenchmarkDecode measures generated tokens per second (sampling included), 128 per
// request, greedy.
func BenchmarkDecode(b *testing.B) {
	be := newBackend(b, Options{})
	m := newNoEnd(be)
	var tokens int
	var elapsed time.Duration
	for b.Loop() {
		start := time.Now()
		c := complete(b, be, map[string]any{"messages": msgs("user", "Go on."), "max_tokens": 128, "temperature": 0}, m)
		elapsed += time.Since(start)
		tokens += c.Usage.CompletionTokens
	}
	b.ReportMetric(float64(tokens)/elapsed.Seconds(), "decode_tok/s")
}

// BenchmarkSample is one sampling step over the tiny model's vocabulary (128k logits).
func BenchmarkSample(b *testing.B) {
	for _, p := range []sampling{{temperature: 0}, {temperature: 1, topP: 1}, {temperature: 1, topK: 40, topP: 1}, {temperature: 1, topP: 0.9}} {
		b.Run(fmt.Sprintf("temp%g_k%d_p%g", p.temperature, p.topK, p.topP), func(b *testing.B) {
			const vocab = 128256
			src := make([]float32, vocab)
			for i := range src {
				src[i] = float32(i%997) / 100
			}
			s := newSampler(p, vocab)
			logits := make([]float32, vocab)
			for b.Loop() {
				copy(logits, src)
				if _, err := s.sample(logits, nil); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
