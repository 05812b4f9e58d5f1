package vllm

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/maskgate/maskgate/backends"
	"github.com/maskgate/maskgate/backends/openaicompat"
)

// A conversation that ends with an assistant message's text (Anthropic's prefill) goes
// to vLLM with continue_final_message true and add_generation_prompt false; one that
// ends otherwise, or whose client set either member, is sent as it is.
func TestPrefill_ContinueFinalMessage(t *testing.T) {
	var got []byte
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got, _ = io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"id":"x","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":" 42."},"finish_reason":"stop"}]}`)
	}))
	defer srv.Close()
	v, _ := New(openaicompat.Options{Name: "v", BaseURL: srv.URL + "/v1"})
	const ask = `{"role":"user","content":"the answer?"}`
	for _, tc := range []struct{ name, body, want string }{
		{"prefill", `{"model":"m","messages":[` + ask + `,{"role":"assistant","content":"The answer is"}]}`,
			`{"model":"m","messages":[` + ask + `,{"role":"assistant","content":"The answer is"}],"continue_final_message":true,"add_generation_prompt":false}`},
		{"prefill in parts", `{"model":"m","messages":[` + ask + `,{"role":"assistant","content":[{"type":"text","text":"The answer is"}]}]}`,
			`{"model":"m","messages":[` + ask + `,{"role":"assistant","content":[{"type":"text","text":"The answer is"}]}],"continue_final_message":true,"add_generation_prompt":false}`},
		{"a user turn last", `{"model":"m","messages":[` + ask + `]}`, ``},
		{"a call last", `{"model":"m","messages":[` + ask + `,{"role":"assistant","content":null,"tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":"{}"}}]}]}`, ``},
		{"the client's own", `{"model":"m","messages":[` + ask + `,{"role":"assistant","content":"The answer is"}],"add_generation_prompt":true}`, ``},
	} {
		if _, err := v.ChatCompletion(context.Background(), &backends.Request{Body: []byte(tc.body), Model: "m"}); err != nil {
			t.Fatal(err)
		}
		want := tc.want
		if want == "" {
			want = tc.body
		}
		if string(got) != want {
			t.Errorf("%s: sent\n %s\nwant\n %s", tc.name, got, want)
		}
	}
}
