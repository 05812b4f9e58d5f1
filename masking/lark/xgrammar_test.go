package lark

import (
	"encoding/json"
	"testing"

	"github.com/maskgate/maskgate/internal/xgrammartest"
)

// TestXGrammar_CodexGrammarsAndConstructs checks the translated grammars with
// the real xgrammar (internal/xgrammartest: its C++ core built to WASM), as
// vLLM and SGLang would get them: a structural tag whose format is the GBNF
// as xgrammar's EBNF ({"type": "grammar", "grammar": ...}). What must be
// accepted and refused comes from the test's own lists.
func TestXGrammar_CodexGrammarsAndConstructs(t *testing.T) {
	type named struct {
		name  string
		gbnf  string
		texts []membership
	}
	var all []named
	for name, cases := range codexCases {
		g, err := Parse(codexGrammar(t, name))
		if err != nil {
			t.Fatal(err)
		}
		s, err := g.Standalone()
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, named{name, s, cases})
	}
	for _, c := range constructCases {
		s, err := c.standalone()
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		all = append(all, named{c.name, s, c.texts})
	}
	var cases []xgrammartest.Case
	for _, n := range all {
		tag, err := json.Marshal(map[string]any{"type": "structural_tag", "format": map[string]any{"type": "grammar", "grammar": n.gbnf}})
		if err != nil {
			t.Fatal(err)
		}
		c := xgrammartest.Case{Name: n.name, Tag: tag}
		for _, m := range n.texts {
			c.Outputs = append(c.Outputs, xgrammartest.Output{Text: m.text, Accept: m.accept, Kind: n.name})
		}
		cases = append(cases, c)
	}
	version, results := xgrammartest.Run(t, cases)
	t.Logf("xgrammar %s", version)
	for i, r := range results {
		c := cases[i]
		if r.Err != "" {
			t.Errorf("%s: xgrammar refused the grammar: %s\n%s", c.Name, r.Err, all[i].gbnf)
			continue
		}
		for j, o := range c.Outputs {
			if r.Accepted[j] != o.Accept {
				t.Errorf("%s: %q accepted = %v, want %v\n%s", c.Name, o.Text, r.Accepted[j], o.Accept, all[i].gbnf)
			}
		}
	}
}

// TestXGrammar_JSONStringSameVerdicts is TestJSONStringEngine_SameVerdictsEscaped
// in xgrammar: the JSON-string form of every Codex grammar and construct as
// an EBNF structural tag, with the raw texts' verdicts.
func TestXGrammar_JSONStringSameVerdicts(t *testing.T) {
	all := escapedCases(t)
	var cases []xgrammartest.Case
	for _, n := range all {
		tag, err := json.Marshal(map[string]any{"type": "structural_tag", "format": map[string]any{"type": "grammar", "grammar": n.gbnf}})
		if err != nil {
			t.Fatal(err)
		}
		c := xgrammartest.Case{Name: n.name, Tag: tag}
		for _, m := range n.texts {
			c.Outputs = append(c.Outputs, xgrammartest.Output{Text: m.text, Accept: m.accept, Kind: n.name})
		}
		cases = append(cases, c)
	}
	version, results := xgrammartest.Run(t, cases)
	t.Logf("xgrammar %s", version)
	for i, r := range results {
		c := cases[i]
		if r.Err != "" {
			t.Errorf("%s: xgrammar refused the grammar: %s\n%s", c.Name, r.Err, all[i].gbnf)
			continue
		}
		for j, o := range c.Outputs {
			if r.Accepted[j] != o.Accept {
				t.Errorf("%s: %q accepted = %v, want %v\n%s", c.Name, o.Text, r.Accepted[j], o.Accept, all[i].gbnf)
			}
		}
	}
}
