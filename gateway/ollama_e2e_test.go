package gateway_test

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/shared"

	"github.com/maskgate/maskgate/backends/ollama"
	"github.com/maskgate/maskgate/gateway"
	"github.com/maskgate/maskgate/internal/enginetest"
	"github.com/maskgate/maskgate/toolsearch"
	"github.com/maskgate/maskgate/toolsearch/state"
)

// TestE2E_OpenAIGoThroughGatewayToRealOllama is the whole path on real parts: the official
// Go SDK, the gateway, the Ollama backend, and an Ollama built from its module serving
// the tiny random-weight model. The model's words are noise; what is asserted is what the
// path guarantees: shapes, usage, headers, the constraint, and failure handling.
func TestE2E_OpenAIGoThroughGatewayToRealOllama(t *testing.T) {
	srv := enginetest.Ollama(t)
	be, err := ollama.New(ollama.Options{Name: "ollama", BaseURL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	gw := httptest.NewServer(gateway.New(gateway.Options{
		Upstreams: []gateway.Upstream{{Name: "ollama", Kind: "ollama", Models: []string{"*"}, Backend: be}},
	}))
	defer gw.Close()
	client, last := sdkClient(gw.URL)
	ctx := t.Context()
	user := []openai.ChatCompletionMessageParamUnion{
		openai.SystemMessage("You are a test assistant."),
		openai.UserMessage("Say something."),
	}

	t.Run("non_streaming", func(t *testing.T) {
		resp, err := client.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{
			Model: srv.Model, Messages: user, MaxTokens: openai.Int(12), Seed: openai.Int(1), Temperature: openai.Float(0),
		})
		if err != nil {
			t.Fatal(err)
		}
		if len(resp.Choices) != 1 || resp.Choices[0].Message.Role != "assistant" || resp.Usage.PromptTokens == 0 || resp.Usage.CompletionTokens == 0 {
			t.Errorf("response %+v", resp)
		}
		if got := last().Get(gateway.HeaderCache); got != "estimated" {
			t.Errorf("%s = %q, want estimated (Ollama reports no cached count)", gateway.HeaderCache, got)
		}
	})

	t.Run("streaming", func(t *testing.T) {
		stream := client.Chat.Completions.NewStreaming(ctx, openai.ChatCompletionNewParams{
			Model: srv.Model, Messages: user, MaxTokens: openai.Int(12), Seed: openai.Int(2),
			StreamOptions: openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)},
		})
		var acc openai.ChatCompletionAccumulator
		chunks := 0
		for stream.Next() {
			acc.AddChunk(stream.Current())
			chunks++
		}
		if err := stream.Err(); err != nil {
			t.Fatal(err)
		}
		if chunks < 2 || len(acc.Choices) != 1 || acc.Choices[0].FinishReason == "" || acc.Usage.CompletionTokens == 0 {
			t.Errorf("%d chunks, accumulated %+v", chunks, acc.ChatCompletion)
		}
	})

	t.Run("required_call_names_only_allowed_tools", func(t *testing.T) {
		var tools []openai.ChatCompletionToolUnionParam
		for i := range 10 {
			tools = append(tools, openai.ChatCompletionFunctionTool(shared.FunctionDefinitionParam{
				Name:       fmt.Sprintf("tool_%d", i),
				Parameters: shared.FunctionParameters{"type": "object", "properties": map[string]any{}},
			}))
		}
		allowed := []string{"tool_3", "tool_7"}
		choice := openai.ChatCompletionToolChoiceOptionUnionParam{OfAllowedTools: &openai.ChatCompletionAllowedToolChoiceParam{
			AllowedTools: openai.ChatCompletionAllowedToolsParam{Mode: "required", Tools: []map[string]any{
				{"type": "function", "function": map[string]any{"name": "tool_3"}},
				{"type": "function", "function": map[string]any{"name": "tool_7"}},
			}},
		}}
		for seed := range 3 {
			resp, err := client.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{
				Model: srv.Model, Messages: user, Tools: tools, ToolChoice: choice,
				MaxTokens: openai.Int(24), Seed: openai.Int(int64(seed)),
			})
			if err != nil {
				t.Fatal(err)
			}
			if got := last().Get(gateway.HeaderStrategy); got != "mask" {
				t.Errorf("%s = %q, want mask", gateway.HeaderStrategy, got)
			}
			for _, tc := range resp.Choices[0].Message.ToolCalls {
				if !slices.Contains(allowed, tc.Function.Name) {
					t.Errorf("seed %d: call to %q, allowed %v", seed, tc.Function.Name, allowed)
				}
			}
		}
	})

	t.Run("engine_killed_mid_stream", func(t *testing.T) {
		stream := client.Chat.Completions.NewStreaming(ctx, openai.ChatCompletionNewParams{
			Model: srv.Model, Messages: user, MaxTokens: openai.Int(4000), Seed: openai.Int(3),
		})
		if !stream.Next() {
			t.Fatalf("no first chunk: %v", stream.Err())
		}
		srv.Kill()
		deadline := time.After(30 * time.Second)
		for stream.Next() {
			select {
			case <-deadline:
				t.Fatal("stream went on 30 s after the engine died")
			default:
			}
		}
		if stream.Err() == nil {
			t.Fatal("stream ended without an error after the engine was killed")
		}
		// The gateway stays up and says what is wrong.
		resp, err := http.Get(gw.URL + "/healthz")
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("healthz after the engine died: %v %v", resp, err)
		}
		resp.Body.Close()
		_, err = client.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{Model: srv.Model, Messages: user, MaxTokens: openai.Int(4)})
		var apiErr *openai.Error
		if !errors.As(err, &apiErr) || apiErr.StatusCode != http.StatusBadGateway {
			t.Errorf("request to a dead engine: %v, want a 502", err)
		}
	})
}

