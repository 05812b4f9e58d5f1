package ollama_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"

	"github.com/maskgate/maskgate/backends"
	"github.com/maskgate/maskgate/backends/oai"
	"github.com/maskgate/maskgate/backends/ollama"
)

func ExampleNew() {
	// A stand-in for `ollama serve`, answering one chat.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `{"model":"qwen2.5:0.5b","message":{"role":"assistant","content":"Hi!"},"done":true,"done_reason":"stop","prompt_eval_count":20,"eval_count":2}`+"\n")
	}))
	defer srv.Close()

	b, err := ollama.New(ollama.Options{Name: "local", BaseURL: srv.URL})
	if err != nil {
		panic(err)
	}
	resp, err := b.ChatCompletion(context.Background(), &backends.Request{
		Body:  []byte(`{"model":"qwen2.5:0.5b","messages":[{"role":"user","content":"Hello"}]}`),
		Model: "qwen2.5:0.5b",
	})
	if err != nil {
		panic(err)
	}
	var c oai.ChatCompletion
	if err := json.Unmarshal(resp.Body, &c); err != nil {
		panic(err)
	}
	fmt.Println(*c.Choices[0].Message.Content, c.Choices[0].FinishReason, c.Usage.PromptTokens, resp.Cache)
	// Output: Hi! stop 20 estimated
}
