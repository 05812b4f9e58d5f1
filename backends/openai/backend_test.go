package openai

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/maskgate/maskgate/backends"
	"github.com/maskgate/maskgate/backends/openaicompat"
)

// fakeOpenAI answers like OpenAI: a call to the first tool_choice name it was allowed,
// whole or streamed, and records what it received.
type fakeOpenAI struct {
	mu   sync.Mutex
	got  []byte
	call string // the wire name it calls
}

func (f *fakeOpenAI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	f.mu.Lock()
	f.got = body
	f.mu.Unlock()
	if strings.Contains(string(body), `"stream":true`) {
		w.Header().Set("Content-Type", "text/event-stream")
		for _, c := range []string{
			`{"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"role":"assistant","content":null,"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"` + f.call + `","arguments":""}}]},"finish_reason":null}]}`,
			`{"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"message\":\"x\"}"}}]},"finish_reason":null}]}`,
			`{"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`,
			`{"id":"c","object":"chat.completion.chunk","choices":[],"usage":{"prompt_tokens":1500,"completion_tokens":12,"total_tokens":1512,"prompt_tokens_details":{"cached_tokens":1408}}}`,
		} {
			io.WriteString(w, "data: "+c+"\n\n")
		}
		io.WriteString(w, "data: [DONE]\n\n")
		return
	}
	w.Header().Set("Content-Type", "application/json")
	io.WriteString(w, `{"id":"c","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"`+f.call+`","arguments":"{}"}}]},"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":1500,"completion_tokens":12,"total_tokens":1512,"prompt_tokens_details":{"cached_tokens":1408}}}`)
}

func newBackend(t *testing.T, f http.Handler, noAllowed bool) *Backend {
	t.Helper()
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	b, err := New(Options{Options: openaicompat.Options{Name: "openai", BaseURL: srv.URL + "/v1", APIKey: "sk-test"}, NoAllowedTools: noAllowed})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestBackend_WholeAnswerComesBackInRealNames(t *testing.T) {
	f := &fakeOpenAI{call: wCommit}
	b := newBackend(t, f, false)
	resp, err := b.ChatCompletion(context.Background(), &backends.Request{Body: []byte(namespaced), Model: "gpt-4.1",
		Allowed: []string{"search_tools", "git.commit"}})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(f.got), "git.") || !strings.Contains(string(f.got), `"type":"allowed_tools"`) {
		t.Errorf("upstream got %s", f.got)
	}
	if !strings.Contains(string(resp.Body), `"name":"git.commit"`) || strings.Contains(string(resp.Body), wCommit) {
		t.Errorf("client gets %s", resp.Body)
	}
	if resp.Strategy != "allowed_tools" || resp.Cache != backends.CacheReported || !b.ConstrainsTools() {
		t.Errorf("strategy %q cache %q", resp.Strategy, resp.Cache)
	}
}

func TestBackend_StreamComesBackInRealNames(t *testing.T) {
	f := &fakeOpenAI{call: wCommit}
	b := newBackend(t, f, false)
	body := strings.Replace(namespaced, `"tool_choice":"required"`, `"stream":true`, 1)
	resp, err := b.ChatCompletion(context.Background(), &backends.Request{Body: []byte(body), Model: "gpt-4.1", Stream: true,
		Allowed: []string{"search_tools", "git.commit"}})
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Stream.Close()
	var chunks []string
	for {
		c, err := resp.Stream.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		chunks = append(chunks, string(c))
	}
	if len(chunks) != 4 || callNames(t, chunks)[0] != "git.commit" {
		t.Errorf("client gets %v", chunks)
	}
	if resp.Strategy != "allowed_tools" || resp.Cache != backends.CacheReported {
		t.Errorf("strategy %q cache %q", resp.Strategy, resp.Cache)
	}
}

func TestBackend_WithoutAllowedToolsItPassesThroughAndIsNoConstrainer(t *testing.T) {
	f := &fakeOpenAI{call: "get_weather"}
	b := newBackend(t, f, true)
	body := request(`"required"`)
	resp, err := b.ChatCompletion(context.Background(), &backends.Request{Body: []byte(body), Allowed: []string{"get_weather"}})
	if err != nil {
		t.Fatal(err)
	}
	if string(f.got) != body || resp.Strategy != "" || b.ConstrainsTools() {
		t.Errorf("upstream got %s, strategy %q", f.got, resp.Strategy)
	}
}

func TestBackend_ANamedToolThatIsNotLoadedNeverReachesOpenAI(t *testing.T) {
	f := &fakeOpenAI{}
	b := newBackend(t, f, false)
	_, err := b.ChatCompletion(context.Background(), &backends.Request{
		Body:    []byte(request(`{"type":"function","function":{"name":"send_email"}}`)),
		Allowed: []string{"search_tools"}})
	if err == nil || f.got != nil {
		t.Errorf("err %v, upstream got %s", err, f.got)
	}
}
