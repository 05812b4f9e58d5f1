package gateway_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/maskgate/maskgate/backends/llamacpp"
	"github.com/maskgate/maskgate/backends/ollama"
	"github.com/maskgate/maskgate/gateway"
	"github.com/maskgate/maskgate/internal/enginetest"
	"github.com/maskgate/maskgate/internal/nodetest"
	"github.com/maskgate/maskgate/tenant"
)

// tinyDim is the tiny model's embedding width (bench/tinymodel's default Dim): the length
// of each vector an engine pools from it.
const tinyDim = 64

// TestEndpoints_LlamaServer: the official Go SDK's embeddings and completions through
// the gateway to a real llama-server started with --embeddings (mean pooling: the tiny
// model is a causal LM and declares no pooling of its own).
func TestEndpoints_LlamaServer(t *testing.T) {
	ls := enginetest.StartLlamaServer(t, enginetest.LlamaServerOptions{Args: []string{"--embeddings", "--pooling", "mean"}})
	be, err := llamacpp.New(llamacpp.Options{Name: "llama", BaseURL: ls.URL})
	if err != nil {
		t.Fatal(err)
	}
	up := gateway.Upstream{Name: "llama", Kind: "llamacpp", Models: []string{ls.Model}, Backend: be}
	endpointsThroughEngine(t, up, ls.Model)

	// A llama-server started without --embeddings answers 501 with why: the client gets
	// a 404 unsupported_endpoint with the engine's words, not a 502 to retry.
	t.Run("server_without_embeddings", func(t *testing.T) {
		plain := enginetest.Llama(t)
		pb, err := llamacpp.New(llamacpp.Options{Name: "plain", BaseURL: plain.URL})
		if err != nil {
			t.Fatal(err)
		}
		gw := httptest.NewServer(gateway.New(gateway.Options{Upstreams: []gateway.Upstream{{Name: "plain", Kind: "llamacpp", Models: []string{"*"}, Backend: pb}}}))
		t.Cleanup(gw.Close)
		r, out := postPath(t, gw.URL, "/v1/embeddings", `{"model":"`+plain.Model+`","input":"a"}`)
		if r.StatusCode != 404 || !strings.Contains(string(out), `"code":"unsupported_endpoint"`) || !strings.Contains(string(out), "--embeddings") {
			t.Errorf("embeddings from a llama-server without --embeddings: %d %s", r.StatusCode, out)
		}
	})

	// The official Node SDK: embeddings in its default base64, decoded by the SDK;
	// fill-in-the-middle with suffix; a stream.
	t.Run("node_sdk", func(t *testing.T) {
		node := nodetest.Node(t, nodeDir)
		gw := httptest.NewServer(gateway.New(gateway.Options{Upstreams: []gateway.Upstream{up}}))
		t.Cleanup(gw.Close)
		run := func(scenario string) map[string]any {
			t.Helper()
			var out map[string]any
			if code := runNodeScript(t, node, "endpoints.mjs", scenario, time.Minute, &out, "BASE_URL="+gw.URL+"/v1", "MODEL="+ls.Model); code != 0 {
				t.Fatalf("%s: exit %d: %v", scenario, code, out)
			}
			return out
		}
		e := run("embeddings")
		if fmt.Sprint(e["dims"]) != fmt.Sprint([]any{float64(tinyDim), float64(tinyDim)}) || e["finite"] != true || e["nonzero"] != true ||
			e["prompt_tokens"].(float64) <= 0 {
			t.Errorf("embeddings: %v", e)
		}
		c := run("completions")
		if c["text"] == "" || c["finish_reason"] != "length" || fmt.Sprint(c["usage"].(map[string]any)["completion_tokens"]) != "4" {
			t.Errorf("completions with suffix: %v", c)
		}
		s := run("completions-stream")
		if s["text"] == "" || s["chunks"].(float64) < 2 || s["finish_reason"] != "length" || s["usage"] != nil {
			t.Errorf("completions stream (no usage asked): %v", s)
		}
	})
}

