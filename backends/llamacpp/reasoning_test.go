package llamacpp

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/maskgate/maskgate/backends"
	"github.com/maskgate/maskgate/backends/oai"
)

// answer is what a client reads of a whole or streamed chat completion.
type answer struct {
	reasoning, content string
	calls              []string // name(arguments)
	finish             string
}

func wholeAnswer(t *testing.T, body []byte) answer {
	t.Helper()
	var cc oai.ChatCompletion
	if err := json.Unmarshal(body, &cc); err != nil {
		t.Fatal(err)
	}
	m := cc.Choices[0].Message
	a := answer{finish: cc.Choices[0].FinishReason}
	if m.ReasoningContent != nil {
		a.reasoning = *m.ReasoningContent
		if *m.ReasoningContent == "" {
			t.Error(`reasoning_content is "" rather than left out`)
		}
	}
	if m.Reasoning != nil {
		t.Errorf("reasoning under vLLM's name: %q", *m.Reasoning)
	}
	if m.Content != nil {
		a.content = *m.Content
	}
	for _, c := range m.ToolCalls {
		a.calls = append(a.calls, c.Function.Name+"("+c.Function.Arguments+")")
	}
	return a
}

func streamedAnswer(t *testing.T, chunks []oai.Chunk) answer {
	t.Helper()
	var a answer
	var r, c strings.Builder
	for _, ch := range chunks {
		if len(ch.Choices) == 0 {
			continue
		}
		d := ch.Choices[0].Delta
		if d.ReasoningContent != nil {
			if *d.ReasoningContent == "" {
				t.Error("an empty reasoning_content delta")
			}
			r.WriteString(*d.ReasoningContent)
		}
		if d.Content != nil {
			c.WriteString(*d.Content)
		}
		for _, tc := range d.ToolCalls {
			if tc.Function.Name != "" {
				a.calls = append(a.calls, tc.Function.Name+"(")
			} else {
				a.calls[len(a.calls)-1] += tc.Function.Arguments + ")"
			}
		}
		if fr := ch.Choices[0].FinishReason; fr != nil {
			a.finish = *fr
		}
	}
	a.reasoning, a.content = r.String(), c.String()
	return a
}

// TestReasoning_ThinkBlockIsReasoningContent: a <think> block, however the events split
// it, reaches the client as reasoning_content, whole and streamed, and never as content;
// calls after it are still parsed; a block the limit cut is all reasoning; a prompt
// that opened the block makes the output start in it.
func TestReasoning_ThinkBlockIsReasoningContent(t *testing.T) {
	cases := []struct {
		name    string
		prompt  string // the rendered prompt; testPrompt when empty
		pieces  []string
		tools   bool
		final   string
		want    answer
		grammar GrammarFunc
	}{
		{name: "block then answer", pieces: []string{"<th", "ink>\nThe user", " greets me.\n</", "think>\n\nHel", "lo!"},
			want: answer{reasoning: "The user greets me.", content: "Hello!", finish: "stop"}},
		{name: "opened by the prompt", prompt: testPrompt + "<think>\n", pieces: []string{"Greeting.", "\n</think>", "\n\nHi"},
			want: answer{reasoning: "Greeting.", content: "Hi", finish: "stop"}},
		{name: "cut inside the block", pieces: []string{"<think>\nStill", " thinking"},
			final: strings.Replace(defaultFinal, `"stop_type":"eos"`, `"stop_type":"limit"`, 1),
			want:  answer{reasoning: "Still thinking", finish: "length"}},
		{name: "a call after thinking", tools: true, grammar: fakeGrammar,
			pieces: []string{"<think>\nI need", " the weather.</think>\n", "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call>"},
			want:   answer{reasoning: "I need the weather.", calls: []string{`get_weather({"city": "Paris"})`}, finish: "tool_calls"}},
		{name: "no block", pieces: []string{"Just", " an answer."},
			want: answer{content: "Just an answer.", finish: "stop"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newFake(t, c.pieces...)
			f.prompt = c.prompt
			if c.final != "" {
				f.final = c.final
			}
			b := newTestBackend(t, f.URL, c.grammar)
			body := `{"model":"q","messages":[{"role":"user","content":"hi"}]}`
			if c.tools {
				body = toolsBody
			}
			resp, err := b.ChatCompletion(background(t), &backends.Request{Body: []byte(body), Model: "q"})
			if err != nil {
				t.Fatal(err)
			}
			if got := wholeAnswer(t, resp.Body); !equalAnswer(got, c.want) {
				t.Errorf("whole: %+v, want %+v", got, c.want)
			}
			resp, err = b.ChatCompletion(background(t), &backends.Request{Body: []byte(streamBody(body)), Model: "q", Stream: true})
			if err != nil {
				t.Fatal(err)
			}
			if got := streamedAnswer(t, readStream(t, resp.Stream)); !equalAnswer(got, c.want) {
				t.Errorf("streamed: %+v, want %+v", got, c.want)
			}
		})
	}
}

func equalAnswer(a, b answer) bool {
	return a.reasoning == b.reasoning && a.content == b.content && a.finish == b.finish && strings.Join(a.calls, ";") == strings.Join(b.calls, ";")
}

