package chatlayer

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// feed runs parts through one reader and returns its deltas, merged as they came.
func feed(inside bool, parts ...string) []Delta {
	t := NewThink(inside)
	var out []Delta
	for _, p := range parts {
		out = append(out, t.Feed(p)...)
	}
	return append(out, t.Finish()...)
}

// join is the reasoning and content of deltas.
func join(ds []Delta) (reasoning, content string) {
	var r, c strings.Builder
	for _, d := range ds {
		if (d.Reasoning == "") == (d.Content == "") {
			panic("a delta must set exactly one field")
		}
		r.WriteString(d.Reasoning)
		c.WriteString(d.Content)
	}
	return r.String(), c.String()
}

func TestSplit(t *testing.T) {
	cases := []struct {
		name, text         string
		inside             bool
		reasoning, content string
	}{
		{"no block", "Hello there.", false, "", "Hello there."},
		{"no block keeps its whitespace", "  \nHello\n", false, "", "  \nHello\n"},
		{"Qwen3", "<think>\nThe user greets me.\n</think>\n\nHello!", false, "The user greets me.", "Hello!"},
		{"after leading whitespace", "\n <think>a</think>b", false, "a", "b"},
		{"opened by the prompt", "The user greets me.\n</think>\n\nHello!", true, "The user greets me.", "Hello!"},
		{"never closed: all reasoning", "<think>\nStill thinking when the limit came", false, "Still thinking when the limit came", ""},
		{"opened by the prompt, never closed", "Still thinking", true, "Still thinking", ""},
		{"empty block", "<think>\n\n</think>\n\nHi", false, "", "Hi"},
		{"a block later is content", "Hi <think>x</think>", false, "", "Hi <think>x</think>"},
		{"only the first block", "<think>a</think>b<think>c</think>", false, "a", "b<think>c</think>"},
		{"the answer keeps its inner whitespace", "<think>a</think>\n\nline 1\n\nline 2\n", false, "a", "line 1\n\nline 2\n"},
		{"a tool call after thinking", "<think>call it</think>\n<tool_call>\n{\"name\": \"f\"}\n</tool_call>", false, "call it", "<tool_call>\n{\"name\": \"f\"}\n</tool_call>"},
		{"nested open tag is reasoning", "<think>a <think> b</think>c", false, "a <think> b", "c"},
		{"a tag's beginning, unfinished", "<thi", false, "", "<thi"},
		{"a close tag's beginning at the end", "<think>a </thi", false, "a </thi", ""},
		{"empty text", "", false, "", ""},
		{"empty text inside", "", true, "", ""},
		{"a close tag without a block is content", "a</think>b", false, "", "a</think>b"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r, content := Split(c.text, c.inside)
			if r != c.reasoning || content != c.content {
				t.Errorf("Split(%q, %v) = %q, %q; want %q, %q", c.text, c.inside, r, content, c.reasoning, c.content)
			}
			// Byte by byte gives the same.
			var parts []string
			for i := range len(c.text) {
				parts = append(parts, c.text[i:i+1])
			}
			if r2, c2 := join(feed(c.inside, parts...)); r2 != r || c2 != content {
				t.Errorf("byte by byte: %q, %q; whole: %q, %q", r2, c2, r, content)
			}
		})
	}
}

// TestThinkHoldsBackOnlyATag holds what a stream sends at each step: text goes out as soon
// as it cannot be part of a tag (or of whitespace that may precede one).
func TestThinkHoldsBackOnlyATag(t *testing.T) {
	steps := []struct {
		in   string
		want []Delta
	}{
		{"<th", nil},                                       // may become <think>
		{"ink>\nI", []Delta{{Reasoning: "I"}}},             // the newline after the tag is dropped
		{" weigh it</", []Delta{{Reasoning: " weigh it"}}}, // "</" may become </think>
		{"b> ok", []Delta{{Reasoning: "</b> ok"}}},         // it did not
		{"\n\n</thi", nil},                                 // whitespace, then maybe the tag
		{"nk>", nil},                                       // the block closed
		{"\n\nThe answer", []Delta{{Content: "The answer"}}},
		{" is 4.\n", []Delta{{Content: " is 4.\n"}}},
	}
	th := NewThink(false)
	for i, s := range steps {
		if diff := cmp.Diff(s.want, th.Feed(s.in)); diff != "" {
			t.Fatalf("step %d (%q) (-want +got):\n%s", i, s.in, diff)
		}
	}
	if got := th.Finish(); len(got) != 0 {
		t.Errorf("Finish = %v, want nothing", got)
	}
}

// TestThinkNoTagIsContentAtOnce: a text that cannot begin with the tag streams as content
// from its first byte; whitespace alone is held until what follows says.
func TestThinkNoTagIsContentAtOnce(t *testing.T) {
	th := NewThink(false)
	if got := th.Feed("\n"); len(got) != 0 {
		t.Fatalf("whitespace sent before its sequel: %v", got)
	}
	if diff := cmp.Diff([]Delta{{Content: "\nHi"}}, th.Feed("Hi")); diff != "" {
		t.Fatalf("(-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]Delta{{Content: "<b>"}}, th.Feed("<b>")); diff != "" {
		t.Fatalf("(-want +got):\n%s", diff)
	}
}

func TestStartsInside(t *testing.T) {
	cases := map[string]bool{
		"<|im_start|>assistant\n<think>\n":                                      true,
		"<｜Assistant｜><think>\n":                                                true,
		"<|im_start|>assistant\n":                                               false,
		"<|im_start|>assistant\n<think>\n\n</think>\n\n":                        false,
		"<|im_start|>user\nwhat is <think>?<|im_end|>\n<|im_start|>assistant\n": false,
	}
	for prompt, want := range cases {
		if got := StartsInside(prompt); got != want {
			t.Errorf("StartsInside(%q) = %v, want %v", prompt, got, want)
		}
	}
}
