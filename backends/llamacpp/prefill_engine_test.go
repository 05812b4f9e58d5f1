package llamacpp

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/maskgate/maskgate/backends"
	"github.com/maskgate/maskgate/internal/enginetest"
)

// Anthropic's prefill on the real llama-server: a conversation that ends with an
// assistant message is rendered by /apply-template with that turn left open (no end of
// turn, no new assistant header), so /completion continues its text, and the answer
// holds only the continuation. Whole and streamed.
func TestPrefill_LlamaServerContinuesTheOpenTurn(t *testing.T) {
	s := enginetest.Llama(t)
	target, _ := url.Parse(s.URL)
	var mu sync.Mutex
	var prompts []string
	proxy := httputil.NewSingleHostReverseProxy(target)
	proxy.Transport = enginetest.ProxyTransport()
	rec := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/completion" {
			body, _ := io.ReadAll(r.Body)
			var c struct {
				Prompt string `json:"prompt"`
			}
			_ = json.Unmarshal(body, &c)
			mu.Lock()
			prompts = append(prompts, c.Prompt)
			mu.Unlock()
			r.Body = io.NopCloser(bytes.NewReader(body))
			r.ContentLength = int64(len(body))
		}
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(rec.Close)
	b, err := New(Options{Name: "llama", BaseURL: rec.URL})
	if err != nil {
		t.Fatal(err)
	}
	const prefill = "The answer is"
	body := `{"model":"m","max_tokens":4,"messages":[{"role":"user","content":"the answer?"},{"role":"assistant","content":"` + prefill + `"}]}`
	for _, stream := range []bool{false, true} {
		req := []byte(body)
		if stream {
			req = []byte(strings.Replace(body, `{"model":"m",`, `{"model":"m","stream":true,`, 1))
		}
		resp, err := b.ChatCompletion(background(t), &backends.Request{Body: req, Model: "m", Stream: stream})
		if err != nil {
			t.Fatal(err)
		}
		text := ""
		if stream {
			for _, c := range readStream(t, resp.Stream) {
				for _, ch := range c.Choices {
					if ch.Delta.Content != nil {
						text += *ch.Delta.Content
					}
				}
			}
		} else {
			text = string(resp.Body)
		}
		mu.Lock()
		p := prompts[len(prompts)-1]
		mu.Unlock()
		if !strings.HasSuffix(p, "<|im_start|>assistant\n"+prefill) {
			t.Errorf("stream %v: the prompt does not end in the open turn:\n%q", stream, p)
		}
		if strings.Contains(text, prefill) {
			t.Errorf("stream %v: the answer repeats the prefill: %s", stream, text)
		}
	}
}
