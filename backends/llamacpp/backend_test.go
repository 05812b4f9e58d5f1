package llamacpp

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/maskgate/maskgate/backends"
	"github.com/maskgate/maskgate/backends/oai"
)

const toolsBody = `{"model":"qwen","messages":[{"role":"user","content":"weather?"}],"tools":` + twoTools + `}`

func streamBody(body string) string { return strings.TrimSuffix(body, "}") + `,"stream":true}` }

func TestChatCompletion_WholeAnswerWithToolCalls(t *testing.T) {
	f := newFake(t, "Checking.\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call>\n<tool_call>\n{\"name\": \"search\", \"arguments\": {\"q\": \"rain\"}}\n</tool_call>")
	b := newTestBackend(t, f.URL, fakeGrammar)
	resp, err := b.ChatCompletion(background(t), &backends.Request{Body: []byte(toolsBody), Model: "qwen"})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Cache != backends.CacheReported {
		t.Errorf("Cache = %q, want reported", resp.Cache)
	}
	var got oai.ChatCompletion
	if err := json.Unmarshal(resp.Body, &got); err != nil {
		t.Fatal(err)
	}
	text := "Checking."
	want := oai.ChatCompletion{ID: "chatcmpl-1", Object: "chat.completion", Created: 1700000000, Model: "qwen",
		Choices: []oai.Choice{{Message: oai.ResponseMessage{Role: "assistant", Content: &text, ToolCalls: []oai.ToolCall{
			// The model's argument bytes; ids derive from the response id.
			{ID: "call_1_0", Type: "function", Function: oai.FunctionCall{Name: "get_weather", Arguments: `{"city": "Paris"}`}},
			{ID: "call_1_1", Type: "function", Function: oai.FunctionCall{Name: "search", Arguments: `{"q": "rain"}`}},
		}}, FinishReason: "tool_calls"}},
		// prompt = timings.prompt_n 20 + cache_n 100; cached = cache_n.
		Usage: &oai.Usage{PromptTokens: 120, CompletionTokens: 9, TotalTokens: 129, PromptTokensDetails: &oai.PromptTokensDetails{CachedTokens: 100}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestChatCompletion_NoToolsPassesTextAsIs(t *testing.T) {
	f := newFake(t, "Use <tool_call> tags.")
	f.final = `"stop_type":"limit","tokens_predicted":4,"tokens_evaluated":12` // no timings: fall back
	b := newTestBackend(t, f.URL, nil)
	resp, err := b.ChatCompletion(background(t), &backends.Request{Body: []byte(`{"model":"q","messages":[{"role":"user","content":"hi"}]}`)})
	if err != nil {
		t.Fatal(err)
	}
	var got oai.ChatCompletion
	json.Unmarshal(resp.Body, &got)
	c := got.Choices[0]
	if c.Message.Content == nil || *c.Message.Content != "Use <tool_call> tags." || c.FinishReason != "length" {
		t.Errorf("got %+v", c)
	}
	if u := got.Usage; u.PromptTokens != 12 || u.CompletionTokens != 4 || u.PromptTokensDetails.CachedTokens != 0 {
		t.Errorf("usage %+v", u)
	}
}

// readStream drains s into its chunks.
func readStream(t *testing.T, s backends.Stream) []oai.Chunk {
	t.Helper()
	defer s.Close()
	var out []oai.Chunk
	for {
		data, err := s.Next()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatalf("after %d chunks: %v", len(out), err)
		}
		var c oai.Chunk
		if err := json.Unmarshal(data, &c); err != nil {
			t.Fatal(err)
		}
		out = append(out, c)
	}
}

func TestStream_ToolCallsSplitAcrossEvents(t *testing.T) {
	f := newFake(t, "Let", " me look.", "\n<tool", "_call>\n{\"name\": \"get_", "weather\", \"arguments\": {\"city\":", " \"Paris\"}}\n</tool_", "call>\n<tool_call>{\"name\":\"search\",\"arguments\":{}}</tool_call>")
	b := newTestBackend(t, f.URL, fakeGrammar)
	resp, err := b.ChatCompletion(background(t), &backends.Request{Body: []byte(streamBody(toolsBody)), Model: "qwen", Stream: true})
	if err != nil {
		t.Fatal(err)
	}
	chunks := readStream(t, resp.Stream)
	var roles, text []string
	var calls []oai.ToolCall
	var finish []string
	for i, c := range chunks {
		if c.ID != "chatcmpl-1" || c.Object != "chat.completion.chunk" || c.Model != "qwen" {
			t.Errorf("chunk %d header %+v", i, c)
		}
		if len(c.Choices) == 0 {
			if i != len(chunks)-1 || c.Usage == nil {
				t.Errorf("chunk %d has no choices but is not the final usage chunk", i)
			}
			continue
		}
		d := c.Choices[0].Delta
		if d.Role != "" {
			roles = append(roles, d.Role)
		}
		if d.Content != nil && *d.Content != "" {
			text = append(text, *d.Content)
		}
		calls = append(calls, d.ToolCalls...)
		if fr := c.Choices[0].FinishReason; fr != nil {
			finish = append(finish, *fr)
		}
	}
	if diff := cmp.Diff([]string{"assistant"}, roles); diff != "" {
		t.Errorf("roles (-want +got):\n%s", diff)
	}
	if got := strings.Join(text, ""); got != "Let me look." {
		t.Errorf("content %q", got)
	}
	zero, one := 0, 1
	wantCalls := []oai.ToolCall{
		{Index: &zero, ID: "call_1_0", Type: "function", Function: oai.FunctionCall{Name: "get_weather"}},
		{Index: &zero, Function: oai.FunctionCall{Arguments: `{"city": "Paris"}`}},
		{Index: &one, ID: "call_1_1", Type: "function", Function: oai.FunctionCall{Name: "search"}},
		{Index: &one, Function: oai.FunctionCall{Arguments: `{}`}},
	}
	if diff := cmp.Diff(wantCalls, calls); diff != "" {
		t.Errorf("tool call deltas (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"tool_calls"}, finish); diff != "" {
		t.Errorf("finish (-want +got):\n%s", diff)
	}
	u := chunks[len(chunks)-1].Usage
	if u == nil || u.PromptTokens != 120 || u.PromptTokensDetails.CachedTokens != 100 || u.CompletionTokens != 9 {
		t.Errorf("usage %+v", u)
	}
	if resp.Cache != backends.CacheReported {
		t.Errorf("Cache = %q", resp.Cache)
	}
}

func TestStream_PlainTextDeltas(t *testing.T) {
	f := newFake(t, "Hel", "lo", "!")
	b := newTestBackend(t, f.URL, nil)
	resp, err := b.ChatCompletion(background(t), &backends.Request{Body: []byte(`{"model":"q","messages":[{"role":"user","content":"hi"}],"stream":true}`), Stream: true})
	if err != nil {
		t.Fatal(err)
	}
	chunks := readStream(t, resp.Stream)
	var deltas []string
	for _, c := range chunks[1:] {
		if len(c.Choices) > 0 && c.Choices[0].Delta.Content != nil {
			deltas = append(deltas, *c.Choices[0].Delta.Content)
		}
	}
	if diff := cmp.Diff([]string{"Hel", "lo", "!"}, deltas); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if fr := chunks[len(chunks)-2].Choices[0].FinishReason; fr == nil || *fr != "stop" {
		t.Errorf("finish %v", fr)
	}
}

func TestStream_EndWithoutStopIsTruncated(t *testing.T) {
	f := newFake(t, "Hel", "lo")
	f.truncate = true
	b := newTestBackend(t, f.URL, nil)
	resp, err := b.ChatCompletion(background(t), &backends.Request{Body: []byte(`{"model":"q","messages":[{"role":"user","content":"hi"}],"stream":true}`), Stream: true})
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Stream.Close()
	for {
		_, err := resp.Stream.Next()
		if err == nil {
			continue
		}
		if !errors.Is(err, backends.ErrTruncated) {
			t.Fatalf("err = %v, want ErrTruncated", err)
		}
		return
	}
}

func TestStream_ErrorEventIs502(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/apply-template" {
			io.WriteString(w, `{"prompt":"p"}`)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "data: {\"content\":\"a\",\"stop\":false}\n\ndata: {\"error\":{\"code\":500,\"message\":\"slot crashed\",\"type\":\"server_error\"}}\n\n")
	}))
	defer srv.Close()
	b := newTestBackend(t, srv.URL, nil)
	resp, err := b.ChatCompletion(background(t), &backends.Request{Body: []byte(`{"messages":[{"role":"user","content":"hi"}]}`), Stream: true})
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Stream.Close()
	var be *backends.Error
	for {
		if _, err = resp.Stream.Next(); err != nil {
			break
		}
	}
	if !errors.As(err, &be) || be.Status != http.StatusBadGateway || !strings.Contains(be.Message, "slot crashed") {
		t.Errorf("err = %v", err)
	}
}

