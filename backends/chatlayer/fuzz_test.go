package chatlayer

import (
	"strings"
	"testing"
)

// cutAt splits text at the positions cuts name (each byte taken modulo the length).
func cutAt(text string, cuts []byte) []string {
	if len(text) == 0 {
		return []string{""}
	}
	var parts []string
	last := 0
	for _, c := range cuts {
		at := last + int(c)%(len(text)-last+1)
		parts = append(parts, text[last:at])
		last = at
	}
	return append(parts, text[last:])
}

// FuzzThink holds the reader's contract on any text and any chunking: the same reasoning
// and content as the whole text fed at once, every delta one kind, and nothing lost: the
// text is the reasoning and the content with only the tags and the whitespace around
// them between (and, without a block, the content is the text itself).
func FuzzThink(f *testing.F) {
	seeds := []string{
		"<think>\nx\n</think>\n\ny",
		"x</think>y",
		"  <thi",
		"<think></think>",
		"<think> a </thin </think>",
		"<think>a\n<tool_call>\n{\"name\": \"f\"}\n</tool_call></think>\n<tool_call>{}</tool_call>",
		"hello <think>",
		"</think>",
		"<think>é</think>é",
	}
	for _, s := range seeds {
		f.Add(s, false, []byte{3, 1, 4})
		f.Add(s, true, []byte{1, 1, 1, 1, 1, 1, 1, 1})
	}
	f.Fuzz(func(t *testing.T, text string, inside bool, cuts []byte) {
		r, c := Split(text, inside)
		parts := cutAt(text, cuts)
		r2, c2 := join(feed(inside, parts...))
		if r2 != r || c2 != c {
			t.Fatalf("fed as %q: %q, %q; whole: %q, %q", parts, r2, c2, r, c)
		}
		if !accounts(text, inside, r, c) {
			t.Fatalf("%q (inside %v) read as reasoning %q, content %q: text lost or invented", text, inside, r, c)
		}
	})
}

// accounts reports whether text is made of reasoning and content as the reader reads it:
// [space OpenTag] space reasoning space [CloseTag space content] for a block (the
// opening tag only when the prompt did not open it), else the content alone.
func accounts(text string, inside bool, reasoning, content string) bool {
	rest := text
	if !inside {
		lead := strings.TrimLeft(text, space)
		if !strings.HasPrefix(lead, OpenTag) {
			return reasoning == "" && content == text
		}
		rest = lead[len(OpenTag):]
	}
	rest = strings.TrimLeft(rest, space)
	if !strings.HasPrefix(rest, reasoning) || strings.Contains(reasoning, CloseTag) {
		return false
	}
	if reasoning != "" && (strings.Trim(reasoning, space) != reasoning) {
		return false
	}
	rest = strings.TrimLeft(rest[len(reasoning):], space)
	if rest == "" {
		return content == ""
	}
	if !strings.HasPrefix(rest, CloseTag) {
		return false
	}
	after := rest[len(CloseTag):]
	return content == strings.TrimLeft(after, space)
}
