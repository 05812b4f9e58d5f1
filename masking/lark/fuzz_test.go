package lark

import (
	"strings"
	"testing"
)

// FuzzParse holds the Lark reader to its contract on any text: no panic, an
// *Error or a grammar, and a grammar renders within MaxGBNF (or says why
// not), the same bytes twice, with every rule it uses defined.
func FuzzParse(f *testing.F) {
	for name := range codexCases {
		f.Add(codexGrammar(f, name))
	}
	for _, c := range constructCases {
		if !c.regex {
			f.Add(c.src)
		}
	}
	f.Add("start: a\na: \"x\" ~ 3..9 [b]\nb: /[^\\n]{2,4}/")
	f.Add("start: (\"a\" (\"b\" (\"c\")*)+)?")
	f.Fuzz(func(t *testing.T, src string) {
		g, err := Parse(src)
		if err != nil {
			if _, ok := err.(*Error); !ok && !strings.HasPrefix(err.Error(), "common.lark") {
				t.Fatalf("error of type %T: %v", err, err)
			}
			return
		}
		checkRender(t, g)
	})
}

// FuzzRegex does the same for grammars of syntax "regex".
func FuzzRegex(f *testing.F) {
	for _, c := range constructCases {
		if c.regex {
			f.Add(c.src)
		}
	}
	f.Add(`(?:\s*)(?:[^\s{\"` + "`" + `]|` + "`" + `[^` + "`" + `])[\s\S]*`)
	f.Add(`^[a-z]{1,3}(x|y)?$`)
	f.Fuzz(func(t *testing.T, src string) {
		g, err := Regex(src)
		if err != nil {
			if _, ok := err.(*Error); !ok {
				t.Fatalf("error of type %T: %v", err, err)
			}
			return
		}
		checkRender(t, g)
	})
}

func checkRender(t *testing.T, g *Grammar) {
	t.Helper()
	a, err := g.Standalone()
	if err != nil {
		if _, ok := err.(*Error); !ok {
			t.Fatalf("render error of type %T: %v", err, err)
		}
		return
	}
	if len(a) > MaxGBNF+100 {
		t.Fatalf("rendered %d bytes", len(a))
	}
	b, _ := g.Standalone()
	if a != b {
		t.Fatalf("two renders differ")
	}
	// The JSON-string form renders within the same bound or says why.
	if e, _, err := g.JSONStringGBNF("g-"); err != nil {
		if _, ok := err.(*Error); !ok {
			t.Fatalf("JSON-string render error of type %T: %v", err, err)
		}
	} else if len(e) > MaxGBNF+100 {
		t.Fatalf("JSON-string form rendered %d bytes", len(e))
	}
	defined := map[string]bool{}
	for _, line := range strings.Split(strings.TrimSuffix(a, "\n"), "\n") {
		name, _, ok := strings.Cut(line, " ::= ")
		if !ok || name == "" {
			t.Fatalf("malformed rule line %q in\n%s", line, a)
		}
		for _, r := range name {
			if !(r == '-' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
				t.Fatalf("rule name %q has %q", name, r)
			}
		}
		defined[name] = true
	}
	for _, line := range strings.Split(strings.TrimSuffix(a, "\n"), "\n") {
		_, body, _ := strings.Cut(line, " ::= ")
		for _, w := range strings.Fields(stripQuoted(body)) {
			w = strings.TrimRight(w, "?*+")
			if i := strings.IndexByte(w, '{'); i > 0 {
				w = w[:i]
			}
			if strings.HasPrefix(w, "g-") && !defined[w] {
				t.Fatalf("rule %q used, not defined, in\n%s", w, a)
			}
		}
	}
}

// stripQuoted blanks GBNF string literals and classes out of a rule body.
func stripQuoted(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '"', '[':
			end := byte('"')
			if s[i] == '[' {
				end = ']'
			}
			for i++; i < len(s) && s[i] != end; i++ {
				if s[i] == '\\' {
					i++
				}
			}
			b.WriteByte(' ')
		default:
			b.WriteByte(s[i])
		}
	}
	return b.String()
}
