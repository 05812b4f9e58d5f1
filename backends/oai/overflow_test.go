package oai

import (
	"testing"
)

// Each engine's own answer to a prompt past its context window, as its server words it.
func TestParseOverflow_EachEnginesWording(t *testing.T) {
	cases := []struct {
		name string
		msg  string
		body string
		want Overflow
		ok   bool
	}{
		{name: "llama-server", msg: "request (9000 tokens) exceeds the available context size (8192 tokens), try increasing it",
			want: Overflow{Prompt: 9000, Window: 8192}, ok: true},
		{name: "llama-server before sizes in the message", msg: "the request exceeds the available context size, try increasing it",
			body: `{"error":{"code":400,"message":"the request exceeds the available context size, try increasing it","type":"exceed_context_size_error","n_prompt_tokens":9000,"n_ctx":8192}}`,
			want: Overflow{Prompt: 9000, Window: 8192}, ok: true},
		{name: "llama-server old, no sizes", msg: "the request exceeds the available context size, try increasing it", ok: true},
		{name: "vLLM V1", msg: "This model's maximum context length is 8192 tokens. However, your request has 9000 input tokens. Please reduce the length of the input messages.",
			want: Overflow{Prompt: 9000, Window: 8192}, ok: true},
		{name: "vLLM max_tokens", msg: "'max_tokens' or 'max_completion_tokens' is too large: 8000. This model's maximum context length is 4096 tokens and your request has 2778 input tokens (8000 > 4096 - 2778). None",
			want: Overflow{Prompt: 2778, Completion: 8000, Window: 4096}, ok: true},
		{name: "vLLM before V1, completion at fault", msg: "This model's maximum context length is 4096 tokens. However, you requested 5000 tokens (1000 in the messages, 4000 in the completion). Please reduce the length of the messages or completion.",
			want: Overflow{Prompt: 1000, Completion: 4000, Window: 4096}, ok: true},
		{name: "vLLM before V1, prompt at fault", msg: "This model's maximum context length is 4096 tokens. However, you requested 5000 tokens (4500 in the messages, 500 in the completion). Please reduce the length of the messages or completion.",
			want: Overflow{Prompt: 4500, Window: 4096}, ok: true},
		{name: "SGLang", msg: "The input (9000 tokens) is longer than the model's context length (8192 tokens).",
			want: Overflow{Prompt: 9000, Window: 8192}, ok: true},
		{name: "SGLang total", msg: "Requested token count exceeds the model's maximum context length of 8192 tokens. You requested a total of 9000 tokens: 7000 tokens from the input messages and 2000 tokens for the completion. Please reduce the number of tokens in the input messages or the completion to fit within the limit.",
			want: Overflow{Prompt: 7000, Completion: 2000, Window: 8192}, ok: true},
		{name: "Ollama relaying llama-server", msg: `{"error":{"code":400,"message":"request (351 tokens) exceeds the available context size (256 tokens), try increasing it","type":"exceed_context_size_error","n_prompt_tokens":351,"n_ctx":256}}`,
			want: Overflow{Prompt: 351, Window: 256}, ok: true},
		{name: "Ollama", msg: "input length exceeds the context length", ok: true},
		{name: "Anthropic", msg: "prompt is too long: 210000 tokens > 200000 maximum", want: Overflow{Prompt: 210000, Window: 200000}, ok: true},
		{name: "OpenAI", msg: "This model's maximum context length is 8192 tokens.", want: Overflow{Window: 8192}, ok: true},
		{name: "OpenAI code only", msg: "too long", body: `{"error":{"message":"too long","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}`, ok: true},
		{name: "another 400", msg: "'messages' must contain at least one message", body: `{"error":{"message":"'messages' must contain at least one message","type":"BadRequestError","code":400}}`},
		{name: "a number past int", msg: "request (99999999999999999999999 tokens) exceeds the available context size (8192 tokens)", want: Overflow{Window: 8192}, ok: true},
	}
	for _, c := range cases {
		got, ok := ParseOverflow(c.msg, []byte(c.body))
		if ok != c.ok || got != c.want {
			t.Errorf("%s: ParseOverflow = %+v, %v; want %+v, %v", c.name, got, ok, c.want, c.ok)
		}
	}
}

func FuzzParseOverflow(f *testing.F) {
	f.Add("request (9000 tokens) exceeds the available context size (8192 tokens)", "")
	f.Add("This model's maximum context length is 4096 tokens. However, you requested 5000 tokens (1000 in the messages, 4000 in the completion).", "")
	f.Add("x", `{"error":{"type":"exceed_context_size_error","n_prompt_tokens":-5,"n_ctx":1e99}}`)
	f.Add("x", `{"error":{"code":"context_length_exceeded"}}`)
	f.Fuzz(func(t *testing.T, msg, body string) {
		o, ok := ParseOverflow(msg, []byte(body))
		if o.Prompt < 0 || o.Completion < 0 || o.Window < 0 {
			t.Fatalf("negative size %+v", o)
		}
		if !ok && o != (Overflow{}) {
			t.Fatalf("sizes %+v without an overflow", o)
		}
		if o.Window > 0 && o.Prompt >= o.Window && o.Completion != 0 {
			t.Fatalf("completion blamed for a prompt past the window: %+v", o)
		}
	})
}