// TestReasoning_HarmonyAnalysis: gpt-oss's analysis channel is reasoning, with tools
// (where it was dropped) and without (where the channels came as content, their markers
// left out by llama-server, which now preserves them).
func TestReasoning_HarmonyAnalysis(t *testing.T) {
	cases := []struct {
		name, body string
		pieces     []string
		want       answer
	}{
		{"with tools", toolsBody,
			[]string{"<|channel|>analysis<|message|>Need the", " weather.<|end|><|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{\"city\":\"Oslo\"}<|call|>"},
			answer{reasoning: "Need the weather.", calls: []string{`get_weather({"city":"Oslo"})`}, finish: "tool_calls"}},
		{"without tools", `{"model":"q","messages":[{"role":"user","content":"hi"}]}`,
			[]string{"<|channel|>analysis<|message|>A greet", "ing.<|end|><|start|>assistant<|channel|>final<|message|>Hello", "!<|return|>"},
			answer{reasoning: "A greeting.", content: "Hello!", finish: "stop"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newFake(t, c.pieces...)
			b := newFormatBackend(t, f.URL, "harmony", nil)
			resp, err := b.ChatCompletion(background(t), &backends.Request{Body: []byte(c.body), Model: "q"})
			if err != nil {
				t.Fatal(err)
			}
			if got := wholeAnswer(t, resp.Body); !equalAnswer(got, c.want) {
				t.Errorf("whole: %+v, want %+v", got, c.want)
			}
			if pt, _ := oai.Get(f.last("/completion"), "preserved_tokens"); !strings.Contains(string(pt), `"<|channel|>"`) {
				t.Errorf("preserved_tokens %s: the channel marker would be left out of the text", pt)
			}
			resp, err = b.ChatCompletion(background(t), &backends.Request{Body: []byte(streamBody(c.body)), Model: "q", Stream: true})
			if err != nil {
				t.Fatal(err)
			}
			if got := streamedAnswer(t, readStream(t, resp.Stream)); !equalAnswer(got, c.want) {
				t.Errorf("streamed: %+v, want %+v", got, c.want)
			}
		})
	}
}

// TestReasoning_EffortReachesTheTemplate: reasoning_effort becomes the template's
// variables in /apply-template's chat_template_kwargs, after the client's own (which
// win); without it the body has no kwargs at all; a value OpenAI does not know is a 400.
func TestReasoning_EffortReachesTheTemplate(t *testing.T) {
	const msgs = `"messages":[{"role":"user","content":"hi"}]`
	cases := []struct {
		name, format, body, want string
		door                     string // Request.ReasoningEffort
	}{
		{name: "the door's switch", body: `{"model":"q",` + msgs + `}`, door: "none",
			want: `{` + msgs + `,"chat_template_kwargs":{"enable_thinking":false}}`},
		{name: "the body's switch wins", body: `{"model":"q",` + msgs + `,"reasoning_effort":"high"}`, door: "none",
			want: `{` + msgs + `,"chat_template_kwargs":{"enable_thinking":true}}`},
		{"none", "", `{"model":"q",` + msgs + `,"reasoning_effort":"none"}`,
			`{` + msgs + `,"chat_template_kwargs":{"enable_thinking":false}}`, ""},
		{"high", "", `{"model":"q",` + msgs + `,"reasoning_effort":"high"}`,
			`{` + msgs + `,"chat_template_kwargs":{"enable_thinking":true}}`, ""},
		{"gpt-oss", "harmony", `{"model":"q",` + msgs + `,"reasoning_effort":"minimal"}`,
			`{` + msgs + `,"chat_template_kwargs":{"reasoning_effort":"low"}}`, ""},
		{"the client's kwargs win", "", `{"model":"q",` + msgs + `,"reasoning_effort":"none","chat_template_kwargs":{"enable_thinking":true, "x":1}}`,
			`{` + msgs + `,"chat_template_kwargs":{"enable_thinking":true, "x":1}}`, ""},
		{"added to the client's kwargs", "", `{"model":"q",` + msgs + `,"reasoning_effort":"none","chat_template_kwargs":{"x":1}}`,
			`{` + msgs + `,"chat_template_kwargs":{"x":1,"enable_thinking":false}}`, ""},
		{"no switch", "", `{"model":"q",` + msgs + `}`, `{` + msgs + `}`, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newFake(t, "ok")
			b := newFormatBackend(t, f.URL, c.format, nil)
			if _, err := b.ChatCompletion(background(t), &backends.Request{Body: []byte(c.body), Model: "q", ReasoningEffort: c.door}); err != nil {
				t.Fatal(err)
			}
			if got := string(f.last("/apply-template")); got != c.want {
				t.Errorf("/apply-template body\n got %s\nwant %s", got, c.want)
			}
		})
	}
	f := newFake(t, "ok")
	b := newTestBackend(t, f.URL, nil)
	_, err := b.ChatCompletion(background(t), &backends.Request{Body: []byte(`{"model":"q",` + msgs + `,"reasoning_effort":"extreme"}`), Model: "q"})
	var be *backends.Error
	if !errors.As(err, &be) || be.Status != 400 || be.Param != "reasoning_effort" {
		t.Errorf("reasoning_effort extreme: %v, want a 400 naming reasoning_effort", err)
	}
}
