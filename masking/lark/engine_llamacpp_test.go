//go:build llamacpp

package lark

import (
	"math"
	"testing"

	llamacpp "github.com/ollama/ollama/llama"
)

// These tests run the translated grammars in llama.cpp's own grammar code
// (through the Ollama module's llama package, as the embedded engine does)
// over a byte vocabulary: token b (1..255) is the one-byte piece b, token
// 256 is end of generation. A text is in the grammar's language if and only
// if every byte survives Apply in turn and end of generation is allowed after
// the last, so these are exact membership checks.

const eogToken = 256

type byteEngine struct {
	ids    []uint32
	pieces []string
}

func newByteEngine() *byteEngine {
	e := &byteEngine{}
	for b := 1; b < 256; b++ {
		e.ids = append(e.ids, uint32(b))
		e.pieces = append(e.pieces, string([]byte{byte(b)}))
	}
	e.ids = append(e.ids, eogToken)
	e.pieces = append(e.pieces, "")
	return e
}

// accepts reports whether llama.cpp's grammar matches text whole, and at
// which byte it refused. It fails the test when llama.cpp cannot load the
// grammar.
func (e *byteEngine) accepts(t testing.TB, grammar, text string) (bool, int) {
	t.Helper()
	g := llamacpp.NewGrammar(grammar, e.ids, e.pieces, []int32{eogToken})
	if g == nil {
		t.Fatalf("llama.cpp refused the grammar:\n%s", grammar)
	}
	defer g.Free()
	toks := make([]llamacpp.TokenData, len(e.ids))
	allowed := func(id int32) bool {
		for i, x := range e.ids {
			toks[i] = llamacpp.TokenData{ID: int32(x)}
		}
		g.Apply(toks)
		for _, td := range toks {
			if td.ID == id {
				return !math.IsInf(float64(td.Logit), -1)
			}
		}
		return false
	}
	for i := 0; i < len(text); i++ {
		if text[i] == 0 || !allowed(int32(text[i])) {
			return false, i
		}
		g.Accept(int32(text[i]))
	}
	if !allowed(eogToken) {
		return false, len(text)
	}
	return true, -1
}

func TestCodexGrammarsEngine_ValidAcceptedMalformedRefused(t *testing.T) {
	e := newByteEngine()
	for name, cases := range codexCases {
		g, err := Parse(codexGrammar(t, name))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		gbnf, err := g.Standalone()
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range cases {
			ok, at := e.accepts(t, gbnf, c.text)
			if ok != c.accept {
				t.Errorf("%s, %s: accepted = %v (refused at byte %d), want %v\ngrammar:\n%s", name, c.name, ok, at, c.accept, gbnf)
			}
		}
	}
}

func TestTranslateEngine_Constructs(t *testing.T) {
	e := newByteEngine()
	for _, c := range constructCases {
		gbnf, err := c.standalone()
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		for _, m := range c.texts {
			ok, at := e.accepts(t, gbnf, m.text)
			if ok != m.accept {
				t.Errorf("%s: %q accepted = %v (refused at byte %d), want %v\ngrammar:\n%s", c.name, m.text, ok, at, m.accept, gbnf)
			}
		}
	}
}

// TestJSONStringEngine_SameVerdictsEscaped holds JSONStringGBNF to the raw
// grammar's verdicts in llama.cpp: each text of the Codex grammars and the
// constructs, escaped as a JSON string's inside, is accepted exactly when the
// text itself is, and an accepted text that needs escaping is refused as it
// is.
func TestJSONStringEngine_SameVerdictsEscaped(t *testing.T) {
	e := newByteEngine()
	for _, g := range escapedCases(t) {
		for _, m := range g.texts {
			ok, at := e.accepts(t, g.gbnf, m.text)
			if ok != m.accept {
				t.Errorf("%s, %s: %q accepted = %v (refused at byte %d), want %v\ngrammar:\n%s", g.name, m.name, m.text, ok, at, m.accept, g.gbnf)
			}
		}
	}
}
