//go:build llamacpp

package embedded

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/maskgate/maskgate/backends"
	"github.com/maskgate/maskgate/backends/oai"
)

func TestChat_NonStreamingAnswer(t *testing.T) {
	b := newBackend(t, Options{})
	c := complete(t, b, map[string]any{"messages": msgs("user", "Hello there"), "max_tokens": 8, "temperature": 0}, nil)
	ch := c.Choices[0]
	if c.Object != "chat.completion" || ch.Message.Role != "assistant" || ch.Message.Content == nil {
		t.Fatalf("answer = %+v", c)
	}
	if ch.FinishReason != oai.FinishLength && ch.FinishReason != oai.FinishStop {
		t.Errorf("finish_reason = %q", ch.FinishReason)
	}
	u := c.Usage
	if u.CompletionTokens < 1 || u.CompletionTokens > 8 || u.PromptTokens < 5 || u.TotalTokens != u.PromptTokens+u.CompletionTokens {
		t.Errorf("usage = %+v", u)
	}
}

func TestStream_RoleOnlyInFirstChunk(t *testing.T) {
	b := newBackend(t, Options{})
	req := map[string]any{"messages": msgs("user", "Tell me a story"), "max_tokens": 12, "temperature": 0}
	want := complete(t, b, req, nil)

	req["stream"] = true
	resp, err := b.ChatCompletion(context.Background(), &backends.Request{Body: chatBody(t, req), Model: "tiny", Stream: true})
	if err != nil {
		t.Fatal(err)
	}
	chunks := readAll(t, resp.Stream)
	if len(chunks) < 3 {
		t.Fatalf("%d chunks", len(chunks))
	}
	var text strings.Builder
	var finish string
	for i, c := range chunks {
		if c.Object != "chat.completion.chunk" || c.ID != chunks[0].ID {
			t.Errorf("chunk %d: object %q id %q", i, c.Object, c.ID)
		}
		if len(c.Choices) == 0 {
			continue
		}
		d := c.Choices[0].Delta
		if (d.Role != "") != (i == 0) {
			t.Errorf("chunk %d: role %q", i, d.Role)
		}
		if d.Content != nil {
			text.WriteString(*d.Content)
		}
		if f := c.Choices[0].FinishReason; f != nil {
			finish = *f
		}
	}
	if got := text.String(); got != *want.Choices[0].Message.Content {
		t.Errorf("streamed %q, non-streaming answer %q", got, *want.Choices[0].Message.Content)
	}
	if finish != want.Choices[0].FinishReason {
		t.Errorf("finish %q, want %q", finish, want.Choices[0].FinishReason)
	}
	last := chunks[len(chunks)-1]
	if last.Usage == nil || last.Usage.CompletionTokens != want.Usage.CompletionTokens {
		t.Errorf("usage chunk = %+v, want completion tokens %d", last.Usage, want.Usage.CompletionTokens)
	}
}

func TestCache_ReportsSharedTokenPrefix(t *testing.T) {
	b := newBackend(t, Options{})
	system := "You are a helpful assistant who answers questions about the weather in short sentences."
	first := msgs("system", system, "user", "What is the weather in Paris today?")
	// max_tokens 1: the sampled token is never decoded, so the slot holds exactly the prompt.
	c1 := complete(t, b, map[string]any{"messages": first, "max_tokens": 1}, nil)
	if got := c1.Usage.PromptTokensDetails.CachedTokens; got != 0 {
		t.Errorf("first request: cached %d, want 0", got)
	}

	second := append(msgs("system", system, "user", "What is the weather in Paris today?"),
		msgs("assistant", "Sunny.", "user", "And tomorrow?")...)
	c2 := complete(t, b, map[string]any{"messages": second, "max_tokens": 1}, nil)
	want := commonPrefix(promptTokens(t, b, first), promptTokens(t, b, second))
	if got := c2.Usage.PromptTokensDetails.CachedTokens; got != want || want < 20 {
		t.Errorf("second request: cached %d, want the shared prefix %d", got, want)
	}

	// One early byte changed: only the tokens before it are reused.
	third := append(msgs("system", "Xou"+system[3:], "user", "What is the weather in Paris today?"),
		msgs("assistant", "Sunny.", "user", "And tomorrow?")...)
	c3 := complete(t, b, map[string]any{"messages": third, "max_tokens": 1}, nil)
	p3 := promptTokens(t, b, third)
	want = commonPrefix(promptTokens(t, b, second), p3)
	if got := c3.Usage.PromptTokensDetails.CachedTokens; got != want || want > len(p3)/4 {
		t.Errorf("changed system prompt: cached %d, want the common part %d of %d", got, want, len(p3))
	}

	// The same prompt again: all but the last token, which is decoded for its logits.
	c4 := complete(t, b, map[string]any{"messages": third, "max_tokens": 1}, nil)
	if got := c4.Usage.PromptTokensDetails.CachedTokens; got != len(p3)-1 {
		t.Errorf("repeated prompt: cached %d, want %d", got, len(p3)-1)
	}
}

