package lark

import (
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"
)

// constructCase is one construct of the subset: its source, the GBNF rules
// the translation must give (with prefix "g-", root line excluded), and texts
// an engine must accept or refuse (engine_*_test.go).
type constructCase struct {
	name  string
	regex bool // syntax "regex" rather than "lark"
	src   string
	want  string
	texts []membership
}

func (c constructCase) grammar() (*Grammar, error) {
	if c.regex {
		return Regex(c.src)
	}
	return Parse(c.src)
}

func (c constructCase) standalone() (string, error) {
	g, err := c.grammar()
	if err != nil {
		return "", err
	}
	return g.Standalone()
}

func yes(texts ...string) []membership {
	var out []membership
	for _, s := range texts {
		out = append(out, membership{text: s, accept: true})
	}
	return out
}

func no(texts ...string) []membership {
	var out []membership
	for _, s := range texts {
		out = append(out, membership{text: s})
	}
	return out
}

func both(a, b []membership) []membership { return append(a, b...) }

var constructCases = []constructCase{
	{name: "literal and rule reference", src: "start: greet \"!\"\ngreet: \"hi\"",
		want:  "g-start ::= g-greet \"!\"\ng-greet ::= \"hi\"\n",
		texts: both(yes("hi!"), no("hi", "hi!!", "Hi!"))},
	{name: "string escapes", src: `start: "a\"b\\c\n\t\x41\u00e9"`,
		want:  "g-start ::= \"a\\\"b\\\\c\\n\\tAé\"\n",
		texts: both(yes("a\"b\\c\n\tAé"), no("a\"b\\c"))},
	// xgrammar reads every hex digit after \x, llama.cpp two: a hex digit
	// after an escape is escaped too.
	{name: "hex digit after an escape", src: `start: "\x01a\x7fB"`,
		want:  "g-start ::= \"\\x01\\x61\\x7F\\x42\"\n",
		texts: both(yes("\x01a\x7fB"), no("\x1a", "\x01a"))},
	{name: "case-insensitive string", src: `start: "ok"i`,
		want:  "g-start ::= [Oo] [Kk]\n",
		texts: both(yes("ok", "OK", "oK"), no("o", "okk"))},
	{name: "alternatives and continuation lines", src: "start: \"a\"\n     | \"b\" \"c\"\n  | \"d\"",
		want:  "g-start ::= \"a\" | \"b\" \"c\" | \"d\"\n",
		texts: both(yes("a", "bc", "d"), no("b", "ad", ""))},
	{name: "optional, star, plus", src: `start: "a"? "b"* "c"+`,
		want:  "g-start ::= \"a\"? \"b\"* \"c\"+\n",
		texts: both(yes("c", "abbcc", "bc"), no("a", "ab", "aac"))},
	{name: "groups and brackets", src: `start: ("x" | "y")+ ["z" "w"]`,
		want:  "g-start ::= ( \"x\" | \"y\" )+ ( \"z\" \"w\" )?\n",
		texts: both(yes("x", "xyx", "yzw"), no("z", "xz", "zw"))},
	{name: "multi-line group", src: "start: (\"a\"\n  | \"b\")",
		want:  "g-start ::= \"a\" | \"b\"\n",
		texts: both(yes("a", "b"), no("ab"))},
	{name: "alias, inline and keep marks, priority", src: "?start: item+ -> items\n!item.2: \"i\" -> one\n    | \"j\"",
		want:  "g-start ::= g-item+\ng-item ::= \"i\" | \"j\"\n",
		texts: both(yes("i", "ijj"), no(""))},
	{name: "terminal with regex", src: "start: NAME \"=\" NUM\nNAME: /[a-z_][a-z0-9_]*/\nNUM: /-?\\d+/",
		want:  "g-start ::= g-NAME \"=\" g-NUM\ng-NAME ::= [\\x5F\\x61-z] [0-9\\x5F\\x61-z]*\ng-NUM ::= \"-\"? [0-9]+\n",
		texts: both(yes("x=1", "a_b2=-40"), no("1=1", "x=", "x=-"))},
	{name: "repeat ~ n and ~ n..m", src: `start: "a" ~ 2 "b" ~ 1..3`,
		want:  "g-start ::= \"a\"{2} \"b\"{1,3}\n",
		texts: both(yes("aab", "aabbb"), no("ab", "aabbbb", "aaab"))},
	{name: "range literal", src: `start: "0".."9" "a".."f"`,
		want:  "g-start ::= [0-9] [a-f]\n",
		texts: both(yes("0a", "9f"), no("0g", "a0"))},
	{name: "comments", src: "// a comment\nstart: \"a\" # trailing\n# another\n",
		want:  "g-start ::= \"a\"\n",
		texts: both(yes("a"), no("", "#"))},
	{name: "import common terminals", src: "start: WORD WS NUMBER\n%import common.WORD\n%import common (WS, NUMBER)",
		want: "g-start ::= g-WORD g-WS g-NUMBER\n" +
			"g-NUMBER ::= g-common--FLOAT | g-common--INT\n" +
			"g-WORD ::= g-common--LETTER+\n" +
			"g-WS ::= [\\x09-\\x0A\\x0C-\\x0D\\x20]+\n" +
			"g-common--FLOAT ::= g-common--INT g-common---EXP | g-common--DECIMAL g-common---EXP?\n" +
			"g-common--INT ::= g-common--DIGIT+\n" +
			"g-common--LETTER ::= g-common--UCASE-LETTER | g-common--LCASE-LETTER\n" +
			"g-common---EXP ::= ( \"e\" | \"E\" ) g-common--SIGNED-INT\n" +
			"g-common--DECIMAL ::= g-common--INT \".\" g-common--INT? | \".\" g-common--INT\n" +
			"g-common--DIGIT ::= [0-9]\n" +
			"g-common--UCASE-LETTER ::= [A-Z]\n" +
			"g-common--LCASE-LETTER ::= [a-z]\n" +
			"g-common--SIGNED-INT ::= ( \"+\" | \"-\" )? g-common--INT\n",
		texts: both(yes("abc 12", "x\n\t1.5e-3", "Q .5"), no("abc12", "1 1", "a 1e"))},
	{name: "import with alias", src: "start: NL\n%import common.NEWLINE -> NL",
		want:  "g-start ::= g-NL\ng-NL ::= ( g-common--CR? g-common--LF )+\ng-common--CR ::= \"\\r\"\ng-common--LF ::= \"\\n\"\n",
		texts: both(yes("\n", "\r\n\n"), no("", "\r"))},
	{name: "escaped string", src: "start: ESCAPED_STRING\n%import common.ESCAPED_STRING",
		want:  "g-start ::= g-ESCAPED-STRING\ng-ESCAPED-STRING ::= \"\\\"\" ( [^\\x0A\\x22\\x5C] | \"\\\\\" [^\\x0A] )* \"\\\"\"\n",
		texts: both(yes(`""`, `"a\"b"`, `"\\"`), no(`"a`, `"a"b"`, `"\"`))},
	{name: "regex flag s", src: `start: /a.b/s`,
		want:  "g-start ::= \"a\" [\\x00-\\U0010FFFF] \"b\"\n",
		texts: both(yes("a\nb", "axb"), no("ab"))},
	{name: "regex dot", regex: true, src: `a.b`,
		want:  "g-start ::= \"a\" [^\\x0A] \"b\"\n",
		texts: both(yes("axb", "a€b"), no("a\nb", "ab"))},
	{name: "regex anchors, counts, alternation", regex: true, src: `^\d{3}-(?:[A-Z]{2,}|x){1,2}$`,
		want:  "g-start ::= [0-9]{3} \"-\" g-0rep1{1,2}\ng-0rep1 ::= [A-Z]{2,} | \"x\"\n",
		texts: both(yes("123-AB", "000-xABC", "999-xx"), no("12-AB", "123-A", "123-xxx", "123-"))},
	{name: "regex nested quantified group", regex: true, src: `(ab+)*c`,
		want:  "g-start ::= ( \"a\" \"b\"+ )* \"c\"\n",
		texts: both(yes("c", "abc", "abbabc"), no("ac", "ab"))},
	{name: "regex class with shorthands and negation", regex: true, src: `[^\s{"]\S*`,
		want:  "g-start ::= [^\\x09-\\x0D\\x20\\x22\\x7B] [^\\x09-\\x0D\\x20]*\n",
		texts: both(yes("a", "x{y"), no("{x", "\"", " a", "a b"))},
	{name: "regex named group and lazy quantifier", regex: true, src: `(?P<k>[a-z]+?)=\w*?`,
		want:  "g-start ::= [a-z]+ \"=\" [0-9A-Z\\x5F\\x61-z]*\n",
		texts: both(yes("a=", "ab=c_1"), no("=", "a=-"))},
	{name: "regex escaped metacharacters", regex: true, src: `\.\*\(\)\[\]\{\}\|\\\/\^\$`,
		want:  "g-start ::= \".*()[]{}|\\\\/^$\"\n",
		texts: both(yes(`.*()[]{}|\/^$`), no(`.`))},
}

