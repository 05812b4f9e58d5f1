//go:build llamacpp

package embedded

import (
	"context"
	"strings"
	"testing"

	"github.com/maskgate/maskgate/backends"
	"github.com/maskgate/maskgate/backends/oai"
	"github.com/maskgate/maskgate/backends/toolcall"
	"github.com/maskgate/maskgate/bench/tinymodel"
)

// forceText is a Masker that makes the engine write text, token by token as the
// engine's own tokenizer cuts it, and then end.
func forceText(t *testing.T, b *Backend, text string) *onlyTokens {
	t.Helper()
	toks, err := b.model.Tokenize(text, false, true)
	if err != nil || len(toks) == 0 {
		t.Fatalf("tokenize %q: %v %v", text, toks, err)
	}
	end := -1
	for tok := range b.vocab {
		if b.model.TokenIsEog(tok) {
			end = tok
			break
		}
	}
	if end < 0 {
		t.Fatal("the model has no end-of-generation token")
	}
	return &onlyTokens{script: toks, end: end}
}

// TestReasoning_ThinkBlockIsReasoningContent: the real engine, made to write a <think>
// block and an answer, answers them as reasoning_content and content, whole and
// streamed; cut by max_tokens inside the block, everything is reasoning and the finish
// reason is "length".
func TestReasoning_ThinkBlockIsReasoningContent(t *testing.T) {
	b := newBackend(t, Options{})
	const text = "<think>\nI weigh the greeting.\n</think>\n\nHello there"
	cases := []struct {
		name                      string
		maxTokens                 int
		reasoning, content, fnish string
	}{
		{"whole block", 64, "I weigh the greeting.", "Hello there", oai.FinishStop},
		{"cut inside the block", 4, "", "", oai.FinishLength},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			req := map[string]any{"messages": msgs("user", "Hi"), "max_tokens": c.maxTokens, "temperature": 0}
			whole := complete(t, b, req, forceText(t, b, text))
			m := whole.Choices[0].Message
			want := c.reasoning
			if c.maxTokens < 64 { // the tokens before the cut, less the tag and its newline
				toks, _ := b.model.Tokenize(text, false, true)
				var got strings.Builder
				for _, tok := range toks[:c.maxTokens] {
					got.WriteString(b.model.TokenToPiece(tok))
				}
				want = strings.TrimSpace(strings.TrimPrefix(got.String(), "<think>"))
				if want == "" || strings.Contains(want, "<") {
					t.Fatalf("%d tokens cut %q: not inside the block", c.maxTokens, got.String())
				}
			}
			if m.ReasoningContent == nil || *m.ReasoningContent != want || whole.Choices[0].FinishReason != c.fnish {
				t.Fatalf("whole: reasoning %v, finish %q; want %q, %q", str(m.ReasoningContent), whole.Choices[0].FinishReason, want, c.fnish)
			}
			if str(m.Content) != c.content {
				t.Errorf("whole: content %q, want %q", str(m.Content), c.content)
			}
			req["stream"] = true
			resp, err := b.ChatCompletionMasked(context.Background(), &backends.Request{Body: chatBody(t, req), Model: "tiny", Stream: true}, forceText(t, b, text))
			if err != nil {
				t.Fatal(err)
			}
			var r, content strings.Builder
			for _, ch := range readAll(t, resp.Stream) {
				if len(ch.Choices) == 0 {
					continue
				}
				d := ch.Choices[0].Delta
				r.WriteString(str(d.ReasoningContent))
				content.WriteString(str(d.Content))
			}
			if r.String() != want || content.String() != c.content {
				t.Errorf("streamed: reasoning %q, content %q; want %q, %q", r.String(), content.String(), want, c.content)
			}
		})
	}
}

// TestReasoning_HarmonyAnalysis: a harmony model's analysis channel is reasoning_content
// and its final channel the content, without tools too, whole and streamed (the real
// engine made to write the channels, the format named harmony).
func TestReasoning_HarmonyAnalysis(t *testing.T) {
	b := newBackend(t, Options{Format: "harmony"})
	const text = "<|channel|>analysis<|message|>A greeting.<|end|><|start|>assistant<|channel|>final<|message|>Hello!<|return|>"
	req := map[string]any{"messages": msgs("user", "Hi"), "max_tokens": 96, "temperature": 0}
	whole := complete(t, b, req, forceText(t, b, text))
	m := whole.Choices[0].Message
	if str(m.ReasoningContent) != "A greeting." || str(m.Content) != "Hello!" {
		t.Errorf("whole: reasoning %q, content %q; want %q, %q", str(m.ReasoningContent), str(m.Content), "A greeting.", "Hello!")
	}
	req["stream"] = true
	resp, err := b.ChatCompletionMasked(context.Background(), &backends.Request{Body: chatBody(t, req), Model: "tiny", Stream: true}, forceText(t, b, text))
	if err != nil {
		t.Fatal(err)
	}
	var r, content strings.Builder
	for _, ch := range readAll(t, resp.Stream) {
		if len(ch.Choices) > 0 {
			r.WriteString(str(ch.Choices[0].Delta.ReasoningContent))
			content.WriteString(str(ch.Choices[0].Delta.Content))
		}
	}
	if r.String() != "A greeting." || content.String() != "Hello!" {
		t.Errorf("streamed: reasoning %q, content %q", r.String(), content.String())
	}
}

func str(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// TestReasoning_TemplateGetsHistoryAndSwitch: a thinking template (tinymodel's) gets an
// assistant message's reasoning_content (or vLLM's reasoning) back, and reasoning_effort
// none as enable_thinking false; without a switch the prompt opens the block, which
// StartsInside reads; an unknown effort is a 400.
func TestReasoning_TemplateGetsHistoryAndSwitch(t *testing.T) {
	tmpl, err := compileTemplate(tinymodel.ThinkingTemplate)
	if err != nil {
		t.Fatal(err)
	}
	prompt := func(body string) (string, error) {
		r, err := parseRequest([]byte(body))
		if err != nil {
			return "", err
		}
		x, err := r.extra(toolcall.Hermes)
		if err != nil {
			return "", err
		}
		return tmpl.renderWith(r.chat.Messages, r.chat.Tools, toolcall.Hermes, false, x)
	}
	const history = `"messages":[{"role":"user","content":"Hi"},{"role":"assistant","content":"Hello","reasoning_content":"A greeting."},` +
		`{"role":"user","content":"Again"},{"role":"assistant","content":"Hi","reasoning":"Another."},{"role":"user","content":"Bye"}]`
	got, err := prompt(`{"model":"m",` + history + `}`)
	if err != nil {
		t.Fatal(err)
	}
	want := "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n<think>\nA greeting.\n</think>\n\nHello<|im_end|>\n" +
		"<|im_start|>user\nAgain<|im_end|>\n<|im_start|>assistant\n<think>\nAnother.\n</think>\n\nHi<|im_end|>\n" +
		"<|im_start|>user\nBye<|im_end|>\n<|im_start|>assistant\n<think>\n"
	if got != want {
		t.Errorf("prompt\n got %q\nwant %q", got, want)
	}
	off, err := prompt(`{"model":"m",` + history + `,"reasoning_effort":"none"}`)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(off, "<|im_start|>assistant\n<think>\n\n</think>\n\n") {
		t.Errorf("reasoning_effort none: prompt ends %q", off[max(0, len(off)-60):])
	}
	if _, err := prompt(`{"model":"m",` + history + `,"reasoning_effort":"extreme"}`); err == nil {
		t.Error("reasoning_effort extreme: no error")
	}
}
