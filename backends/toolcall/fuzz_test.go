package toolcall

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
)

var fuzzSeeds = []string{
	"hello",
	"<tool_call>\n{\"name\": \"a\", \"arguments\": {\"x\": 1}}\n</tool_call>",
	"x <tool_call>{\"name\":\"b\"}</tool_call> y <tool_call>{bad</tool_call>",
	"<tool_call><tool_call>{\"name\":\"c\",\"arguments\":\"[1]\"}",
	"<<tool_call</tool_call>é",
	`{"name": "a", "parameters": {"x": "}"}}; {"name": "b", "parameters": {}}`,
	`<|python_tag|>{"name": "a", "parameters": {}} tail`,
	`[TOOL_CALLS]a[ARGS]{"x": [1, {"y": 2}]}[TOOL_CALLS]b[CALL_ID]abcdefghi[ARGS]{}`,
	`[TOOL_CALLS] [{"name": "a", "arguments": {}}]`,
	"<|channel|>analysis<|message|>think<|end|><|start|>assistant<|channel|>commentary to=functions.a <|constrain|>json<|message|>{}<|call|>",
	" to=functions.a<|channel|>commentary json<|message|>{\"q\":1}",
	"<|channel|>final<|message|>Hi<|return|>",
	"ok <｜tool▁calls▁begin｜><｜tool▁call▁begin｜>a<｜tool▁sep｜>{}<｜tool▁call▁end｜><｜tool▁calls▁end｜>",
	"<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>a\n```json\n{}\n```<｜tool▁call▁end｜>",
}

// split cuts text into pieces of alternating lengths a and b (1 to 8 bytes).
func split(text string, a, b uint8) []string {
	var parts []string
	for step := []int{int(a)%8 + 1, int(b)%8 + 1}; len(text) > 0; step[0], step[1] = step[1], step[0] {
		n := min(step[0], len(text))
		parts = append(parts, text[:n])
		text = text[n:]
	}
	return parts
}

// FuzzParser holds the streaming contract on arbitrary text, formats and splits: no
// panic, the same content, reasoning and calls as the whole text, every call named, and
// valid UTF-8 in gives valid UTF-8 out.
func FuzzParser(f *testing.F) {
	for i, s := range fuzzSeeds {
		f.Add(uint8(i), s, uint8(3), uint8(7))
	}
	f.Fuzz(func(t *testing.T, which uint8, text string, a, b uint8) {
		format := Names()[int(which)%len(Names())]
		evs := feed(t, format, Options{}, text)
		whole := flatten(evs)
		parts := split(text, a, b)
		if diff := cmp.Diff(whole, flatten(feed(t, format, Options{}, parts...))); diff != "" {
			t.Fatalf("%s: split %q differs from whole (-whole +split):\n%s", format, parts, diff)
		}
		for _, ev := range evs {
			if ev.Call != nil && ev.Call.Function.Name == "" {
				t.Fatalf("%s: call without a name in %q", format, text)
			}
		}
		if len(whole.Text)+len(whole.Reasoning) > len(text) {
			t.Fatalf("%s: more text out than in: %q", format, text)
		}
		if utf8.ValidString(text) && (!utf8.ValidString(whole.Text) || !utf8.ValidString(whole.Reasoning)) {
			t.Fatalf("%s: invalid UTF-8 out of %q", format, text)
		}
	})
}

// FuzzParse holds the whole-text parser's contract: no panic, and text that holds no call
// comes back whole (only harmony drops its structure tokens), so nothing malformed is
// ever lost; text that cannot hold a marker is content as it is.
func FuzzParse(f *testing.F) {
	for i, s := range fuzzSeeds {
		f.Add(uint8(i), s)
	}
	f.Fuzz(func(t *testing.T, which uint8, text string) {
		format := Names()[int(which)%len(Names())]
		m, err := Parse(format, text, Options{ResponseID: "chatcmpl-f"})
		if err != nil {
			t.Fatal(err)
		}
		if len(m.ToolCalls) == 0 && format != Harmony && m.Content != text {
			t.Fatalf("%s: text without calls changed: %q → %q", format, text, m.Content)
		}
		if !strings.ContainsAny(text, "<[{") && (m.Content != text || len(m.ToolCalls) > 0 || m.Reasoning != "") {
			t.Fatalf("%s: text without markers changed: %q → %+v", format, text, m)
		}
		for i, c := range m.ToolCalls {
			if c.Function.Name == "" || c.ID != CallID(format, "chatcmpl-f", i) || c.Type != "function" {
				t.Fatalf("%s: call %d = %+v", format, i, c)
			}
		}
	})
}