// TestTranslate_HoistedNamesNeverCollide: a rule hoisted for a counted repeat is
// named apart from every Lark name, "_rep1" included (it maps to "-rep1").
func TestTranslate_HoistedNamesNeverCollide(t *testing.T) {
	g, err := Parse("start: (\"a\" \"b\") ~ 2 _rep1\n_rep1: \"c\"")
	if err != nil {
		t.Fatal(err)
	}
	rules, _, err := g.GBNF("g-")
	if err != nil {
		t.Fatal(err)
	}
	want := "g-start ::= g-0rep1{2} g--rep1\ng--rep1 ::= \"c\"\ng-0rep1 ::= \"a\" \"b\"\n"
	if rules != want {
		t.Errorf("rules\n%s\nwant\n%s", rules, want)
	}
}

func TestTranslate_Constructs(t *testing.T) {
	for _, c := range constructCases {
		g, err := c.grammar()
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		rules, root, err := g.GBNF("g-")
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if root != "g-start" {
			t.Errorf("%s: root = %q", c.name, root)
		}
		if rules != c.want {
			t.Errorf("%s: rules\n%s\nwant\n%s", c.name, rules, c.want)
		}
	}
}

// TestTranslate_OutsideSubsetNamed holds that a grammar the translation
// cannot keep is refused with an error naming the construct, never dropped
// or loosened.
func TestTranslate_OutsideSubsetNamed(t *testing.T) {
	for _, c := range []struct {
		regex      bool
		src, where string
	}{
		{src: "start: WS\n%ignore WS\n%import common.WS", where: "%ignore"},
		{src: "start: A\n%declare A", where: "%declare"},
		{src: "start: x\n%import python.NAME", where: "only imports from common"},
		{src: "start: C_COMMENT\n%import common.C_COMMENT", where: "common.C_COMMENT"},
		{src: "start: _sep{\"a\", \",\"}\n_sep{x, s}: x (s x)*", where: "templates"},
		{src: "start: /a(?=b)/ \"b\"", where: "look-ahead"},
		{src: "start: /(?<!x)a/", where: "look-behind"},
		{src: `start: /(a)\1/`, where: "back-reference"},
		{src: `start: /\bword/`, where: "word boundary"},
		{src: "start: /(?i)abc/", where: "inline flag"},
		{src: "start: /abc/i", where: `flag "i"`},
		{src: "start: /^abc/", where: "anchor"},
		{src: "start: start \"a\" | \"a\"", where: "left recursion (start -> start)"},
		{src: "start: b\nb: c? start\nc: \"x\"", where: "left recursion (start -> b -> start)"},
		{src: "start: a", where: "a, which is not defined"},
		{src: "begin: \"a\"", where: "no start rule"},
		{src: "start: \"a\"\nstart: \"b\"", where: "defined twice"},
		{src: `start: "a" ~ 5000`, where: "repetition count"},
		{src: `start: "ab".."c"`, where: "one-character"},
		{src: "start: \"a", where: "unterminated string"},
		{src: "start: /a", where: "unterminated regular expression"},
		{src: "start: (\"a\"", where: "unbalanced"},
		{src: "start: [a-z]", where: "unexpected"},
		{regex: true, src: `a{2000}`, where: "repetition count above"},
		{regex: true, src: `a**`, where: "repeats nothing"},
		{regex: true, src: `(a`, where: "unterminated group"},
		{regex: true, src: `a)`, where: "unbalanced"},
		{regex: true, src: `[a-`, where: "unterminated character class"},
		{regex: true, src: `[z-a]`, where: "reversed"},
		{regex: true, src: `a++`, where: "possessive"},
		{regex: true, src: `[[:alpha:]]`, where: "POSIX"},
		{regex: true, src: `\p{L}`, where: `\p`},
		{regex: true, src: `a^b`, where: "anchor"},
	} {
		var err error
		if c.regex {
			_, err = Regex(c.src)
		} else {
			_, err = Parse(c.src)
		}
		if err == nil {
			t.Errorf("%q: accepted, want an error naming %q", c.src, c.where)
			continue
		}
		if !strings.Contains(err.Error(), c.where) {
			t.Errorf("%q: error %q does not name %q", c.src, err, c.where)
		}
	}
}

