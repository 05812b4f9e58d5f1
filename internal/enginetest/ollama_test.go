package enginetest_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/ollama/ollama/api"

	"github.com/maskgate/maskgate/internal/enginetest"
)

const weatherTools = `[{"type":"function","function":{"name":"get_weather","description":"Current weather for a city.","parameters":{"type":"object","required":["city"],"properties":{"city":{"type":"string","description":"City name"}}}}}]`

func tools(t testing.TB) api.Tools {
	t.Helper()
	var tl api.Tools
	if err := json.Unmarshal([]byte(weatherTools), &tl); err != nil {
		t.Fatal(err)
	}
	return tl
}

// chat sends one non-streaming chat request and returns the final response.
func chat(t testing.TB, s *enginetest.OllamaServer, req *api.ChatRequest) api.ChatResponse {
	t.Helper()
	stream := false
	req.Model, req.Stream = s.Model, &stream
	var last api.ChatResponse
	if err := s.Client().Chat(t.Context(), req, func(r api.ChatResponse) error {
		last = r
		return nil
	}); err != nil {
		t.Fatalf("chat: %v\nollama log:\n%s", err, s.LogTail())
	}
	return last
}

// longText is a deterministic filler of about 15 tokens per line.
func longText(lines int) string {
	var b strings.Builder
	for i := range lines {
		fmt.Fprintf(&b, "Line %d: the quick brown fox jumps over the lazy dog.\n", i)
	}
	return b.String()
}

func TestOllama_ChatWithToolsGenerates(t *testing.T) {
	s := enginetest.Ollama(t)
	r := chat(t, s, &api.ChatRequest{
		Messages: []api.Message{{Role: "user", Content: "What is the weather in Paris?"}},
		Tools:    tools(t),
		Options:  map[string]any{"num_predict": 8, "seed": 1},
	})
	if !r.Done || r.EvalCount <= 0 {
		t.Fatalf("response done=%v eval_count=%d, want a finished response with generated tokens", r.Done, r.EvalCount)
	}
	if r.DoneReason != "length" && r.DoneReason != "stop" {
		t.Errorf("done_reason = %q, want length or stop", r.DoneReason)
	}
	t.Logf("eval_count=%d eval_duration=%s (%.0f tokens/s)", r.EvalCount, r.EvalDuration,
		float64(r.EvalCount)/r.EvalDuration.Seconds())
}

// A long prompt, then the same prompt with a different last turn: the second reuses the
// cached prefix. Ollama folds cached tokens into prompt_eval_count, so reuse is read from
// the runner's own debug log ("loading cache slot … prompt=N used=M"). Timings are
// logged, never asserted: speed is measured in benchmarks.
func TestOllama_LongSharedPrefixTwice(t *testing.T) {
	s := enginetest.StartOllama(t, enginetest.OllamaOptions{Env: []string{"OLLAMA_DEBUG=1"}})
	system := api.Message{Role: "system", Content: longText(600)}
	var counts [2]int
	var slots [2]enginetest.CacheLoad
	for i, question := range []string{"Summarize the text.", "Count the lines."} {
		r := chat(t, s, &api.ChatRequest{
			Messages: []api.Message{system, {Role: "user", Content: question}},
			Tools:    tools(t),
			Options:  map[string]any{"num_predict": 4, "seed": 1},
		})
		if !r.Done {
			t.Fatalf("request %d did not finish", i+1)
		}
		counts[i] = r.PromptEvalCount
		loads := enginetest.CacheLoads(s.LogTail())
		if len(loads) == 0 {
			t.Fatalf("request %d: no \"loading cache slot\" line in the runner's debug log:\n%s", i+1, s.LogTail())
		}
		slots[i] = loads[len(loads)-1]
		t.Logf("request %d: prompt_eval_count=%d prompt_eval_duration=%s; runner: prompt %d tokens, %d reused from the cache",
			i+1, r.PromptEvalCount, r.PromptEvalDuration, slots[i].Prompt, slots[i].Used)
	}
	if counts[0] < 7000 {
		t.Errorf("prompt_eval_count = %d, want a long prompt of at least 7000 tokens", counts[0])
	}
	// The first prompt meets an empty cache; the second shares all but its last turn
	// (a few dozen tokens) with the first.
	if slots[0].Used != 0 {
		t.Errorf("request 1 reused %d tokens of a cold cache", slots[0].Used)
	}
	if p := slots[1].Prompt; slots[1].Used < p-64 || slots[1].Used >= p {
		t.Errorf("request 2 reused %d of its %d prompt tokens, want all but its last turn (at least %d)", slots[1].Used, p, p-64)
	}
}

