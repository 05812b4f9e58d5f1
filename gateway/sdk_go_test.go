package gateway_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/ssestream"
	"github.com/openai/openai-go/v3/shared"
)

// These tests put the official Go SDK, unmodified, in front of the gateway and assert
// what it parses: if the SDK can read it, so can the applications built on it.

// sdkTools is what a client declares; the upstream must see both tools intact.
var sdkTools = []openai.ChatCompletionToolUnionParam{
	openai.ChatCompletionFunctionTool(shared.FunctionDefinitionParam{
		Name:        "get_weather",
		Description: openai.String("Current weather for a city"),
		Parameters: shared.FunctionParameters{
			"type":       "object",
			"properties": map[string]any{"city": map[string]any{"type": "string"}},
			"required":   []string{"city"},
		},
	}),
	openai.ChatCompletionFunctionTool(shared.FunctionDefinitionParam{
		Name:        "get_time",
		Description: openai.String("Local time in a time zone"),
		Parameters: shared.FunctionParameters{
			"type":       "object",
			"properties": map[string]any{"tz": map[string]any{"type": "string"}},
		},
	}),
}

// bodyRecorder keeps the request bodies the SDK put on the wire.
type bodyRecorder struct {
	next http.RoundTripper
	mu   sync.Mutex
	sent [][]byte
}

func (r *bodyRecorder) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Body != nil {
		body, err := io.ReadAll(req.Body)
		req.Body.Close()
		if err != nil {
			return nil, err
		}
		r.mu.Lock()
		r.sent = append(r.sent, body)
		r.mu.Unlock()
		req.Body = io.NopCloser(bytes.NewReader(body))
	}
	return r.next.RoundTrip(req)
}

func (r *bodyRecorder) last() []byte {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.sent) == 0 {
		return nil
	}
	return r.sent[len(r.sent)-1]
}

// goSDK returns the official client aimed at gw, without retries, and what it sent.
func goSDK(t *testing.T, gw *testGateway) (openai.Client, *bodyRecorder) {
	t.Helper()
	tr := http.DefaultTransport.(*http.Transport).Clone()
	t.Cleanup(tr.CloseIdleConnections)
	rec := &bodyRecorder{next: tr}
	c := openai.NewClient(
		option.WithBaseURL(gw.URL+"/v1/"),
		option.WithAPIKey("x"),
		option.WithMaxRetries(0),
		option.WithHTTPClient(&http.Client{Transport: rec}),
	)
	return c, rec
}

func sdkContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func userAsks(s string) []openai.ChatCompletionMessageParamUnion {
	return []openai.ChatCompletionMessageParamUnion{openai.UserMessage(s)}
}

// upstreamRequest is the part of a chat request the tests check on the upstream side.
type upstreamRequest struct {
	Model  string `json:"model"`
	Stream bool   `json:"stream"`
	Tools  []struct {
		Type     string `json:"type"`
		Function struct {
			Name       string          `json:"name"`
			Parameters json.RawMessage `json:"parameters"`
		} `json:"function"`
	} `json:"tools"`
	ToolChoice    json.RawMessage `json:"tool_choice"`
	StreamOptions *struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
}

func parseUpstreamRequest(t *testing.T, body []byte) upstreamRequest {
	t.Helper()
	var r upstreamRequest
	if err := json.Unmarshal(body, &r); err != nil {
		t.Fatalf("upstream body is not a chat request: %v\n%s", err, body)
	}
	return r
}

func (r upstreamRequest) toolNames() []string {
	var names []string
	for _, tl := range r.Tools {
		names = append(names, tl.Type+":"+tl.Function.Name)
	}
	return names
}