// TestStream_CancellationReachesServer: closing the stream, or the client going away,
// ends the upstream request, which is what makes llama-server stop generating.
func TestStream_CancellationReachesServer(t *testing.T) {
	for _, how := range []string{"close", "context"} {
		t.Run(how, func(t *testing.T) {
			f := newFake(t, "thinking")
			f.block = true
			b := newTestBackend(t, f.URL, nil)
			ctx, cancel := context.WithCancel(background(t))
			defer cancel()
			resp, err := b.ChatCompletion(ctx, &backends.Request{Body: []byte(`{"messages":[{"role":"user","content":"hi"}]}`), Stream: true})
			if err != nil {
				t.Fatal(err)
			}
			<-f.started
			if how == "close" {
				resp.Stream.Close()
			} else {
				cancel()
			}
			select {
			case <-f.gone:
			case <-time.After(5 * time.Second):
				t.Fatal("the fake never saw its client go away")
			}
			for {
				if _, err = resp.Stream.Next(); err != nil {
					break
				}
			}
			if how == "context" && !errors.Is(err, context.Canceled) {
				t.Errorf("err after cancel = %v, want context.Canceled", err)
			}
			resp.Stream.Close() // twice is safe
		})
	}
}

func TestErrors_ClassifiedLikeOpenAICompat(t *testing.T) {
	tests := []struct {
		name       string
		status     int
		body       string
		wantStatus int
		wantMsg    string
	}{
		{"4xx passes through", 400, `{"error":{"code":400,"message":"the request exceeds the available context size","type":"exceed_context_size_error"}}`, 400, "exceeds the available context"},
		{"loading model keeps 503", 503, `{"error":{"code":503,"message":"Loading model","type":"unavailable_error"}}`, 503, "Loading model"},
		{"5xx becomes 502", 500, `{"error":{"code":500,"message":"boom","type":"server_error"}}`, 502, "boom"},
		{"404 names the url", 404, `not found`, 502, "llama-server root"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFake(t)
			f.status, f.errBody = tt.status, tt.body
			b := newTestBackend(t, f.URL, nil)
			_, err := b.ChatCompletion(background(t), &backends.Request{Body: []byte(`{"messages":[{"role":"user","content":"hi"}]}`)})
			var be *backends.Error
			if !errors.As(err, &be) || be.Status != tt.wantStatus || !strings.Contains(be.Message, tt.wantMsg) {
				t.Fatalf("err = %v, want %d containing %q", err, tt.wantStatus, tt.wantMsg)
			}
			if be.Code == "400" || be.Code == "503" {
				t.Errorf("numeric code %q leaked into the envelope", be.Code)
			}
		})
	}
}

