package anthropic_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"

	"github.com/maskgate/maskgate/backends"
	"github.com/maskgate/maskgate/backends/anthropic"
	"github.com/maskgate/maskgate/backends/oai"
)

func ExampleNew() {
	// A stand-in for https://api.anthropic.com, answering one message from the cache.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"id":"msg_01","type":"message","role":"assistant","model":"claude-haiku-4-5","content":[{"type":"text","text":"Hi!"}],`+
			`"stop_reason":"end_turn","usage":{"input_tokens":4,"cache_read_input_tokens":2048,"cache_creation_input_tokens":0,"output_tokens":3}}`)
	}))
	defer srv.Close()

	b, err := anthropic.New(anthropic.Options{Name: "claude", BaseURL: srv.URL, APIKey: "sk-ant-example"})
	if err != nil {
		panic(err)
	}
	resp, err := b.ChatCompletion(context.Background(), &backends.Request{
		Body:  []byte(`{"model":"claude-haiku-4-5","messages":[{"role":"user","content":"Hello"}]}`),
		Model: "claude-haiku-4-5",
	})
	if err != nil {
		panic(err)
	}
	var c oai.ChatCompletion
	if err := json.Unmarshal(resp.Body, &c); err != nil {
		panic(err)
	}
	fmt.Println(*c.Choices[0].Message.Content, c.Choices[0].FinishReason, c.Usage.PromptTokens, c.Usage.PromptTokensDetails.CachedTokens, resp.Cache)
	// Output: Hi! stop 2052 2048 reported
}