// assertToolsArrived checks the upstream got the SDK's tools and tool_choice, and, the
// request not being a stream the gateway must ask usage for, the SDK's exact bytes.
func assertToolsArrived(t *testing.T, up *upstream, rec *bodyRecorder, wantChoice string) upstreamRequest {
	t.Helper()
	got := up.lastBody()
	r := parseUpstreamRequest(t, got)
	if diff := cmp.Diff([]string{"function:get_weather", "function:get_time"}, r.toolNames()); diff != "" {
		t.Errorf("upstream tools (-want +got):\n%s", diff)
	}
	if !json.Valid(r.Tools[0].Function.Parameters) || !bytes.Contains(r.Tools[0].Function.Parameters, []byte(`"city"`)) {
		t.Errorf("upstream lost the parameters schema: %s", r.Tools[0].Function.Parameters)
	}
	if string(r.ToolChoice) != wantChoice {
		t.Errorf("upstream tool_choice = %s, want %s", r.ToolChoice, wantChoice)
	}
	if !r.Stream || (r.StreamOptions != nil && r.StreamOptions.IncludeUsage) {
		if sent := rec.last(); !bytes.Equal(sent, got) {
			t.Errorf("upstream got other bytes than the SDK sent:\n sent %s\n  got %s", sent, got)
		}
	}
	return r
}

func TestSDK_Go_TextWithCachedTokens(t *testing.T) {
	t.Parallel()
	up := newUpstream(t, replyJSON(200, completionJSON))
	gw := gatewayFor(t, up)
	c, rec := goSDK(t, gw)

	cc, err := c.Chat.Completions.New(sdkContext(t), openai.ChatCompletionNewParams{
		Model: "m1", Messages: userAsks("say hello"),
	})
	if err != nil {
		t.Fatalf("SDK error: %v", err)
	}
	if len(cc.Choices) != 1 {
		t.Fatalf("%d choices: %s", len(cc.Choices), cc.RawJSON())
	}
	ch := cc.Choices[0]
	if ch.Message.Content != "hello" || ch.FinishReason != "stop" || ch.Message.Role != "assistant" {
		t.Errorf("choice: content %q, finish %q, role %q", ch.Message.Content, ch.FinishReason, ch.Message.Role)
	}
	u := cc.Usage
	if u.PromptTokens != 10 || u.CompletionTokens != 2 || u.TotalTokens != 12 || u.PromptTokensDetails.CachedTokens != 8 {
		t.Errorf("usage: %s", u.RawJSON())
	}
	if !u.PromptTokensDetails.JSON.CachedTokens.Valid() {
		t.Error("SDK did not see prompt_tokens_details.cached_tokens as present")
	}
	if sent, got := rec.last(), up.lastBody(); !bytes.Equal(sent, got) {
		t.Errorf("upstream got other bytes than the SDK sent:\n sent %s\n  got %s", sent, got)
	}
}

const toolCallsJSON = `{"id":"chatcmpl-2","object":"chat.completion","created":2,"model":"m1","choices":[{"index":0,"message":{"role":"assistant","content":null,"tool_calls":[` +
	`{"id":"call_a","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Paris\"}"}},` +
	`{"id":"call_b","type":"function","function":{"name":"get_time","arguments":"{\"tz\":\"Europe/Paris\"}"}}]},` +
	`"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":40,"completion_tokens":20,"total_tokens":60}}`

type sdkToolCall struct{ ID, Type, Name, Arguments string }