func TestErrors_UnreachableIs502(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	url := "http://" + ln.Addr().String()
	ln.Close()
	b := newTestBackend(t, url, nil)
	_, err = b.ChatCompletion(background(t), &backends.Request{Body: []byte(`{"messages":[{"role":"user","content":"hi"}]}`)})
	var be *backends.Error
	if !errors.As(err, &be) || be.Status != http.StatusBadGateway || be.Code != "upstream_unreachable" {
		t.Fatalf("err = %v", err)
	}
}

func TestErrors_SlowHeadersAre504(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	defer close(release)
	b, _ := New(Options{Name: "slow", BaseURL: srv.URL, Timeout: 50 * time.Millisecond})
	_, err := b.ChatCompletion(background(t), &backends.Request{Body: []byte(`{"messages":[{"role":"user","content":"hi"}]}`)})
	var be *backends.Error
	if !errors.As(err, &be) || be.Status != http.StatusGatewayTimeout {
		t.Fatalf("err = %v", err)
	}
}

func TestErrors_GrammarFailureIsNotSent(t *testing.T) {
	f := newFake(t, "x")
	b := newTestBackend(t, f.URL, func(GrammarRequest) (json.RawMessage, error) { return nil, errors.New("no grammar for you") })
	_, err := b.ChatCompletion(background(t), &backends.Request{Body: []byte(toolsBody)})
	if err == nil || !strings.Contains(err.Error(), "no grammar for you") {
		t.Fatalf("err = %v", err)
	}
	if f.last("/completion") != nil {
		t.Error("a /completion was sent without its grammar")
	}
}

