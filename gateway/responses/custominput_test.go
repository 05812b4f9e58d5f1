package responses

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

// TestCustomInput_WholeAndCut: a custom call's input is the decoded "input" string;
// arguments cut inside that string by the token limit give the text as far as it
// came, an unfinished escape dropped; other shapes are the input as they are.
func TestCustomInput_WholeAndCut(t *testing.T) {
	for _, c := range []struct{ args, want string }{
		{`{"input": "*** Begin Patch\n*** End Patch"}`, "*** Begin Patch\n*** End Patch"},
		{`{"input":"a\"b"}`, `a"b`},
		{`{"input": "*** Begin Patch\n*** Add Fi`, "*** Begin Patch\n*** Add Fi"},
		{`{"input": "line\`, "line"},
		{`{"input": "tab\u00`, "tab"},
		{`{"input": "esc\u001b`, "esc\x1b"},
		{` { "input" :  "`, ""},
		{`{"input": "closed" `, `{"input": "closed" `},
		{`{"other": "x`, `{"other": "x`},
		{`plain text`, `plain text`},
		{`{"input": 3}`, `{"input": 3}`},
	} {
		if got := customInput(c.args); got != c.want {
			t.Errorf("customInput(%q) = %q, want %q", c.args, got, c.want)
		}
	}
}

// FuzzCutInput: cutInput never panics, and whatever it reads back is a prefix of the
// text a whole call would carry: for every text and cut point, the cut arguments of
// {"input": text} give a prefix of text.
func FuzzCutInput(f *testing.F) {
	f.Add("*** Begin Patch\n*** Add File: a\n+x\n*** End Patch\n", 20)
	f.Add("q\"\\\t\x01é😀", 9)
	f.Add("", 0)
	f.Fuzz(func(t *testing.T, text string, cut int) {
		if !utf8.ValidString(text) {
			return
		}
		b, err := json.Marshal(map[string]string{"input": text})
		if err != nil {
			t.Fatal(err)
		}
		args := string(b)
		head := len(`{"input":"`)
		if cut < 0 || head+cut >= len(args)-2 {
			return
		}
		got, ok := cutInput(args[:head+cut])
		if !ok {
			t.Fatalf("cutInput(%q) refused a cut call", args[:head+cut])
		}
		if !strings.HasPrefix(text, strings.TrimSuffix(got, "\uFFFD")) {
			t.Fatalf("cutInput(%q) = %q, not a prefix of %q", args[:head+cut], got, text)
		}
		// Any bytes at all: no panic.
		cutInput(args[cut%len(args):])
	})
}
