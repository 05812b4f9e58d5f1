//go:build llamacpp

package gateway_test

import (
	"context"
	"errors"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/shared"

	"github.com/maskgate/maskgate/backends/embedded"
	"github.com/maskgate/maskgate/bench/tinymodel"
	"github.com/maskgate/maskgate/gateway"
	"github.com/maskgate/maskgate/internal/enginetest"
)

// TestE2E_OpenAIGoThroughGatewayToEmbeddedEngine: the official Go SDK, the gateway and
// llama.cpp in-process on the tiny model — streaming, a forced tool call, the engine's own
// cached-token count, and a cancelled stream that frees the engine for the next request.
func TestE2E_OpenAIGoThroughGatewayToEmbeddedEngine(t *testing.T) {
	dir, err := os.UserCacheDir()
	if err != nil {
		dir = t.TempDir()
	}
	model := enginetest.TinyModelFile(t, filepath.Join(dir, "maskgate", "models"), tinymodel.Options{})
	be, err := embedded.New(embedded.Options{ModelPath: model, NumCtx: 4096, Threads: enginetest.Threads})
	if err != nil {
		t.Fatal(err)
	}
	defer be.Close()
	gw := httptest.NewServer(gateway.New(gateway.Options{
		Upstreams: []gateway.Upstream{{Name: "embedded", Kind: "embedded", Models: []string{"*"}, Backend: be}},
	}))
	defer gw.Close()
	client, last := sdkClient(gw.URL)
	ctx := t.Context()
	msgs := []openai.ChatCompletionMessageParamUnion{openai.SystemMessage("You are a test assistant."), openai.UserMessage("Say something.")}

	t.Run("streaming_with_cached_prefix", func(t *testing.T) {
		for turn := range 2 {
			stream := client.Chat.Completions.NewStreaming(ctx, openai.ChatCompletionNewParams{
				Model: "tiny", Messages: msgs, MaxTokens: openai.Int(8), Seed: openai.Int(1),
				StreamOptions: openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)},
			})
			var acc openai.ChatCompletionAccumulator
			for stream.Next() {
				acc.AddChunk(stream.Current())
			}
			if err := stream.Err(); err != nil {
				t.Fatal(err)
			}
			cached := acc.Usage.PromptTokensDetails.CachedTokens
			if turn == 1 && (cached == 0 || cached >= acc.Usage.PromptTokens) {
				t.Errorf("repeated prompt: %d cached of %d", cached, acc.Usage.PromptTokens)
			}
			if last().Get(gateway.HeaderCache) != "reported" {
				t.Errorf("%s = %q", gateway.HeaderCache, last().Get(gateway.HeaderCache))
			}
		}
	})

	t.Run("forced_tool_call", func(t *testing.T) {
		resp, err := client.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{
			Model: "tiny", Messages: msgs, MaxTokens: openai.Int(64), Seed: openai.Int(2),
			Tools: []openai.ChatCompletionToolUnionParam{openai.ChatCompletionFunctionTool(shared.FunctionDefinitionParam{
				Name: "get_weather", Parameters: shared.FunctionParameters{"type": "object"},
			})},
			ToolChoice: openai.ChatCompletionToolChoiceOptionUnionParam{OfAuto: openai.String("required")},
		})
		if err != nil {
			t.Fatal(err)
		}
		if last().Get(gateway.HeaderStrategy) != "mask" {
			t.Errorf("%s = %q, want mask", gateway.HeaderStrategy, last().Get(gateway.HeaderStrategy))
		}
		m := resp.Choices[0].Message
		if len(m.ToolCalls) == 0 && !calledGetWeather(m.Content) {
			t.Errorf("a required call named nothing: %+v", m)
		}
		for _, tc := range m.ToolCalls {
			if tc.Function.Name != "get_weather" {
				t.Errorf("called %q", tc.Function.Name)
			}
		}
	})

	t.Run("cancel_mid_stream", func(t *testing.T) {
		cctx, cancel := context.WithCancel(ctx)
		stream := client.Chat.Completions.NewStreaming(cctx, openai.ChatCompletionNewParams{
			Model: "tiny", Messages: msgs, MaxTokens: openai.Int(2000), Seed: openai.Int(3),
		})
		if !stream.Next() {
			t.Fatalf("no first chunk: %v", stream.Err())
		}
		cancel()
		for stream.Next() {
		}
		if err := stream.Err(); err == nil || !errors.Is(err, context.Canceled) {
			t.Logf("stream ended with %v", err)
		}
		// The engine is free again at once: a short request completes promptly.
		start := time.Now()
		if _, err := client.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{Model: "tiny", Messages: msgs, MaxTokens: openai.Int(2)}); err != nil {
			t.Fatal(err)
		}
		t.Logf("next request answered %v after the cancel", time.Since(start))
	})
}

func calledGetWeather(content string) bool {
	return calledName.MatchString(content) && calledName.FindStringSubmatch(content)[1] == "get_weather"
}

var calledName = regexp.MustCompile(`"name":\s*"([^"]*)"`)