// TestE2E_ToolLoopOnRealOllama runs the server-side loop on a real engine. The model's
// weights are random, so the test forces a call each round (tool_choice "required", which
// the Ollama backend turns into a format schema over the tools of the request) and lets
// progressive loading do the search: the user's message finds the GitHub tool and loads
// it, so each round the model must call search_tools, load_tool or that tool. Whatever it
// picks, the gateway runs the meta-tools and goes on; what reaches the client is only ever
// the loaded tool, or a clean error when the rounds run out.
func TestE2E_ToolLoopOnRealOllama(t *testing.T) {
	srv := enginetest.Ollama(t)
	be, err := ollama.New(ollama.Options{Name: "ollama", BaseURL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	var catalog []string
	catalog = append(catalog, `{"type":"function","function":{"name":"github_create_issue","description":"Open a new issue in a GitHub repository.","parameters":{"type":"object","properties":{}}}}`)
	for i := range 24 {
		catalog = append(catalog, fmt.Sprintf(`{"type":"function","function":{"name":"other_tool_%02d","description":"Unrelated tool number %d.","parameters":{"type":"object","properties":{}}}}`, i, i))
	}
	tools, err := toolsearch.ParseTools([]byte("["+strings.Join(catalog, ",")+"]"), "e2e.json")
	if err != nil {
		t.Fatal(err)
	}
	cat, err := toolsearch.New(tools)
	if err != nil {
		t.Fatal(err)
	}
	gw := httptest.NewServer(gateway.New(gateway.Options{
		Upstreams:   []gateway.Upstream{{Name: "ollama", Kind: "ollama", Models: []string{"*"}, Backend: be}},
		Tools:       toolsearch.NewIndex(cat, toolsearch.Options{}),
		State:       state.NewMemory(state.Options{}),
		Progressive: true,
		SearchTopK:  1,
	}))
	defer gw.Close()

	called := 0
	for seed := range 4 {
		body := fmt.Sprintf(`{"model":%q,"seed":%d,"max_tokens":48,"tool_choice":"required","messages":[{"role":"user","content":"open a github issue"}]}`, srv.Model, seed)
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, gw.URL+"/v1/chat/completions", strings.NewReader(body))
		req.Header.Set("X-Thread-Id", fmt.Sprint("seed-", seed))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		out, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		for _, leaked := range []string{`"name":"search_tools"`, `"name":"load_tool"`, `"name":"other_tool_`} {
			if strings.Contains(string(out), leaked) {
				t.Errorf("seed %d: %s reached the client: %s", seed, leaked, out)
			}
		}
		switch {
		case resp.StatusCode == 200 && strings.Contains(string(out), `"name":"github_create_issue"`):
			called++
		case resp.StatusCode == 200, strings.Contains(string(out), "tool_rounds_exceeded"):
			t.Logf("seed %d: %d %s", seed, resp.StatusCode, out)
		default:
			t.Errorf("seed %d: status %d: %s", seed, resp.StatusCode, out)
		}
	}
	t.Logf("the loaded tool was called in %d of 4 conversations", called)
	if called == 0 {
		t.Error("the loaded tool was never called: progressive loading did not make it callable")
	}
}

// sdkClient is the official Go SDK pointed at a gateway, without retries; last returns the
// headers of the latest response, where the gateway says what it did.
func sdkClient(gatewayURL string) (openai.Client, func() http.Header) {
	var mu sync.Mutex
	var header http.Header
	client := openai.NewClient(option.WithBaseURL(gatewayURL+"/v1/"), option.WithAPIKey("x"), option.WithMaxRetries(0),
		option.WithMiddleware(func(r *http.Request, next option.MiddlewareNext) (*http.Response, error) {
			resp, err := next(r)
			if resp != nil {
				mu.Lock()
				header = resp.Header
				mu.Unlock()
			}
			return resp, err
		}))
	return client, func() http.Header {
		mu.Lock()
		defer mu.Unlock()
		return header
	}
}