// The server must render tools into the system turn with the tiny model's
// template: the debug render shows the prompt it would evaluate, and the
// evaluated token count grows by the rendered catalog.
func TestOllama_TemplateRendersTools(t *testing.T) {
	s := enginetest.Ollama(t)
	msgs := []api.Message{{Role: "user", Content: "What is the weather in Paris?"}}

	rendered := chat(t, s, &api.ChatRequest{Messages: msgs, Tools: tools(t), DebugRenderOnly: true})
	if rendered.DebugInfo == nil {
		t.Fatal("no _debug_info in a _debug_render_only response")
	}
	prompt := rendered.DebugInfo.RenderedTemplate
	for _, want := range []string{
		"<|im_start|>system\n# Tools\n",
		"<tools>\n{\"type\":\"function\",\"function\":{\"name\":\"get_weather\"",
		"</tools>",
		"<|im_start|>user\nWhat is the weather in Paris?<|im_end|>\n<|im_start|>assistant\n",
	} {
		if !strings.Contains(prompt, want) {
			t.Errorf("rendered prompt lacks %q:\n%s", want, prompt)
		}
	}

	opts := map[string]any{"num_predict": 1, "seed": 1}
	with := chat(t, s, &api.ChatRequest{Messages: msgs, Tools: tools(t), Options: opts})
	without := chat(t, s, &api.ChatRequest{Messages: msgs, Options: opts})
	if with.PromptEvalCount < without.PromptEvalCount+50 {
		t.Errorf("prompt_eval_count with tools = %d, without = %d; want the tool catalog (50+ tokens) evaluated",
			with.PromptEvalCount, without.PromptEvalCount)
	}
}

// Chat tokens must be single tokens (control and user-defined types), or
// prompts would be longer than a real model's and tool tags would not match.
func TestOllama_ChatTokensAreSingleTokens(t *testing.T) {
	s := enginetest.Ollama(t)
	stream := false
	for _, tok := range []string{"<|im_start|>", "<|im_end|>", "<tool_call>", "</tool_call>", "<tools>", "<tool_response>"} {
		var r api.GenerateResponse
		err := s.Client().Generate(t.Context(), &api.GenerateRequest{
			Model: s.Model, Prompt: tok, Raw: true, Stream: &stream,
			Options: map[string]any{"num_predict": 1},
		}, func(g api.GenerateResponse) error {
			r = g
			return nil
		})
		if err != nil {
			t.Fatalf("generate %q: %v", tok, err)
		}
		if r.PromptEvalCount != 1 {
			t.Errorf("%q is %d prompt tokens, want 1", tok, r.PromptEvalCount)
		}
	}
}

func TestOllama_KillStopsServer(t *testing.T) {
	s := enginetest.Ollama(t)
	s.Kill()
	if !s.Exited() {
		t.Fatal("server still running after Kill")
	}
	if _, err := s.Client().Version(t.Context()); err == nil {
		t.Fatal("server still answers after Kill")
	}
	s.Kill() // a second Kill is harmless
}

// A conversation of 20 turns, each appending the model's reply and a new
// user message, as a chat client would. Logs the total time.
func TestOllama_TwentyTurnConversation(t *testing.T) {
	s := enginetest.Ollama(t)
	msgs := []api.Message{{Role: "system", Content: "You are a test model."}}
	start := time.Now()
	var evalTokens int
	var evalTime time.Duration
	for turn := range 20 {
		msgs = append(msgs, api.Message{Role: "user", Content: fmt.Sprintf("Turn %d: tell me about the weather.", turn)})
		r := chat(t, s, &api.ChatRequest{Messages: msgs, Tools: tools(t), Options: map[string]any{"num_predict": 32, "seed": turn}})
		if !r.Done || r.EvalCount <= 0 {
			t.Fatalf("turn %d: done=%v eval_count=%d", turn, r.Done, r.EvalCount)
		}
		evalTokens += r.EvalCount
		evalTime += r.EvalDuration
		msgs = append(msgs, r.Message)
	}
	t.Logf("20 turns in %s; generated %d tokens at %.0f tokens/s", time.Since(start).Round(time.Millisecond),
		evalTokens, float64(evalTokens)/evalTime.Seconds())
}
