package llamacpp

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/maskgate/maskgate/backends"
	"github.com/maskgate/maskgate/backends/oai"
)

// The rules of each wire format (what is a call, what stays content, how a streamed
// text splits) are backends/toolcall's and tested there; these tests hold what this
// package adds: the format option, preserved_tokens, and calls in OpenAI's shape.

func TestWithPreservedTokens_AddsMissingMarkersOnly(t *testing.T) {
	tests := []struct {
		name, body string
		markers    []string
		want       string
	}{
		{"no markers", `{"prompt":"p"}`, nil, `{"prompt":"p"}`},
		{"none yet", `{"prompt":"p","stream":false}`, []string{"[TOOL_CALLS]", "[ARGS]"}, `{"prompt":"p","stream":false,"preserved_tokens":["[TOOL_CALLS]","[ARGS]"]}`},
		{"all there: bytes unchanged", `{"prompt":"p","preserved_tokens":[ "<tool_call>", "</tool_call>" ]}`, []string{"<tool_call>", "</tool_call>"},
			`{"prompt":"p","preserved_tokens":[ "<tool_call>", "</tool_call>" ]}`},
		{"grammar's first, then the rest, unescaped", `{"prompt":"p","preserved_tokens":["<|channel|>"],"grammar_lazy":true}`, []string{"<|start|>", "<|channel|>", "<|message|>"},
			`{"prompt":"p","preserved_tokens":["<|channel|>","<|start|>","<|message|>"],"grammar_lazy":true}`},
	}
	for _, tt := range tests {
		got, err := withPreservedTokens([]byte(tt.body), tt.markers)
		if err != nil || string(got) != tt.want {
			t.Errorf("%s: got %s, %v\nwant %s", tt.name, got, err, tt.want)
		}
	}
	if _, err := withPreservedTokens([]byte(`{"preserved_tokens":"<tool_call>"}`), []string{"x"}); err == nil {
		t.Error("a preserved_tokens that is not an array was accepted")
	}
}

func TestNew_Format(t *testing.T) {
	b, err := New(Options{Name: "l", BaseURL: "http://127.0.0.1:8080"})
	if err != nil || b.opt.Format != "hermes" {
		t.Errorf("default format %q, %v", b.opt.Format, err)
	}
	if _, err := New(Options{Name: "l", BaseURL: "http://127.0.0.1:8080", Format: "chatml"}); err == nil ||
		!strings.Contains(err.Error(), `"chatml"`) || !strings.Contains(err.Error(), "harmony") {
		t.Errorf("unknown format: %v", err)
	}
}

// TestFormats_CallsInOpenAIShape runs one completion per non-Hermes format through the
// fake llama-server, whole and streamed: the calls come out with the model's argument
// bytes and ids derived from the response id, and /completion preserves the format's
// markers (the fake grammar preserves only Hermes tags).
func TestFormats_CallsInOpenAIShape(t *testing.T) {
	tests := []struct {
		format    string
		pieces    []string
		content   string
		preserved []string
	}{
		{"llama3", []string{`{"name": "get_weather", `, `"parameters": {"city": "Paris"}}`}, "", []string{"<|python_tag|>"}},
		{"mistral", []string{"Sure.", "[TOOL_CALLS]get_", `weather[ARGS]{"city": "Paris"}`}, "Sure.", []string{"[TOOL_CALLS]", "[ARGS]", "[CALL_ID]"}},
		{"harmony", []string{"<|channel|>analysis<|message|>Needs a tool.<|end|>", "<|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>",
			`{"city": "Paris"}`, "<|call|>"}, "",
			[]string{"<|start|>", "<|channel|>", "<|constrain|>", "<|message|>", "<|end|>", "<|call|>", "<|return|>"}},
		{"deepseek", []string{"<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>get_weather<｜tool▁sep｜>", `{"city": "Paris"}`, "<｜tool▁call▁end｜><｜tool▁calls▁end｜>"}, "",
			[]string{"<｜tool▁calls▁begin｜>", "<｜tool▁call▁begin｜>", "<｜tool▁sep｜>", "<｜tool▁call▁end｜>", "<｜tool▁calls▁end｜>"}},
	}
	for _, tt := range tests {
		t.Run(tt.format, func(t *testing.T) {
			f := newFake(t, tt.pieces...)
			b := newFormatBackend(t, f.URL, tt.format, fakeGrammar)
			resp, err := b.ChatCompletion(background(t), &backends.Request{Body: []byte(toolsBody), Model: "m"})
			if err != nil {
				t.Fatal(err)
			}
			var got oai.ChatCompletion
			if err := json.Unmarshal(resp.Body, &got); err != nil {
				t.Fatal(err)
			}
			msg := got.Choices[0].Message
			wantCalls := []oai.ToolCall{{ID: "call_1_0", Type: "function", Function: oai.FunctionCall{Name: "get_weather", Arguments: `{"city": "Paris"}`}}}
			if tt.format == "mistral" {
				wantCalls[0].ID = msg.ToolCalls[0].ID // 9 alphanumerics; toolcall tests them
			}
			if diff := cmp.Diff(wantCalls, msg.ToolCalls); diff != "" {
				t.Errorf("calls (-want +got):\n%s", diff)
			}
			if (msg.Content == nil) != (tt.content == "") || (msg.Content != nil && *msg.Content != tt.content) || got.Choices[0].FinishReason != "tool_calls" {
				t.Errorf("content %v, finish %q", msg.Content, got.Choices[0].FinishReason)
			}
			var body struct {
				Preserved []string `json:"preserved_tokens"`
			}
			json.Unmarshal(f.last("/completion"), &body)
			if diff := cmp.Diff(append([]string{"<tool_call>", "</tool_call>"}, tt.preserved...), body.Preserved); diff != "" {
				t.Errorf("preserved_tokens (-want +got):\n%s", diff)
			}

			resp, err = b.ChatCompletion(background(t), &backends.Request{Body: []byte(streamBody(toolsBody)), Model: "m", Stream: true})
			if err != nil {
				t.Fatal(err)
			}
			var text, name, args, id string
			for _, c := range readStream(t, resp.Stream) {
				if len(c.Choices) == 0 {
					continue
				}
				d := c.Choices[0].Delta
				if d.Content != nil {
					text += *d.Content
				}
				for _, tc := range d.ToolCalls {
					name += tc.Function.Name
					args += tc.Function.Arguments
					id += tc.ID
				}
			}
			if text != tt.content || name != "get_weather" || args != `{"city": "Paris"}` || (tt.format != "mistral" && id != "call_2_0") {
				t.Errorf("stream: content %q, call %s %s id %s", text, name, args, id)
			}
		})
	}
}

