package masking

import (
	"encoding/json"
	"strings"
	"testing"
)

// flatGBNF is GBNF with the allowed names as one flat alternation, the form before the
// radix tree, for BenchmarkGrammarDecode's side-by-side measure.
func flatGBNF(spec Spec, params map[string]json.RawMessage) (Grammar, error) {
	r, err := newGBNFRender(spec, params)
	if err != nil {
		return Grammar{}, err
	}
	r.flatNames = true
	return r.grammar(), nil
}

// The benchmark's flat grammar differs from the gateway's only in how the tool rule
// names the tools: the same root and call, the same arguments rules, and a tool rule of
// one alternative per allowed name, each name once, in the spec's order.
func TestFlatGBNF_OnlyTheNameRuleDiffers(t *testing.T) {
	names := []string{"search_tools", "load_tool", "get_file", "get_files", "git.commit", "日本_検索", "émoji😀"}
	params := map[string]json.RawMessage{
		"get_file":   json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`),
		"git.commit": json.RawMessage(`{"type":"object","properties":{"message":{"type":"string"},"amend":{"type":"boolean"}}}`),
	}
	spec := Spec{Format: Hermes(), Mode: ModeRequired, Allowed: names}
	tree, err := GBNF(spec, params)
	if err != nil {
		t.Fatal(err)
	}
	flat, err := flatGBNF(spec, params)
	if err != nil {
		t.Fatal(err)
	}
	split := func(g string) (head, rule, tail string) {
		head, rest, ok := strings.Cut(g, "\ntool ::= ")
		if !ok {
			t.Fatalf("no tool rule in\n%s", g)
		}
		rule, tail, ok = strings.Cut(rest, "\ntool-args ::= ")
		if !ok {
			t.Fatalf("no tool-args rule in\n%s", g)
		}
		return head, rule, tail
	}
	th, trule, tt := split(tree.Grammar)
	fh, frule, ft := split(flat.Grammar)
	if th != fh || tt != ft {
		t.Errorf("the flat grammar differs outside the tool rule:\ntree\n%s\nflat\n%s", tree.Grammar, flat.Grammar)
	}
	if !strings.Contains(trule, "\ntn1 ::= ") {
		t.Errorf("the gateway's tool rule has no branch rule; these names share prefixes:\n%s", trule)
	}
	alts := strings.Split(frule, " |\n  ")
	if len(alts) != len(names) {
		t.Fatalf("the flat tool rule has %d alternatives for %d names:\n%s", len(alts), len(names), frule)
	}
	for i, a := range alts {
		if want := `"` + names[i] + `" tool-args `; !strings.HasPrefix(a, want) {
			t.Errorf("alternative %d is %q, want it to open with %q", i, a, want)
		}
	}
}
