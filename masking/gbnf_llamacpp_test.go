//go:build llamacpp

package masking

import (
	"math"
	"strings"
	"testing"

	llamacpp "github.com/ollama/ollama/llama"
)

// These tests run the generated grammars in llama.cpp's own grammar code
// (through the Ollama module's llama package) over a byte vocabulary: token
// b (1..255) is the one-byte piece b, token 256 is end of generation. A
// text is in the grammar's language if and only if every byte survives
// Apply in turn and end of generation is allowed after the last one, so
// these are exact membership checks, not parse checks.

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

// compile fails the test when llama.cpp cannot parse the grammar.
func (e *byteEngine) compile(t testing.TB, grammar string) *llamacpp.Grammar {
	t.Helper()
	g := llamacpp.NewGrammar(grammar, e.ids, e.pieces, []int32{eogToken})
	if g == nil {
		t.Fatalf("llama.cpp refused the grammar:\n%s", grammar)
	}
	return g
}

// accepts reports whether the grammar (root, not lazy) matches text whole,
// and at which byte it refused.
func (e *byteEngine) accepts(t testing.TB, grammar, text string) (bool, int) {
	t.Helper()
	g := e.compile(t, grammar)
	defer g.Free()
	// llama.cpp's apply decides each candidate on its own (its piece against the
	// grammar's stacks; an end-of-generation token by whether a stack is empty:
	// llama_grammar_apply_impl), so asking about the one token the text needs gives
	// the verdict a whole-vocabulary apply gives it, at 1/256 of the cost.
	allowed := func(id int32) bool {
		toks := []llamacpp.TokenData{{ID: id}}
		g.Apply(toks)
		return !math.IsInf(float64(toks[0].Logit), -1)
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

func TestGBNFEngine_AllowedAcceptedDisabledRejected(t *testing.T) {
	e := newByteEngine()
	spec := Spec{Format: Hermes(), Allowed: []string{"get_file", "git.commit", "日本_検索", "émoji😀"}}
	g, err := GBNF(spec, nil)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		text string
		want bool
	}{
		{"allowed, empty args", hermesCall("get_file", "{}"), true},
		{"allowed, nested args", hermesCall("git.commit", `{"message": "fix \"x\"\n", "files": ["a", "b"], "n": -1.5e3, "ok": true, "x": null}`), true},
		{"allowed, pretty args", hermesCall("get_file", "{\n  \"path\": \"/tmp\"\n}"), true},
		{"allowed, unicode name", hermesCall("日本_検索", `{"q": "ß"}`), true},
		{"allowed, emoji name", hermesCall("émoji😀", `{}`), true},
		{"two parallel calls", hermesCall("get_file", "{}") + "\n" + hermesCall("git.commit", "{}"), true},
		{"disabled name that extends an allowed one", hermesCall("get_files", "{}"), false},
		{"disabled prefix of an allowed name", hermesCall("get_fil", "{}"), false},
		{"disabled name", hermesCall("delete_everything", "{}"), false},
		{"arguments not an object", hermesCall("get_file", `"x"`), false},
		{"unterminated arguments", hermesCall("get_file", `{"a": 1`), false},
		{"missing end marker", strings.TrimSuffix(hermesCall("get_file", "{}"), "</tool_call>"), false},
		{"text after the call", hermesCall("get_file", "{}") + " done", false},
		{"text before the trigger", "hi " + hermesCall("get_file", "{}"), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got, at := e.accepts(t, g.Grammar, tt.text); got != tt.want {
				t.Errorf("accepts = %v (refused at byte %d), want %v\n%s", got, at, tt.want, tt.text)
			}
		})
	}
}

func TestGBNFEngine_GoldenGrammarsParse(t *testing.T) {
	e := newByteEngine()
	for _, tc := range goldenSpecs {
		g, err := GBNF(tc.spec, goldenParams)
		if err != nil {
			t.Fatal(err)
		}
		e.compile(t, g.Grammar).Free()
	}
}