// TestTranslate_BoundedOutput holds that nested counted repetitions render
// linearly (each level a rule of its own), not multiplied out.
func TestTranslate_BoundedOutput(t *testing.T) {
	g, err := Regex(`(((((a{1000}){1000}){1000}){1000}){1000})`)
	if err != nil {
		t.Fatal(err)
	}
	rules, _, err := g.GBNF("g-")
	if err != nil {
		t.Fatal(err)
	}
	if len(rules) > 500 {
		t.Errorf("rendered %d bytes, want under 500:\n%s", len(rules), rules)
	}
}

func TestTranslate_Deterministic(t *testing.T) {
	src := "start: A B C\n%import common (NUMBER, WORD)\n%import common.WS -> A\nB: NUMBER\nC: WORD"
	var first string
	for i := 0; i < 20; i++ {
		g, err := Parse(src)
		if err != nil {
			t.Fatal(err)
		}
		s, err := g.Standalone()
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			first = s
		} else if s != first {
			t.Fatalf("render %d differs:\n%s\nfirst:\n%s", i, s, first)
		}
	}
}

// TestTranslate_LongLiteralUnderCountHoisted: a long literal under a count is a
// rule of its own, referenced count times, not the literal copied per count (a
// 1,000-character literal under ~ 1000 rendered as "aaa…"{1000}, a million
// characters once llama.cpp expands it).
func TestTranslate_LongLiteralUnderCountHoisted(t *testing.T) {
	long := strings.Repeat("a", 1000)
	for _, src := range []struct{ name, syntax, def string }{
		{"lark", "lark", `start: "` + long + `" ~ 1000`},
		{"lark range", "lark", `start: ("` + long + `")~1..1000`},
		{"regex", "regex", `(` + long + `){1000}`},
	} {
		t.Run(src.name, func(t *testing.T) {
			g, err := parseSyntax(src.syntax, src.def)
			if err != nil {
				t.Fatal(err)
			}
			for _, escaped := range []bool{false, true} {
				render := g.GBNF
				if escaped {
					render = g.JSONStringGBNF
				}
				rules, _, err := render("g-")
				if err != nil {
					t.Fatal(err)
				}
				if n := strings.Count(rules, long); n != 1 {
					t.Errorf("escaped %v: the literal is written %d times, want once", escaped, n)
				}
				if strings.Contains(rules, `a"{`) || strings.Contains(rules, `a"){`) {
					t.Errorf("escaped %v: the literal itself is under the count:\n%.300s", escaped, rules)
				}
				if !strings.Contains(rules, "g-0rep1{") {
					t.Errorf("escaped %v: no hoisted rule under the count:\n%.300s", escaped, rules)
				}
			}
		})
	}
}