func TestSDK_Go_ToolCalls(t *testing.T) {
	t.Parallel()
	up := newUpstream(t, replyJSON(200, toolCallsJSON))
	gw := gatewayFor(t, up)
	c, rec := goSDK(t, gw)

	cc, err := c.Chat.Completions.New(sdkContext(t), openai.ChatCompletionNewParams{
		Model: "m1", Messages: userAsks("weather and time in Paris"),
		Tools:      sdkTools,
		ToolChoice: openai.ChatCompletionToolChoiceOptionUnionParam{OfAuto: openai.String("required")},
	})
	if err != nil {
		t.Fatalf("SDK error: %v", err)
	}
	assertToolsArrived(t, up, rec, `"required"`)

	ch := cc.Choices[0]
	if ch.FinishReason != "tool_calls" || ch.Message.Content != "" {
		t.Errorf("finish %q, content %q", ch.FinishReason, ch.Message.Content)
	}
	var got []sdkToolCall
	for _, tc := range ch.Message.ToolCalls {
		fn := tc.AsFunction()
		got = append(got, sdkToolCall{fn.ID, tc.Type, fn.Function.Name, fn.Function.Arguments})
	}
	want := []sdkToolCall{
		{"call_a", "function", "get_weather", `{"city":"Paris"}`},
		{"call_b", "function", "get_time", `{"tz":"Europe/Paris"}`},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("tool calls (-want +got):\n%s", diff)
	}
}

// A stream as OpenAI sends it with include_usage: "usage":null on every chunk, then one
// chunk with no choices and the usage.
var textStreamEvents = []string{
	`{"id":"s","object":"chat.completion.chunk","created":3,"model":"m1","choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}],"usage":null}`,
	`{"id":"s","object":"chat.completion.chunk","created":3,"model":"m1","choices":[{"index":0,"delta":{"content":"Hel"},"finish_reason":null}],"usage":null}`,
	`{"id":"s","object":"chat.completion.chunk","created":3,"model":"m1","choices":[{"index":0,"delta":{"content":"lo, wor"},"finish_reason":null}],"usage":null}`,
	`{"id":"s","object":"chat.completion.chunk","created":3,"model":"m1","choices":[{"index":0,"delta":{"content":"ld"},"finish_reason":null}],"usage":null}`,
	`{"id":"s","object":"chat.completion.chunk","created":3,"model":"m1","choices":[{"index":0,"delta":{},"finish_reason":"stop"}],"usage":null}`,
	`{"id":"s","object":"chat.completion.chunk","created":3,"model":"m1","choices":[],"usage":{"prompt_tokens":21,"completion_tokens":4,"total_tokens":25,"prompt_tokens_details":{"cached_tokens":16}}}`,
}

// accumulate reads a whole stream into the SDK's accumulator, with the tool calls it
// reported as finished along the way.
func accumulate(t *testing.T, st *ssestream.Stream[openai.ChatCompletionChunk]) (openai.ChatCompletionAccumulator, []openai.FinishedChatCompletionToolCall, error) {
	t.Helper()
	defer st.Close()
	var acc openai.ChatCompletionAccumulator
	var finished []openai.FinishedChatCompletionToolCall
	for st.Next() {
		if !acc.AddChunk(st.Current()) {
			t.Errorf("accumulator rejected chunk %s", st.Current().RawJSON())
		}
		if tc, ok := acc.JustFinishedToolCall(); ok {
			finished = append(finished, tc)
		}
	}
	return acc, finished, st.Err()
}

func TestSDK_Go_StreamTextWithUsage(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name      string
		opts      openai.ChatCompletionStreamOptionsParam
		wantUsage [4]int64 // prompt, completion, total, cached
	}{
		{"include_usage", openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)}, [4]int64{21, 4, 25, 16}},
		// The gateway asks the upstream for usage anyway; the client must not see it.
		{"no usage asked", openai.ChatCompletionStreamOptionsParam{}, [4]int64{}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			up := newUpstream(t, replySSE(textStreamEvents, true))
			gw := gatewayFor(t, up)
			c, _ := goSDK(t, gw)
			st := c.Chat.Completions.NewStreaming(sdkContext(t), openai.ChatCompletionNewParams{
				Model: "m1", Messages: userAsks("greet the world"), StreamOptions: tt.opts,
			})
			acc, _, err := accumulate(t, st)
			if err != nil {
				t.Fatalf("stream error: %v", err)
			}
			if len(acc.Choices) != 1 {
				t.Fatalf("%d choices", len(acc.Choices))
			}
			if got := acc.Choices[0].Message.Content; got != "Hello, world" {
				t.Errorf("content %q", got)
			}
			if got := acc.Choices[0].FinishReason; got != "stop" {
				t.Errorf("finish reason %q", got)
			}
			u := acc.Usage
			if got := [4]int64{u.PromptTokens, u.CompletionTokens, u.TotalTokens, u.PromptTokensDetails.CachedTokens}; got != tt.wantUsage {
				t.Errorf("usage (prompt, completion, total, cached) = %v, want %v", got, tt.wantUsage)
			}
			if r := parseUpstreamRequest(t, up.lastBody()); r.StreamOptions == nil || !r.StreamOptions.IncludeUsage || !r.Stream {
				t.Errorf("upstream was not asked to stream with usage: %s", up.lastBody())
			}
		})
	}
}