// TestEndpoints_Ollama: the same through the gateway to a real Ollama, whose own /v1
// serves both endpoints.
func TestEndpoints_Ollama(t *testing.T) {
	srv := enginetest.Ollama(t)
	be, err := ollama.New(ollama.Options{Name: "ollama", BaseURL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	endpointsThroughEngine(t, gateway.Upstream{Name: "ollama", Kind: "ollama", Models: []string{srv.Model}, Backend: be}, srv.Model)
}

// endpointsThroughEngine runs the SDK's embeddings and completions (whole and streamed)
// as alice through a gateway with keys in front of up, spends bob's tokens_per_minute
// of 1 with one request so that his next is a 429, asks for an unknown model, and
// checks that the metrics counted every token the answers reported, under each door.
func endpointsThroughEngine(t *testing.T, up gateway.Upstream, model string) {
	reg := prometheus.NewRegistry()
	keys := testKeys(func(k *tenant.Key) {
		if k.Name == "bob" {
			k.Limits.TokensPerMinute = 1
		}
	})
	srv := httptest.NewServer(gateway.New(gateway.Options{Upstreams: []gateway.Upstream{up}, Keys: keys, Registry: reg}))
	t.Cleanup(srv.Close)
	gw := &testGateway{Server: srv, reg: reg}
	var mu sync.Mutex
	var lastHeader http.Header
	client := func(key string) openai.Client {
		return openai.NewClient(option.WithBaseURL(gw.URL+"/v1/"), option.WithAPIKey(key), option.WithMaxRetries(0),
			option.WithMiddleware(func(r *http.Request, next option.MiddlewareNext) (*http.Response, error) {
				resp, err := next(r)
				if resp != nil {
					mu.Lock()
					lastHeader = resp.Header
					mu.Unlock()
				}
				return resp, err
			}))
	}
	header := func() http.Header {
		mu.Lock()
		defer mu.Unlock()
		return lastHeader
	}
	alice := client(aliceKey)
	ctx := t.Context()
	var embedPrompt, completePrompt, completeOut int64 // what the answers reported
	finished := 0                                      // subtests that ran to their end (-run may leave some out)

	t.Run("embeddings", func(t *testing.T) {
		inputs := []string{"hello world", "a gateway between clients and engines"}
		resp, err := alice.Embeddings.New(ctx, openai.EmbeddingNewParams{Model: model,
			Input:          openai.EmbeddingNewParamsInputUnion{OfArrayOfStrings: inputs},
			EncodingFormat: openai.EmbeddingNewParamsEncodingFormatFloat})
		if err != nil {
			t.Fatal(err)
		}
		if len(resp.Data) != len(inputs) {
			t.Fatalf("%d vectors for %d inputs", len(resp.Data), len(inputs))
		}
		for i, d := range resp.Data {
			nonzero := false
			for _, v := range d.Embedding {
				nonzero = nonzero || v != 0
			}
			if len(d.Embedding) != tinyDim || !nonzero || d.Index != int64(i) {
				t.Errorf("vector %d: index %d, %d dimensions (want %d), nonzero %v", i, d.Index, len(d.Embedding), tinyDim, nonzero)
			}
		}
		if resp.Usage.PromptTokens <= 0 {
			t.Errorf("usage %+v", resp.Usage)
		}
		if got := header().Get(gateway.HeaderPromptTokens); got != strconv.FormatInt(resp.Usage.PromptTokens, 10) {
			t.Errorf("%s = %q, usage says %d", gateway.HeaderPromptTokens, got, resp.Usage.PromptTokens)
		}
		embedPrompt += resp.Usage.PromptTokens
		finished++
	})

	t.Run("completions", func(t *testing.T) {
		resp, err := alice.Completions.New(ctx, openai.CompletionNewParams{Model: openai.CompletionNewParamsModel(model),
			Prompt:    openai.CompletionNewParamsPromptUnion{OfString: openai.String("def add(a, b):\n    ")},
			MaxTokens: openai.Int(6), Seed: openai.Int(1), Temperature: openai.Float(0)})
		if err != nil {
			t.Fatal(err)
		}
		if len(resp.Choices) != 1 || resp.Choices[0].Text == "" || resp.Choices[0].FinishReason != "length" ||
			resp.Usage.CompletionTokens != 6 || resp.Usage.PromptTokens <= 0 {
			t.Errorf("completion %+v", resp)
		}
		completePrompt += resp.Usage.PromptTokens
		completeOut += resp.Usage.CompletionTokens
		finished++
	})

	t.Run("completions_stream", func(t *testing.T) {
		before := metricValue(t, gw, "maskgate_completion_tokens_total", doorLabels(up.Name, model, "completions"))
		promptBefore := metricValue(t, gw, "maskgate_prompt_tokens_total", doorLabels(up.Name, model, "completions"))
		stream := alice.Completions.NewStreaming(ctx, openai.CompletionNewParams{Model: openai.CompletionNewParamsModel(model),
			Prompt:    openai.CompletionNewParamsPromptUnion{OfString: openai.String("Once upon a time")},
			MaxTokens: openai.Int(5), Seed: openai.Int(2)})
		var text strings.Builder
		chunks, usageChunks, finish := 0, 0, ""
		for stream.Next() {
			c := stream.Current()
			chunks++
			if c.JSON.Usage.Valid() && c.Usage.TotalTokens > 0 {
				usageChunks++
			}
			for _, ch := range c.Choices {
				text.WriteString(ch.Text)
				if ch.FinishReason != "" {
					finish = string(ch.FinishReason)
				}
			}
		}
		if err := stream.Err(); err != nil {
			t.Fatal(err)
		}
		if chunks < 2 || text.Len() == 0 || finish != "length" || usageChunks != 0 {
			t.Errorf("%d chunks, text %q, finish %q, %d with usage (the client asked for none)", chunks, text.String(), finish, usageChunks)
		}
		// The gateway asked for the usage it dropped: the engine's count is in the metrics,
		// recorded once the handler has returned, just after the client read [DONE].
		after := waitMetric(t, gw, "maskgate_completion_tokens_total", doorLabels(up.Name, model, "completions"), before)
		if after-before != 5 {
			t.Errorf("completion tokens counted %v, want the 5 generated", after-before)
		}
		completeOut += 5
		prompt := metricValue(t, gw, "maskgate_prompt_tokens_total", doorLabels(up.Name, model, "completions")) - promptBefore
		if prompt <= 0 {
			t.Errorf("prompt tokens counted %v for the stream", prompt)
		}
		completePrompt += int64(prompt)
		finished++
	})

	t.Run("key_limit_spent", func(t *testing.T) {
		bob := client(bobKey)
		// One request takes bob past his 1 token a minute (the bucket goes into debt by
		// what the answer used), so the next is refused for about a minute.
		resp, err := bob.Embeddings.New(ctx, openai.EmbeddingNewParams{Model: model,
			Input: openai.EmbeddingNewParamsInputUnion{OfString: openai.String("one request spends the whole minute's budget")}})
		if err != nil {
			t.Fatal(err)
		}
		if resp.Usage.PromptTokens < 2 {
			t.Fatalf("bob's request used %d tokens; the test needs at least 2 to leave him in debt", resp.Usage.PromptTokens)
		}
		embedPrompt += resp.Usage.PromptTokens
		for _, path := range []string{"/v1/embeddings", "/v1/completions"} {
			r, out := postPath(t, gw.URL, path, `{"model":"`+model+`","input":"again","prompt":"again"}`, "Authorization", "Bearer "+bobKey)
			var env struct {
				Error struct {
					Type, Code, Message string
				}
			}
			if err := json.Unmarshal(out, &env); err != nil || r.StatusCode != 429 || env.Error.Type != "rate_limit_error" ||
				env.Error.Code != "rate_limit_exceeded" || r.Header.Get("Retry-After") == "" {
				t.Errorf("%s past the limit: %d Retry-After %q %s", path, r.StatusCode, r.Header.Get("Retry-After"), out)
			}
		}
		_, err = bob.Completions.New(ctx, openai.CompletionNewParams{Model: openai.CompletionNewParamsModel(model),
			Prompt: openai.CompletionNewParamsPromptUnion{OfString: openai.String("x")}, MaxTokens: openai.Int(1)})
		var apiErr *openai.Error
		if !errors.As(err, &apiErr) || apiErr.StatusCode != 429 || apiErr.Code != "rate_limit_exceeded" {
			t.Errorf("SDK past the limit: %v", err)
		}
		finished++
	})

	t.Run("unknown_model", func(t *testing.T) {
		r, out := postPath(t, gw.URL, "/v1/embeddings", `{"model":"no-such-model","input":"a"}`, "Authorization", "Bearer "+aliceKey)
		if r.StatusCode != 404 || !strings.Contains(string(out), `"code":"model_not_found"`) || !strings.Contains(string(out), `"param":"model"`) {
			t.Errorf("unknown model: %d %s", r.StatusCode, out)
		}
		finished++
	})

	if finished < 5 || t.Failed() {
		return
	}
	for _, c := range []struct {
		door, metric string
		want         int64
	}{
		{"embeddings", "maskgate_prompt_tokens_total", embedPrompt},
		{"embeddings", "maskgate_completion_tokens_total", 0},
		{"completions", "maskgate_prompt_tokens_total", completePrompt},
		{"completions", "maskgate_completion_tokens_total", completeOut},
	} {
		if got := metricValue(t, gw, c.metric, doorLabels(up.Name, model, c.door)); got != float64(c.want) {
			t.Errorf("%s{door=%q} = %v, the answers reported %d", c.metric, c.door, got, c.want)
		}
	}
	// Refused by the key's limit before routing: counted, under no backend.
	if got := metricValue(t, gw, "maskgate_requests_total", map[string]string{"backend": "none", "model": "none", "status": "429", "door": "embeddings"}); got != 1 {
		t.Errorf("requests_total for the 429 = %v, want 1", got)
	}
}

// waitMetric is the metric's value once it differs from was, or after 10 seconds.
func waitMetric(t *testing.T, gw *testGateway, name string, labels map[string]string, was float64) float64 {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		v := metricValue(t, gw, name, labels)
		if v != was || time.Now().After(deadline) {
			return v
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func doorLabels(backend, model, door string) map[string]string {
	return map[string]string{"backend": backend, "model": model, "strategy": "none", "door": door}
}
