package llamacpp

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
)

// flat is a parse result with adjacent text merged, for comparing splits.
type flat struct {
	Text  string
	Calls []string // name + " " + arguments
}

func flatten(ps []piece) flat {
	var f flat
	for _, p := range ps {
		if p.call == nil {
			f.Text += p.text
		} else {
			f.Calls = append(f.Calls, p.call.Function.Name+" "+p.call.Function.Arguments)
		}
	}
	return f
}

func TestSplitText_HermesCalls(t *testing.T) {
	tests := []struct {
		name string
		text string
		want flat
	}{
		{"plain text", "Hello there.", flat{Text: "Hello there."}},
		{"plain text keeps its trailing newline", "Hello\n", flat{Text: "Hello\n"}},
		{"one call", "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call>",
			flat{Calls: []string{`get_weather {"city":"Paris"}`}}},
		{"text then call, whitespace between dropped", "Let me check.\n\n<tool_call>\n{\"name\": \"a\", \"arguments\": {}}\n</tool_call>\n",
			flat{Text: "Let me check.", Calls: []string{"a {}"}}},
		{"multiple calls", "<tool_call>\n{\"name\": \"a\", \"arguments\": {\"x\": 1}}\n</tool_call>\n<tool_call>\n{\"name\": \"b\", \"arguments\": {\"y\": [1, 2]}}\n</tool_call>",
			flat{Calls: []string{`a {"x":1}`, `b {"y":[1,2]}`}}},
		{"text after a call stays", "<tool_call>{\"name\":\"a\",\"arguments\":{}}</tool_call>\nDone.",
			flat{Text: "\nDone.", Calls: []string{"a {}"}}},
		{"arguments as a string", `<tool_call>{"name":"a","arguments":"{\"x\":1}"}</tool_call>`, flat{Calls: []string{`a {"x":1}`}}},
		{"missing arguments", `<tool_call>{"name":"a"}</tool_call>`, flat{Calls: []string{"a {}"}}},
		{"unclosed call at the end still parses", "<tool_call>\n{\"name\": \"a\", \"arguments\": {}}\n", flat{Calls: []string{"a {}"}}},
		{"malformed JSON is text", "<tool_call>\n{\"name\": \"a\", \"arguments\": {\n</tool_call>",
			flat{Text: "<tool_call>\n{\"name\": \"a\", \"arguments\": {\n</tool_call>"}},
		{"no name is text", `<tool_call>{"arguments":{}}</tool_call>`, flat{Text: `<tool_call>{"arguments":{}}</tool_call>`}},
		{"name not a string is text", `<tool_call>{"name":3}</tool_call>`, flat{Text: `<tool_call>{"name":3}</tool_call>`}},
		{"unclosed garbage is text", "ok <tool_call> {oops", flat{Text: "ok <tool_call> {oops"}},
		{"malformed then good", "<tool_call>nope</tool_call><tool_call>{\"name\":\"b\",\"arguments\":{}}</tool_call>",
			flat{Text: "<tool_call>nope</tool_call>", Calls: []string{"b {}"}}},
		{"a lone < is text", "a < b", flat{Text: "a < b"}},
		{"a tag prefix at the end is text", "see <tool_", flat{Text: "see <tool_"}},
		{"closing tag alone is text", "</tool_call>", flat{Text: "</tool_call>"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, flatten(splitText(tt.text))); diff != "" {
				t.Errorf("whole (-want +got):\n%s", diff)
			}
			// Every split point, and one byte at a time, must give the same result.
			for cut := 0; cut <= len(tt.text); cut++ {
				if diff := cmp.Diff(tt.want, flatten(feedAll(tt.text[:cut], tt.text[cut:]))); diff != "" {
					t.Fatalf("split at %d (-want +got):\n%s", cut, diff)
				}
			}
			if diff := cmp.Diff(tt.want, flatten(feedAll(strings.Split(tt.text, "")...))); diff != "" {
				t.Errorf("byte by byte (-want +got):\n%s", diff)
			}
		})
	}
}

func feedAll(parts ...string) []piece {
	var s splitter
	var out []piece
	for _, p := range parts {
		out = append(out, s.feed(p)...)
	}
	return append(out, s.finish()...)
}

// TestSplitter_HoldsPossibleTagUntilResolved: a piece that may start <tool_call> is not
// sent as content before the next piece says what it is.
func TestSplitter_HoldsPossibleTagUntilResolved(t *testing.T) {
	var s splitter
	if got := flatten(s.feed("Sure <tool")); got.Text != "Sure" {
		t.Fatalf("first piece emitted %q, want %q", got.Text, "Sure")
	}
	if got := s.feed("_call>{\"name\":\"a\""); len(got) != 0 {
		t.Fatalf("an open call emitted %v", got)
	}
	if got := flatten(s.feed(",\"arguments\":{}}</tool_call>")); len(got.Calls) != 1 || got.Text != "" {
		t.Fatalf("closing the call gave %+v", got)
	}
}

// FuzzSplitter holds the streaming parser's contract on arbitrary text and splits: no
// panic, the same result as the whole text, text that holds no call comes back whole,
// and valid UTF-8 in gives valid UTF-8 out.
func FuzzSplitter(f *testing.F) {
	for _, s := range []string{
		"hello",
		"<tool_call>\n{\"name\": \"a\", \"arguments\": {\"x\": 1}}\n</tool_call>",
		"x <tool_call>{\"name\":\"b\"}</tool_call> y <tool_call>{bad</tool_call>",
		"<tool_call><tool_call>{\"name\":\"c\",\"arguments\":\"[1]\"}",
		"<<tool_call</tool_call>é",
	} {
		f.Add(s, uint8(3), uint8(7))
	}
	f.Fuzz(func(t *testing.T, text string, a, b uint8) {
		whole := flatten(splitText(text))
		var parts []string
		rest := text
		for step := []int{int(a)%8 + 1, int(b)%8 + 1}; len(rest) > 0; step[0], step[1] = step[1], step[0] {
			n := min(step[0], len(rest))
			parts = append(parts, rest[:n])
			rest = rest[n:]
		}
		if diff := cmp.Diff(whole, flatten(feedAll(parts...))); diff != "" {
			t.Fatalf("split %q differs from whole (-whole +split):\n%s", parts, diff)
		}
		if !strings.Contains(text, openTag) && whole.Text != text {
			t.Fatalf("text without calls changed: %q → %q", text, whole.Text)
		}
		if utf8.ValidString(text) && !utf8.ValidString(whole.Text) {
			t.Fatalf("invalid UTF-8 out of %q", text)
		}
	})
}