// Two tool calls, one after the other, as vLLM streams parallel calls.
var twoToolCallEvents = []string{
	`{"id":"t","object":"chat.completion.chunk","created":4,"model":"m1","choices":[{"index":0,"delta":{"role":"assistant"},"finish_reason":null}]}`,
	`{"id":"t","object":"chat.completion.chunk","created":4,"model":"m1","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_a","type":"function","function":{"name":"get_weather","arguments":""}}]},"finish_reason":null}]}`,
	`{"id":"t","object":"chat.completion.chunk","created":4,"model":"m1","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"city\": \"Os"}}]},"finish_reason":null}]}`,
	`{"id":"t","object":"chat.completion.chunk","created":4,"model":"m1","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"lo\"}"}}]},"finish_reason":null}]}`,
	`{"id":"t","object":"chat.completion.chunk","created":4,"model":"m1","choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"id":"call_b","type":"function","function":{"name":"get_time","arguments":"{\"tz\":"}}]},"finish_reason":null}]}`,
	`{"id":"t","object":"chat.completion.chunk","created":4,"model":"m1","choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"function":{"arguments":" \"CET\"}"}}]},"finish_reason":null}]}`,
	`{"id":"t","object":"chat.completion.chunk","created":4,"model":"m1","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`,
	`{"id":"t","object":"chat.completion.chunk","created":4,"model":"m1","choices":[],"usage":{"prompt_tokens":50,"completion_tokens":30,"total_tokens":80}}`,
}

func TestSDK_Go_StreamToolCalls(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name   string
		events []string
		want   []sdkToolCall
	}{
		{"one call", streamEvents, []sdkToolCall{{"call_1", "function", "get_weather", `{"city":"Paris"}`}}},
		{"two calls", twoToolCallEvents, []sdkToolCall{
			{"call_a", "function", "get_weather", `{"city": "Oslo"}`},
			{"call_b", "function", "get_time", `{"tz": "CET"}`},
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			up := newUpstream(t, replySSE(tt.events, true))
			gw := gatewayFor(t, up)
			c, rec := goSDK(t, gw)
			st := c.Chat.Completions.NewStreaming(sdkContext(t), openai.ChatCompletionNewParams{
				Model: "m1", Messages: userAsks("weather"),
				Tools:         sdkTools,
				ToolChoice:    openai.ToolChoiceOptionFunctionToolChoice(openai.ChatCompletionNamedToolChoiceFunctionParam{Name: "get_weather"}),
				StreamOptions: openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)},
			})
			acc, finished, err := accumulate(t, st)
			if err != nil {
				t.Fatalf("stream error: %v", err)
			}
			assertToolsArrived(t, up, rec, `{"function":{"name":"get_weather"},"type":"function"}`)

			if got := acc.Choices[0].FinishReason; got != "tool_calls" {
				t.Errorf("finish reason %q", got)
			}
			var got, gotFinished []sdkToolCall
			for _, tc := range acc.Choices[0].Message.ToolCalls {
				got = append(got, sdkToolCall{tc.ID, tc.Type, tc.Function.Name, tc.Function.Arguments})
			}
			for _, tc := range finished {
				gotFinished = append(gotFinished, sdkToolCall{tc.ID, "function", tc.Name, tc.Arguments})
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("accumulated tool calls (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.want, gotFinished); diff != "" {
				t.Errorf("JustFinishedToolCall (-want +got):\n%s", diff)
			}
			for _, tc := range got {
				if !json.Valid([]byte(tc.Arguments)) {
					t.Errorf("joined arguments of %s are not JSON: %q", tc.ID, tc.Arguments)
				}
			}
			if acc.Usage.TotalTokens == 0 {
				t.Error("usage was asked for but not accumulated")
			}
		})
	}
}