// TestGBNFEngine_RandomCatalogs: zero false accepts and zero false rejects
// of whole calls over random catalogs and loaded subsets.
func TestGBNFEngine_RandomCatalogs(t *testing.T) {
	e := newByteEngine()
	n := 120
	if testing.Short() {
		n = 30
	}
	forRandomSpecs(t, n, func(t *testing.T, spec Spec, allowed, disabled []string) {
		if len(allowed) == 0 {
			return
		}
		g, err := GBNF(spec, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, nm := range allowed {
			if ok, at := e.accepts(t, g.Grammar, hermesCall(nm, `{"a": [1, {"b": "c"}]}`)); !ok {
				t.Errorf("allowed %q refused at byte %d", nm, at)
			}
		}
		for _, nm := range disabled {
			if ok, _ := e.accepts(t, g.Grammar, hermesCall(nm, `{}`)); ok {
				t.Errorf("disabled %q accepted (allowed %q)", nm, allowed)
			}
		}
	})
}

// FuzzGBNFEngine: the allowed set is the fuzzer's names, one per line; a
// probe name is accepted if and only if it is in the set.
func FuzzGBNFEngine(f *testing.F) {
	f.Add("get_file\nget_files\ngit.commit", "get_fil")
	f.Add("a\nab\nabc", "abcd")
	f.Add("日本\n日本語", "日")
	f.Add(strings.Repeat("x", 64), strings.Repeat("x", 63))
	e := newByteEngine()
	f.Fuzz(func(t *testing.T, list, probe string) {
		names := strings.Split(list, "\n")
		spec := Spec{Format: Hermes(), Allowed: names}
		g, err := GBNF(spec, nil)
		if err != nil {
			t.Skip(err) // names the spec refuses
		}
		if checkName(probe, '"') != nil {
			t.Skip("probe needs escaping")
		}
		in := false
		for _, n := range names {
			in = in || n == probe
		}
		if ok, at := e.accepts(t, g.Grammar, hermesCall(probe, "{}")); ok != in {
			t.Errorf("probe %q in set %v: accepted %v (refused at %d)", probe, in, ok, at)
		}
	})
}

// TestGBNFEngine_EveryFormat: in llama.cpp's grammar engine, over random
// catalogs in every built-in format, the grammar accepts every allowed call
// (alone, and two in a row where the format has parallel calls) and refuses
// every disabled one: zero false accepts, zero false rejects.
func TestGBNFEngine_EveryFormat(t *testing.T) {
	e := newByteEngine()
	n := 60
	if testing.Short() {
		n = 15
	}
	for _, c := range fmtCases {
		t.Run(c.f.Name, func(t *testing.T) {
			var acc, rej, falseAcc, falseRej int
			forRandomSpecsIn(t, c.f, n, func(t *testing.T, spec Spec, allowed, disabled []string) {
				if len(allowed) == 0 {
					return
				}
				g, err := GBNF(spec, nil)
				if err != nil {
					t.Fatal(err)
				}
				for _, nm := range allowed {
					if ok, at := e.accepts(t, g.Grammar, c.output(spec.Mode, `{"a": [1, {"b": "c"}]}`, nm)); !ok {
						falseRej++
						t.Errorf("allowed %q refused at byte %d", nm, at)
					} else {
						acc++
					}
				}
				if c.multi && len(allowed) > 1 {
					if ok, at := e.accepts(t, g.Grammar, c.output(spec.Mode, "{}", allowed[0], allowed[1])); !ok {
						t.Errorf("parallel calls refused at byte %d", at)
					}
				}
				for _, nm := range disabled {
					if ok, _ := e.accepts(t, g.Grammar, c.output(spec.Mode, "{}", nm)); ok {
						falseAcc++
						t.Errorf("disabled %q accepted (allowed %q)", nm, allowed)
					} else {
						rej++
					}
					if len(allowed) > 0 && c.multi {
						// A disabled call after an allowed one is refused too.
						if ok, _ := e.accepts(t, g.Grammar, c.output(spec.Mode, "{}", allowed[0], nm)); ok {
							falseAcc++
							t.Errorf("disabled %q accepted as a second call", nm)
						}
					}
				}
			})
			t.Logf("%s: %d allowed calls accepted, %d disabled calls refused, %d false accepts, %d false rejects", c.f.Name, acc, rej, falseAcc, falseRej)
			// The seeded catalogs fix the counts; the README quotes the full run's.
			if !testing.Short() && (acc != 264 || rej != 605) {
				t.Errorf("%s: %d accepted and %d refused, want 264 and 605 (the README's figures)", c.f.Name, acc, rej)
			}
		})
	}
}

// FuzzGBNFEngineFormats is FuzzGBNFEngine in every built-in format (the
// first byte picks it) and mode.
func FuzzGBNFEngineFormats(f *testing.F) {
	f.Add(byte(1), "get_file\nget_files\ngit.commit", "get_fil")
	f.Add(byte(2), "a\nab\nabc", "abcd")
	f.Add(byte(3), "日本\n日本語", "日")
	f.Add(byte(4), strings.Repeat("x", 64), strings.Repeat("x", 63))
	f.Add(byte(7), "search", "search")
	e := newByteEngine()
	f.Fuzz(func(t *testing.T, pick byte, list, probe string) {
		c := fmtCases[int(pick)%len(fmtCases)]
		mode := Mode(int(pick) / len(fmtCases) % 2)
		names := strings.Split(list, "\n")
		g, err := GBNF(Spec{Format: c.f, Allowed: names, Mode: mode}, nil)
		if err != nil {
			t.Skip(err) // names the spec refuses
		}
		if checkName(probe, c.f.NameClose[0]) != nil {
			t.Skip("probe needs escaping or holds the closer")
		}
		in := false
		for _, n := range names {
			in = in || n == probe
		}
		if ok, at := e.accepts(t, g.Grammar, c.output(mode, "{}", probe)); ok != in {
			t.Errorf("%s: probe %q in set %v: accepted %v (refused at %d)", c.f.Name, probe, in, ok, at)
		}
	})
}

// TestGBNFEngine_OneCallEndsAtTheFirstCall: with OneCall, every format's grammar takes
// one call and refuses a second where the format has parallel calls.
func TestGBNFEngine_OneCallEndsAtTheFirstCall(t *testing.T) {
	e := newByteEngine()
	for _, c := range fmtCases {
		for _, mode := range []Mode{ModeAuto, ModeRequired} {
			g, err := GBNF(Spec{Format: c.f, Allowed: []string{"a", "b"}, Mode: mode, OneCall: true}, nil)
			if err != nil {
				t.Fatal(err)
			}
			if ok, at := e.accepts(t, g.Grammar, c.output(mode, "{}", "a")); !ok {
				t.Errorf("%s %s: one call refused at byte %d", c.f.Name, mode, at)
			}
			if ok, _ := e.accepts(t, g.Grammar, c.output(mode, "{}", "a", "b")); ok && c.multi {
				t.Errorf("%s %s: a second call accepted", c.f.Name, mode)
			}
		}
	}
}
