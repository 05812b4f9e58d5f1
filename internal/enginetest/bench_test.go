package enginetest_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/ollama/ollama/api"

	"github.com/maskgate/maskgate/internal/enginetest"
)

// Generation speed of the tiny model on this machine, as the engine reports
// it (eval_count / eval_duration).
func BenchmarkOllama_Generate(b *testing.B) {
	s := enginetest.Ollama(b)
	msgs := []api.Message{{Role: "user", Content: "Tell me a story."}}
	var tokens int
	var eval time.Duration
	for i := 0; b.Loop(); i++ {
		r := chat(b, s, &api.ChatRequest{Messages: msgs, Options: map[string]any{"num_predict": 128, "seed": i}})
		tokens += r.EvalCount
		eval += r.EvalDuration
	}
	b.ReportMetric(float64(tokens)/eval.Seconds(), "tokens/s")
}

// Cold prefill of a 75k-token prompt, the size of a long agent session. Each
// iteration starts with a different line so that no prefix is cached. Run
// with -benchtime=1x: one iteration takes minutes on two cores.
func BenchmarkOllama_Prefill75k(b *testing.B) {
	s := enginetest.Ollama(b)
	body := longText(5060) // about 15 tokens a line
	var tokens, runs int
	var prefill time.Duration
	for ; b.Loop(); runs++ {
		msgs := []api.Message{{Role: "user", Content: fmt.Sprintf("Run %d.\n%s", runs, body)}}
		r := chat(b, s, &api.ChatRequest{Messages: msgs, Options: map[string]any{"num_predict": 1}})
		tokens += r.PromptEvalCount
		prefill += r.PromptEvalDuration
	}
	b.ReportMetric(float64(tokens)/float64(runs), "prompt-tokens/op")
	b.ReportMetric(float64(tokens)/prefill.Seconds(), "prompt-tokens/s")
}