// breakAfter streams events, then drops the connection without [DONE]: the engine died.
func breakAfter(events ...string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		for _, e := range events {
			io.WriteString(w, "data: "+e+"\n\n")
		}
		w.(http.Flusher).Flush()
		if conn, _, err := http.NewResponseController(w).Hijack(); err == nil {
			conn.Close()
		}
	}
}

func TestSDK_Go_StreamBreakIsAnError(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name    string
		reply   http.HandlerFunc
		wantMsg string
	}{
		{"connection dropped", breakAfter(textStreamEvents[:3]...), "ended before it was complete"},
		{"error event", replySSE(append(append([]string{}, textStreamEvents[:3]...),
			`{"error":{"message":"engine overloaded","type":"server_error","param":null,"code":null}}`), false), "engine overloaded"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			up := newUpstream(t, tt.reply)
			gw := gatewayFor(t, up)
			c, _ := goSDK(t, gw)
			st := c.Chat.Completions.NewStreaming(sdkContext(t), openai.ChatCompletionNewParams{
				Model: "m1", Messages: userAsks("greet"),
				StreamOptions: openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)},
			})
			acc, _, err := accumulate(t, st)
			if err == nil {
				t.Fatalf("a broken stream ended without an error; the SDK took %q as the whole answer", acc.Choices[0].Message.Content)
			}
			var se *ssestream.StreamError
			if !errors.As(err, &se) {
				t.Fatalf("error %T %v, want *ssestream.StreamError", err, err)
			}
			if !strings.Contains(se.Message, tt.wantMsg) {
				t.Errorf("stream error %q does not say %q", se.Message, tt.wantMsg)
			}
			if got := acc.Choices[0].Message.Content; got != "Hello, wor" {
				t.Errorf("content before the break %q", got)
			}
		})
	}
}

func TestSDK_Go_UpstreamErrorKeepsStatusMessageParam(t *testing.T) {
	t.Parallel()
	const body = `{"error":{"message":"This model's maximum context length is 8192 tokens.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}`
	for _, stream := range []bool{false, true} {
		name := "whole"
		if stream {
			name = "stream"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			up := newUpstream(t, replyJSON(http.StatusBadRequest, body))
			gw := gatewayFor(t, up)
			c, _ := goSDK(t, gw)
			params := openai.ChatCompletionNewParams{Model: "m1", Messages: userAsks(strings.Repeat("long ", 100))}
			var err error
			if stream {
				_, _, err = accumulate(t, c.Chat.Completions.NewStreaming(sdkContext(t), params))
			} else {
				_, err = c.Chat.Completions.New(sdkContext(t), params)
			}
			var ae *openai.Error
			if !errors.As(err, &ae) {
				t.Fatalf("error %T %v, want *openai.Error", err, err)
			}
			got := [5]string{http.StatusText(ae.StatusCode), ae.Message, ae.Type, ae.Param, ae.Code}
			want := [5]string{"Bad Request", "This model's maximum context length is 8192 tokens.", "invalid_request_error", "messages", "context_length_exceeded"}
			if got != want {
				t.Errorf("SDK error (status, message, type, param, code):\n got %q\nwant %q", got, want)
			}
		})
	}
}
