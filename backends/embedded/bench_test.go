//go:build llamacpp

package embedded

import (
	"encoding/json"
	"fmt"
	"math/bits"
	"strings"
	"testing"
	"time"

	"github.com/ollama/ollama/llama"

	"github.com/maskgate/maskgate/masking"
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

// BenchmarkCallGrammar measures llama.cpp's grammar sampler over the tiny model's 128k
// vocabulary, as the engine runs it inside a tool call: starting a call's grammar
// (llama.NewGrammar reads the whole vocabulary), and one step's allowed tokens at the
// start of the arguments, after a key and inside a string argument, asked of every token
// (Whole) and through the byte and two-byte prefixes the engine uses (ByPrefix).
func BenchmarkCallGrammar(b *testing.B) {
	be := newBackend(b, Options{})
	if _, err := be.maskIndex(); err != nil {
		b.Fatal(err)
	}
	gv := be.masks.gv
	spec := masking.Spec{Format: masking.Hermes(), Allowed: []string{"send_email", "get_weather"}, Mode: masking.ModeRequired}
	grammar, err := masking.CallGBNF(spec, map[string]json.RawMessage{"send_email": json.RawMessage(benchEmailSchema), "get_weather": json.RawMessage(benchWeatherSchema)})
	if err != nil {
		b.Fatal(err)
	}
	b.Run("NewGrammar", func(b *testing.B) {
		for b.Loop() {
			g := llama.NewGrammar(grammar, gv.ids, gv.pieces, gv.eog)
			if g == nil {
				b.Fatal("grammar refused")
			}
			g.Free()
		}
	})
	for _, at := range []struct{ name, text string }{
		{"AtArguments", "\n{\"name\": \"send_email\", \"arguments\": "},
		{"AfterKey", "\n{\"name\": \"send_email\", \"arguments\": {\"to\""},
		{"InString", "\n{\"name\": \"send_email\", \"arguments\": {\"to\": \"ab"},
	} {
		g := llama.NewGrammar(grammar, gv.ids, gv.pieces, gv.eog)
		for _, c := range []byte(at.text) {
			g.Accept(int32(gv.n + int(c)))
		}
		m := &callMasker{v: gv, g: g}
		ids := make([]int32, gv.n)
		for i := range ids {
			ids[i] = int32(i)
		}
		dst := make([]uint64, (gv.n+63)/64)
		report := func(b *testing.B) {
			allowed := 0
			for _, w := range dst {
				allowed += bits.OnesCount64(w)
			}
			b.ReportMetric(float64(allowed), "allowed_tokens")
		}
		b.Run("Whole"+at.name, func(b *testing.B) {
			for b.Loop() {
				clear(dst)
				m.apply(ids, dst)
			}
			report(b)
		})
		b.Run("ByPrefix"+at.name, func(b *testing.B) {
			for b.Loop() {
				clear(dst)
				m.allowedByPrefix(dst)
			}
			report(b)
		})
		g.Free()
	}
}

const (
	benchEmailSchema   = `{"type":"object","properties":{"to":{"type":"string","maxLength":24},"subject":{"type":"string","maxLength":40},"urgent":{"type":"boolean"}},"required":["to","subject"]}`
	benchWeatherSchema = `{"type":"object","properties":{"city":{"type":"string","maxLength":16},"unit":{"enum":["celsius","fahrenheit"]},"days":{"type":"integer"}},"required":["city"]}`
)
