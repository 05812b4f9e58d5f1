//go:build llamacpp

package embedded

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/ollama/ollama/llama"

	"github.com/maskgate/maskgate/masking"
)

// TestCallMasker_PrefixStepsAreTheWholeVocabularysVerdict: at points of a call in the
// structure, in strings, in numbers and in the closing text, the tokens allowed through
// the byte and two-byte prefixes are exactly those llama.cpp allows when asked about
// every token of the tiny model's 128k vocabulary.
func TestCallMasker_PrefixStepsAreTheWholeVocabularysVerdict(t *testing.T) {
	be := newBackend(t, Options{})
	if _, err := be.maskIndex(); err != nil {
		t.Fatal(err)
	}
	gv := be.masks.gv
	grammar, err := masking.CallGBNF(masking.Spec{Format: masking.Hermes(), Allowed: []string{"send_email", "get_weather"}},
		map[string]json.RawMessage{"send_email": json.RawMessage(benchEmailSchema), "get_weather": json.RawMessage(benchWeatherSchema)})
	if err != nil {
		t.Fatal(err)
	}
	all := make([]int32, gv.n)
	for i := range all {
		all[i] = int32(i)
	}
	for _, at := range []string{
		"\n{\"name\": \"",
		"\n{\"name\": \"get_weather\", \"arguments\": ",
		"\n{\"name\": \"get_weather\", \"arguments\": {",
		"\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Pa",
		"\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"日",
		"\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"\xe6\x97",
		"\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"abcdefghijkl",
		"\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"x\", \"unit\": \"c",
		"\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"x\", \"unit\": \"celsius\", \"days\": 12",
		"\n{\"name\": \"send_email\", \"arguments\": {\"to\": \"a\", \"subject\": \"s\", \"urgent\": t",
		"\n{\"name\": \"send_email\", \"arguments\": {\"to\": \"a\", \"subject\": \"s\", \"urgent\": true}",
		"\n{\"name\": \"send_email\", \"arguments\": {\"to\": \"a\", \"subject\": \"s\", \"urgent\": true}}\n</tool_",
	} {
		g := llama.NewGrammar(grammar, gv.ids, gv.pieces, gv.eog)
		if g == nil {
			t.Fatal("grammar refused")
		}
		m := &callMasker{v: gv, g: g}
		for _, c := range []byte(at) {
			id := int32(gv.n + int(c))
			if !m.allows(id) {
				t.Fatalf("%q: byte %q refused", at, c)
			}
			g.Accept(id)
		}
		words := (gv.n + 63) / 64
		byPrefix, whole := make([]uint64, words), make([]uint64, words)
		m.allowedByPrefix(byPrefix)
		m.apply(all, whole)
		g.Free()
		if !slices.Equal(byPrefix, whole) {
			var extra, missing []string
			for id := range gv.n {
				p, w := byPrefix[id/64]>>(id%64)&1 == 1, whole[id/64]>>(id%64)&1 == 1
				switch {
				case p && !w:
					extra = append(extra, gv.pieces[id])
				case w && !p:
					missing = append(missing, gv.pieces[id])
				}
			}
			t.Errorf("after %q: the prefix steps allow %d tokens llama.cpp refuses (%.10q) and miss %d it allows (%.10q)", at, len(extra), extra, len(missing), missing)
		}
	}
}
