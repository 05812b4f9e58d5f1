package lark

import (
	"encoding/json"
	"github.com/maskgate/maskgate/internal/gbnftest"
	"testing"
)

// escapeJSON is gbnftest.EscapeJSONString, the tests' own writer.
func escapeJSON(s string) string { return gbnftest.EscapeJSONString(s) }

// escapedStandalone is a whole grammar of the JSON-string form of g.
func escapedStandalone(g *Grammar) (string, error) {
	rules, root, err := g.JSONStringGBNF("g-")
	if err != nil {
		return "", err
	}
	return "root ::= " + root + "\n" + rules, nil
}

// escapedCases are, for every Codex grammar and construct, its texts in the
// JSON-string form with the same verdicts, and texts that only the raw form
// holds (a newline written as itself) refused.
func escapedCases(t testing.TB) []namedGrammar {
	t.Helper()
	var out []namedGrammar
	add := func(name string, g *Grammar, texts []membership) {
		gbnf, err := escapedStandalone(g)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		var ms []membership
		for _, m := range texts {
			esc := escapeJSON(m.text)
			var back string
			if err := json.Unmarshal([]byte(`"`+esc+`"`), &back); err != nil || back != m.text {
				t.Fatalf("%s: the test's escape of %q does not decode back (%v)", name, m.text, err)
			}
			ms = append(ms, membership{m.name, esc, m.accept})
			if m.accept && esc != m.text {
				ms = append(ms, membership{m.name + " (unescaped)", m.text, false})
			}
		}
		out = append(out, namedGrammar{name, gbnf, ms})
	}
	for name, cases := range codexCases {
		g, err := Parse(codexGrammar(t, name))
		if err != nil {
			t.Fatal(err)
		}
		add(name, g, cases)
	}
	for _, c := range constructCases {
		g, err := c.grammar()
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		add(c.name, g, c.texts)
	}
	for _, c := range escapeCases {
		g, err := c.grammar()
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		add(c.name, g, c.texts)
	}
	return out
}

type namedGrammar struct {
	name  string
	gbnf  string
	texts []membership
}

// escapeCases exercise every kind of escape: the quote and backslash, the
// short escapes, \u00xx ones, inside literals, classes and their negations.
var escapeCases = []constructCase{
	{name: "escapes in a literal", src: `start: "q\"b\\n\n\x01\x7f!"`,
		texts: both(yes("q\"b\\n\n\x01\x7f!"), no("q\"b\\n\n\x01!", "q"))},
	{name: "dot and its complement", regex: true, src: `[^\n]+\n`,
		texts: both(yes("a\"\\\t\x1b\x7f\x00z\n", "é\r\n"), no("a\nb\n", "\n"))},
	{name: "controls only", regex: true, src: `[\x00-\x1f]{2}`,
		texts: both(yes("\x00\x1f", "\n\t", "\x0b\x0c"), no(" a", "\x00", "\x00\x00\x00"))},
	{name: "quote or letter", regex: true, src: `["a]*`,
		texts: both(yes("", `"a"`, `aa`), no(`b`, `\`))},
}

// TestJSONStringGBNF_Shapes holds the written form of the escapes: a class
// with no special member stays one class, one with them becomes a group of
// the plain members, the short escapes and the \u00XX ones.
func TestJSONStringGBNF_Shapes(t *testing.T) {
	for _, c := range []struct{ src, want string }{
		{`[a-z]+`, "g-start ::= [a-z]+\n"},
		{`[^\n]`, `g-start ::= ( [^\x00-\x1F\x22\x5C\x7F] | "\\" [\x22\x5C\x62\x66rt] | ( "\\u000" [0-7BE-Fbe-f] | "\\u001" [0-9A-Fa-f] | "\\u007" [Ff] ) )` + "\n"},
		{`"\n"x`, `g-start ::= "\\\"\\n\\\"x"` + "\n"},
		{`a\x01b`, `g-start ::= ( "a" "\\u000" [1] "b" )` + "\n"},
		{`[\x01-\x02]{3}`, "g-start ::= g-0rep1{3}\ng-0rep1 ::= ( \"\\\\u000\" [1-2] )\n"},
	} {
		g, err := Regex(c.src)
		if err != nil {
			t.Fatalf("%s: %v", c.src, err)
		}
		rules, _, err := g.JSONStringGBNF("g-")
		if err != nil {
			t.Fatal(err)
		}
		if rules != c.want {
			t.Errorf("%s:\n%s\nwant\n%s", c.src, rules, c.want)
		}
	}
}
