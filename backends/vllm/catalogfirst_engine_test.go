package vllm

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/maskgate/maskgate/backends"
	"github.com/maskgate/maskgate/backends/oai"
	"github.com/maskgate/maskgate/backends/openaicompat"
	"github.com/maskgate/maskgate/internal/enginetest"
)

// TestCatalogFirst_AnEngineThatRendersTheMessagesSharesTheTools sends two sessions
// through this backend to an engine that, like vLLM and SGLang, renders the chat
// template itself from the Chat Completions messages: the real llama-server's
// /v1/chat/completions with the tiny model (its Hermes/Qwen template, rendered by
// llama.cpp's Jinja engine), one slot. The sessions' system prompts differ from their
// second word. Catalog first, the second session's request reuses from the engine's
// cache at least every token of its prompt through the tools' system turn; in the
// template's order it reuses less than that. The test's measure of the tools is the
// engine's own: the body's messages and tools rendered by /apply-template, cut at the
// end of the tools' turn, and tokenized by /tokenize.
func TestCatalogFirst_AnEngineThatRendersTheMessagesSharesTheTools(t *testing.T) {
	ls := enginetest.Llama(t)
	target, _ := url.Parse(ls.URL)
	proxy := httputil.NewSingleHostReverseProxy(target)
	proxy.Transport = enginetest.ProxyTransport()
	var mu sync.Mutex
	var last []byte
	rec := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		last = body
		mu.Unlock()
		r.Body = io.NopCloser(bytes.NewReader(body))
		r.ContentLength = int64(len(body))
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(rec.Close)
	b, err := New(openaicompat.Options{Name: "v", BaseURL: rec.URL + "/v1"})
	if err != nil {
		t.Fatal(err)
	}
	var tl []string
	for i := range 12 {
		tl = append(tl, fmt.Sprintf(`{"type":"function","function":{"name":"tool_%02d","description":"Tool number %d reads and writes the project's files under a path.",`+
			`"parameters":{"type":"object","properties":{"path":{"type":"string","description":"A path under the project."}},"required":["path"]}}}`, i, i))
	}
	tools := "[" + strings.Join(tl, ",") + "]"
	const end = "</tool_call><|im_end|>\n" // the end of the tools' system turn
	for _, on := range []bool{false, true} {
		name := map[bool]string{false: "template order", true: "catalog first"}[on]
		var cached, catalog int
		for _, project := range []string{"alpha", "beta"} {
			system := "Project " + project + ": you are a coding agent; keep changes small and say what you did."
			body := `{"model":"` + ls.Model + `","messages":[{"role":"system","content":"` + system + `"},{"role":"user","content":"List the files."}],` +
				`"tools":` + tools + `,"max_tokens":1,"seed":1}`
			resp, err := b.ChatCompletion(context.Background(), &backends.Request{Body: []byte(body), Model: ls.Model, Allowed: []string{"tool_00"}, CatalogFirst: on})
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			var out struct {
				Timings struct {
					CacheN int `json:"cache_n"`
				} `json:"timings"`
			}
			if err := json.Unmarshal(resp.Body, &out); err != nil {
				t.Fatalf("%s: %s: %v", name, resp.Body, err)
			}
			cached = out.Timings.CacheN
			mu.Lock()
			sent := last
			mu.Unlock()
			prompt := applyTemplate(t, ls.URL, sent)
			if n := strings.Count(prompt, system); n != 1 {
				t.Fatalf("%s: the system prompt appears %d times in\n%s", name, n, prompt)
			}
			at := strings.Index(prompt, end)
			if at < 0 {
				t.Fatalf("%s: no tools turn in\n%.600s", name, prompt)
			}
			if first := strings.Index(prompt, "<tools>") < strings.Index(prompt, system); first != on {
				t.Fatalf("%s: the tools come before the system prompt: %v", name, first)
			}
			catalog = len(tokenize(t, ls.URL, prompt[:at+len(end)]))
		}
		if on && cached < catalog {
			t.Errorf("%s: the second session reused %d tokens; the prompt through the tools is %d: want at least all of it", name, cached, catalog)
		}
		if !on && cached >= catalog {
			t.Errorf("%s: the second session reused %d tokens, the prompt through the tools is %d: the system prompt should have cut the reuse short", name, cached, catalog)
		}
		t.Logf("%s: the second session reused %d tokens; its prompt through the tools is %d", name, cached, catalog)
	}
}

// applyTemplate renders a chat body's messages and tools with llama-server's
// /apply-template, as its /v1/chat/completions renders them.
func applyTemplate(t *testing.T, base string, body []byte) string {
	t.Helper()
	msgs, _ := oai.Get(body, "messages")
	tools, _ := oai.Get(body, "tools")
	resp, err := http.Post(base+"/apply-template", "application/json",
		strings.NewReader(`{"messages":`+string(msgs)+`,"tools":`+string(tools)+`}`))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out struct {
		Prompt string `json:"prompt"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || resp.StatusCode != 200 {
		t.Fatalf("/apply-template: status %d, %v", resp.StatusCode, err)
	}
	return out.Prompt
}

func tokenize(t *testing.T, base, text string) []int {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"content": text, "add_special": true})
	resp, err := http.Post(base+"/tokenize", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out struct {
		Tokens []int `json:"tokens"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		t.Fatal(err)
	}
	return out.Tokens
}