// TestTranslate_ExpansionRefused: a grammar whose counted repetitions would expand
// past MaxElements once an engine copies them is refused when it is read, naming
// the rule that crosses the bound, in both syntaxes, while a grammar just under it
// is read; refusing takes little memory (the rendering stops at the bound).
func TestTranslate_ExpansionRefused(t *testing.T) {
	var lark strings.Builder
	lark.WriteString("start: r0\n")
	// Each rule: "a" (3 bytes rendered) copied 1,000 times, 3,000 elements: 400 of
	// them pass 1<<20.
	for i := range 400 {
		fmt.Fprintf(&lark, "r%d: \"a\" ~ 1000\n", i)
	}
	regex := strings.Repeat("a{1000}", 400)
	for _, c := range []struct{ name, syntax, def, rule string }{
		{"lark", "lark", lark.String(), "rule r3"},
		{"regex", "regex", regex, "rule start"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			_, err := parseSyntax(c.syntax, c.def)
			runtime.ReadMemStats(&after)
			var le *Error
			if !errors.As(err, &le) || !strings.Contains(le.Msg, c.rule) || !strings.Contains(le.Msg, "elements") {
				t.Fatalf("error %v, want a grammar error naming %q and the element bound", err, c.rule)
			}
			if grew := after.TotalAlloc - before.TotalAlloc; grew > 64<<20 {
				t.Errorf("refusing allocated %d MiB, want under 64", grew>>20)
			}
		})
	}
	// Under the bound: 300 such rules, 900,000 elements.
	ok := strings.Join(strings.SplitAfter(lark.String(), "\n")[:301], "")
	if _, err := Parse(ok); err != nil {
		t.Errorf("a grammar under the bound: %v", err)
	}
}

func parseSyntax(syntax, def string) (*Grammar, error) {
	if syntax == "regex" {
		return Regex(def)
	}
	return Parse(def)
}