func TestModelsAndHealth(t *testing.T) {
	f := newFake(t)
	b := newTestBackend(t, f.URL, nil)
	models, err := b.ListModels(background(t))
	if err != nil || len(models) != 1 || models[0] != "qwen3-4b.gguf" {
		t.Errorf("ListModels = %v, %v", models, err)
	}
	if err := b.Ping(background(t)); err != nil {
		t.Errorf("Ping: %v", err)
	}
	loading := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusServiceUnavailable)
		io.WriteString(w, `{"error":{"code":503,"message":"Loading model","type":"unavailable_error"}}`)
	}))
	defer loading.Close()
	var be *backends.Error
	if err := newTestBackend(t, loading.URL, nil).Ping(background(t)); !errors.As(err, &be) || be.Status != 503 {
		t.Errorf("Ping while loading = %v, want 503", err)
	}
}

func TestNew_ValidatesOptions(t *testing.T) {
	for _, url := range []string{"", "localhost:8080", "ftp://x", "http://127.0.0.1:8080/v1"} {
		if _, err := New(Options{Name: "l", BaseURL: url}); err == nil {
			t.Errorf("url %q: no error", url)
		}
	}
	b, err := New(Options{Name: "l", BaseURL: "http://127.0.0.1:8080/"})
	if err != nil || b.ConstrainsTools() {
		t.Errorf("without Grammar: %v, ConstrainsTools %v", err, b.ConstrainsTools())
	}
	if b, _ := New(Options{BaseURL: "http://x", Grammar: fakeGrammar}); !b.ConstrainsTools() {
		t.Error("with Grammar: ConstrainsTools false")
	}
}

// The engine's own timings reach the gateway, whole and streamed: prompt_ms for the
// prompt_n tokens computed after cache_n reused, predicted_ms for the predicted_n−1
// steps after the first token. Without timings there are none.
func TestTimings_WholeAndStreamed(t *testing.T) {
	f := newFake(t, "Hel", "lo")
	f.final = `"stop_type":"eos","tokens_predicted":9,"tokens_evaluated":120,"timings":{"cache_n":100,"prompt_n":20,"prompt_ms":31.5,"predicted_n":9,"predicted_ms":48}`
	b := newTestBackend(t, f.URL, nil)
	want := backends.Timings{Cached: 100, Computed: 20, PrefillSeconds: 0.0315, DecodeSteps: 8, DecodeSeconds: 0.048}
	whole, err := b.ChatCompletion(background(t), &backends.Request{Body: []byte(`{"model":"q","messages":[{"role":"user","content":"hi"}]}`)})
	if err != nil {
		t.Fatal(err)
	}
	if got := backends.TimingsOf(whole); got == nil || *got != want {
		t.Errorf("whole: timings %+v, want %+v", got, want)
	}
	streamed, err := b.ChatCompletion(background(t), &backends.Request{Body: []byte(`{"model":"q","messages":[{"role":"user","content":"hi"}],"stream":true}`), Stream: true})
	if err != nil {
		t.Fatal(err)
	}
	if got := backends.TimingsOf(streamed); got != nil {
		t.Errorf("timings %+v before the stream's end", got)
	}
	readStream(t, streamed.Stream)
	if got := backends.TimingsOf(streamed); got == nil || *got != want {
		t.Errorf("streamed: timings %+v, want %+v", got, want)
	}

	f.final = `"stop_type":"eos","tokens_predicted":9,"tokens_evaluated":120`
	none, err := b.ChatCompletion(background(t), &backends.Request{Body: []byte(`{"model":"q","messages":[{"role":"user","content":"hi"}]}`)})
	if err != nil {
		t.Fatal(err)
	}
	if got := backends.TimingsOf(none); got != nil {
		t.Errorf("timings %+v from an answer without them", got)
	}
}
