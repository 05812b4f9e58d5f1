package llamacpp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"

	"github.com/maskgate/maskgate/backends"
	"github.com/maskgate/maskgate/backends/llamacpp"
)

// A grammar function stands in for masking's GBNF generator: it sees the allowed names.
func Example() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/apply-template":
			io.WriteString(w, `{"prompt":"<|im_start|>user\nweather?<|im_end|>\n<|im_start|>assistant\n"}`)
		case "/completion":
			io.WriteString(w, `{"content":"<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call>","stop":true,"stop_type":"eos","timings":{"cache_n":40,"prompt_n":2,"predicted_n":17}}`)
		}
	}))
	defer srv.Close()

	b, err := llamacpp.New(llamacpp.Options{
		Name:    "local",
		BaseURL: srv.URL,
		Grammar: func(r llamacpp.GrammarRequest) (json.RawMessage, error) {
			fmt.Println("grammar for", r.Allowed, "required:", r.Required)
			return json.RawMessage(`{"grammar":"root ::= ...","grammar_lazy":true}`), nil
		},
	})
	if err != nil {
		panic(err)
	}
	resp, err := b.ChatCompletion(context.Background(), &backends.Request{
		Body:    []byte(`{"model":"qwen","messages":[{"role":"user","content":"weather?"}],"tools":[{"type":"function","function":{"name":"get_weather"}},{"type":"function","function":{"name":"send_mail"}}]}`),
		Model:   "qwen",
		Allowed: []string{"get_weather"},
	})
	if err != nil {
		panic(err)
	}
	var c struct {
		Choices []struct {
			Message struct {
				ToolCalls []struct {
					Function struct{ Name, Arguments string }
				} `json:"tool_calls"`
			}
			FinishReason string `json:"finish_reason"`
		}
		Usage struct {
			PromptTokens        int `json:"prompt_tokens"`
			PromptTokensDetails struct {
				CachedTokens int `json:"cached_tokens"`
			} `json:"prompt_tokens_details"`
		}
	}
	json.Unmarshal(resp.Body, &c)
	call := c.Choices[0].Message.ToolCalls[0].Function
	fmt.Println(call.Name, call.Arguments, c.Choices[0].FinishReason)
	fmt.Println("prompt", c.Usage.PromptTokens, "cached", c.Usage.PromptTokensDetails.CachedTokens, "source", resp.Cache)
	// Output:
	// grammar for [get_weather] required: false
	// get_weather {"city": "Paris"} tool_calls
	// prompt 42 cached 40 source reported
}