func TestCancel_StopsDecodingWithinAStep(t *testing.T) {
	b := newBackend(t, Options{})
	ctx, cancel := context.WithCancel(context.Background())
	req := map[string]any{"messages": msgs("user", "Go on forever"), "stream": true}
	resp, err := b.ChatCompletionMasked(ctx, &backends.Request{Body: chatBody(t, req), Stream: true}, newNoEnd(b))
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if _, err := resp.Stream.Next(); err != nil {
			t.Fatal(err)
		}
	}
	cancel()
	for {
		_, err := resp.Stream.Next()
		if err == nil {
			continue // at most the chunk being handed over
		}
		if !errors.Is(err, context.Canceled) {
			t.Errorf("after cancel: %v, want context.Canceled", err)
		}
		break
	}
	resp.Stream.Close()
	// The worker is free again.
	c := complete(t, b, map[string]any{"messages": msgs("user", "Hi"), "max_tokens": 2}, nil)
	if c.Usage.CompletionTokens == 0 {
		t.Error("no answer after a cancelled request")
	}
}

func TestQueue_FullIs429(t *testing.T) {
	b := newBackend(t, Options{QueueSize: 1})
	// A stream nobody reads holds the worker.
	req := map[string]any{"messages": msgs("user", "Go on"), "stream": true, "max_tokens": 1000}
	held, err := b.ChatCompletionMasked(context.Background(), &backends.Request{Body: chatBody(t, req), Stream: true}, newNoEnd(b))
	if err != nil {
		t.Fatal(err)
	}
	queued := make(chan error, 1)
	go func() {
		_, err := b.ChatCompletion(context.Background(), &backends.Request{Body: chatBody(t, map[string]any{"messages": msgs("user", "Hi"), "max_tokens": 2})})
		queued <- err
	}()
	for deadline := time.Now().Add(10 * time.Second); len(b.jobs) < 1; {
		if time.Now().After(deadline) {
			t.Fatal("the second request never queued")
		}
		time.Sleep(time.Millisecond)
	}

	_, err = b.ChatCompletion(context.Background(), &backends.Request{Body: chatBody(t, map[string]any{"messages": msgs("user", "Hi")})})
	var be *backends.Error
	if !errors.As(err, &be) || be.Status != http.StatusTooManyRequests || be.RetryAfter != "1" {
		t.Fatalf("third request: %v, want a 429 with Retry-After 1", err)
	}
	held.Stream.Close()
	if err := <-queued; err != nil {
		t.Errorf("queued request: %v", err)
	}
}

func TestMask_OnlyAllowedTokenIsSampled(t *testing.T) {
	b := newBackend(t, Options{})
	toks, err := b.model.Tokenize(" hello", false, false)
	if err != nil || len(toks) != 1 {
		t.Fatalf("tokenize: %v %v", toks, err)
	}
	for _, seed := range []int{1, 2, 3} {
		m := &onlyTokens{script: toks, end: -1}
		c := complete(t, b, map[string]any{"messages": msgs("user", "Say something"), "max_tokens": 10, "temperature": 1.5, "seed": seed}, m)
		if got, want := *c.Choices[0].Message.Content, strings.Repeat(" hello", 10); got != want {
			t.Errorf("seed %d: %q, want %q", seed, got, want)
		}
		if len(m.accepted) != 10 || c.Choices[0].FinishReason != oai.FinishLength {
			t.Errorf("seed %d: accepted %v, finish %q", seed, m.accepted, c.Choices[0].FinishReason)
		}
	}
}

func TestToolCalls_HermesTextBecomesToolCalls(t *testing.T) {
	b := newBackend(t, Options{})
	text := "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call>"
	script, err := b.model.Tokenize(text, false, true)
	if err != nil {
		t.Fatal(err)
	}
	end, err := b.model.Tokenize("<|im_end|>", false, true)
	if err != nil || len(end) != 1 {
		t.Fatalf("tokenize end: %v %v", end, err)
	}
	tools := json.RawMessage(`[{"type":"function","function":{"name":"get_weather","parameters":{"type":"object","properties":{"city":{"type":"string"}}}}}]`)
	req := map[string]any{"messages": msgs("user", "Weather in Paris?"), "tools": tools}

	c := complete(t, b, req, &onlyTokens{script: script, end: end[0]})
	ch := c.Choices[0]
	if ch.FinishReason != oai.FinishToolCalls || ch.Message.Content != nil || len(ch.Message.ToolCalls) != 1 {
		t.Fatalf("answer = %+v", ch)
	}
	if f := ch.Message.ToolCalls[0].Function; f.Name != "get_weather" || f.Arguments != `{"city": "Paris"}` {
		t.Errorf("call = %+v", f)
	}

	req["stream"] = true
	resp, err := b.ChatCompletionMasked(context.Background(), &backends.Request{Body: chatBody(t, req), Stream: true}, &onlyTokens{script: script, end: end[0]})
	if err != nil {
		t.Fatal(err)
	}
	var name, args, finish string
	for _, c := range readAll(t, resp.Stream) {
		if len(c.Choices) == 0 {
			continue
		}
		d := c.Choices[0].Delta
		if d.Content != nil && *d.Content != "" {
			t.Errorf("content %q in a tool call answer", *d.Content)
		}
		for _, tc := range d.ToolCalls {
			name += tc.Function.Name
			args += tc.Function.Arguments
		}
		if f := c.Choices[0].FinishReason; f != nil {
			finish = *f
		}
	}
	if name != "get_weather" || args != `{"city": "Paris"}` || finish != oai.FinishToolCalls {
		t.Errorf("streamed call %q %q, finish %q", name, args, finish)
	}
}