// TestCutCall_IsACallWithFinishLength: when n_predict cuts a call (stop_type "limit"),
// the client gets a tool call with the arguments so far and finish_reason "length",
// whole and streamed, never the template's text as content; cut before the name is
// whole, nothing.
func TestCutCall_IsACallWithFinishLength(t *testing.T) {
	const limit = `"stop_type":"limit","truncated":false,"tokens_predicted":9,"tokens_evaluated":120,"tokens_cached":129,"timings":{"cache_n":100,"prompt_n":20,"predicted_n":9}`
	tests := []struct {
		name, format string
		pieces       []string
		call         string // name + " " + arguments; empty: no call
	}{
		{"hermes in arguments", "hermes", []string{"<tool_call>", "\n{\"name\": \"send_email\", ", `"arguments": {"to": "a@b`}, `send_email {"to": "a@b`},
		{"hermes in name", "hermes", []string{"<tool_call>", "\n{\"name\": \"send_em"}, ""},
		{"llama3", "llama3", []string{`{"name": "get_weather", "parameters": {"ci`}, `get_weather {"ci`},
		{"mistral", "mistral", []string{"[TOOL_CALLS]get_weather[ARGS]", `{"city": "Pa`}, `get_weather {"city": "Pa`},
		{"harmony", "harmony", []string{"<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>", `{"city"`}, `get_weather {"city"`},
		{"deepseek", "deepseek", []string{"<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>get_weather<｜tool▁sep｜>", `{"city": `}, `get_weather {"city":`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFake(t, tt.pieces...)
			f.final = limit
			b := newFormatBackend(t, f.URL, tt.format, fakeGrammar)
			resp, err := b.ChatCompletion(background(t), &backends.Request{Body: []byte(toolsBody), Model: "m"})
			if err != nil {
				t.Fatal(err)
			}
			var got oai.ChatCompletion
			if err := json.Unmarshal(resp.Body, &got); err != nil {
				t.Fatal(err)
			}
			ch := got.Choices[0]
			var calls []string
			for _, c := range ch.Message.ToolCalls {
				calls = append(calls, c.Function.Name+" "+c.Function.Arguments)
			}
			want := []string(nil)
			if tt.call != "" {
				want = []string{tt.call}
			}
			if !cmp.Equal(calls, want) || ch.FinishReason != oai.FinishLength {
				t.Errorf("whole: calls %q, finish %q; want %q, length", calls, ch.FinishReason, want)
			}
			if c := ch.Message.Content; c != nil && *c != "" {
				t.Errorf("whole: content %q", *c)
			}

			resp, err = b.ChatCompletion(background(t), &backends.Request{Body: []byte(streamBody(toolsBody)), Model: "m", Stream: true})
			if err != nil {
				t.Fatal(err)
			}
			var text, call, finish string
			for _, c := range readStream(t, resp.Stream) {
				if len(c.Choices) == 0 {
					continue
				}
				d := c.Choices[0].Delta
				if d.Content != nil {
					text += *d.Content
				}
				for _, tc := range d.ToolCalls {
					if tc.Function.Name != "" {
						call += tc.Function.Name + " "
					}
					call += tc.Function.Arguments
				}
				if c.Choices[0].FinishReason != nil {
					finish = *c.Choices[0].FinishReason
				}
			}
			if text != "" || call != tt.call || finish != oai.FinishLength {
				t.Errorf("stream: content %q, call %q, finish %q; want no content, %q, length", text, call, finish, tt.call)
			}
		})
	}
}
