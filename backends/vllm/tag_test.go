package vllm

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/maskgate/maskgate/backends"
	"github.com/maskgate/maskgate/backends/oai"
	"github.com/maskgate/maskgate/masking"
)

// TestConstrain_CatalogPathEqualsPlace: a Backend with a ToolsID writes the tag from the
// catalog it keeps for those tools (and, for vLLM, from entries escaped once), into a
// pooled buffer; the body it sends must be byte for byte what Place renders from the
// schemas, with the same outcome and error, over random tools arrays (duplicate names,
// null, absent and invalid parameters, strings JSON escaping treats specially), allowed
// sets (nil, empty, subsets with names the request lacks), tool_choice values, formats
// and placements. Each tools array serves several requests under one ToolsID.
func TestConstrain_CatalogPathEqualsPlace(t *testing.T) {
	r := rand.New(rand.NewPCG(16, 3))
	texts := []string{`plain`, `a \"q\" word`, `back\\slash`, `tab\tnl\n\u0001`, `<b>&amp;</b>`, "sep\u2028x", `日本 😀`, `\ud83d\ude00`}
	placements := []struct {
		name string
		p    Placement
	}{
		{"vllm", StructuredOutputs},
		{"sglang", sglangPlacement},
		{"vllm-tag-only", Placement{Tag: StructuredOutputs.Tag}},
	}
	choices := []string{``, `"auto"`, `"required"`, `"none"`, `{"type":"function","function":{"name":"%s"}}`,
		`{"type":"allowed_tools","allowed_tools":{"mode":"required","tools":[{"type":"function","function":{"name":"%s"}}]}}`}
	seen := map[string]int{}
	for i := range 150 {
		n := 1 + r.IntN(25)
		var names []string
		var tools []string
		for j := range n {
			name := fmt.Sprintf("%s_%d", []string{"get", "git.commit", "web-search", "é"}[r.IntN(4)], r.IntN(2*n))
			if j > 0 && r.IntN(8) == 0 {
				name = names[r.IntN(len(names))] // a duplicate: the last schema wins
			}
			names = append(names, name)
			var params string
			switch r.IntN(8) {
			case 0:
			case 1:
				params = `,"parameters":null`
			case 2:
				if r.IntN(3) == 0 {
					params = `,"parameters":{"type":[}`
					break
				}
				fallthrough
			default:
				params = fmt.Sprintf(`,"parameters":{ "type": "object", "properties": {"%s": {"type": "string", "description": "%s"}} }`,
					texts[r.IntN(len(texts))], texts[r.IntN(len(texts))])
			}
			tools = append(tools, fmt.Sprintf(`{"type":"function","function":{"name":%q%s}}`, name, params))
		}
		id := fmt.Sprintf("tools-%d", i)
		f, _ := masking.FormatByName(masking.FormatNames()[r.IntN(len(masking.FormatNames()))])
		pl := placements[r.IntN(len(placements))]
		b := &Backend{format: f, place: pl.p}
		for range 4 {
			choice := choices[r.IntN(len(choices))]
			if strings.Contains(choice, "%s") {
				choice = fmt.Sprintf(choice, names[r.IntN(len(names))])
			}
			body := `{"model":"m","messages":[],"tools":[` + strings.Join(tools, ",") + `]`
			if choice != "" {
				body += `,"tool_choice":` + choice
			}
			body += `}`
			var allowed []string
			switch r.IntN(4) {
			case 0: // nil: every tool
			case 1:
				allowed = []string{}
			default:
				for _, nm := range names {
					if r.IntN(2) == 0 {
						allowed = append(allowed, nm)
					}
				}
				if r.IntN(2) == 0 {
					allowed = append(allowed, "not_in_request")
				}
				r.Shuffle(len(allowed), func(a, c int) { allowed[a], allowed[c] = allowed[c], allowed[a] })
			}
			want, wo, werr := Place([]byte(body), allowed, f, pl.p, oai.ToolSchemas)
			got, gotO, gerr := b.constrain([]byte(body), &backends.Request{Body: []byte(body), Allowed: allowed, ToolsID: id})
			if fmt.Sprint(werr) != fmt.Sprint(gerr) || wo != gotO || !bytes.Equal(got, want) {
				t.Fatalf("%d %s %s allowed %q choice %s:\n got %v %v %s\nwant %v %v %s", i, f.Name, pl.name, allowed, choice, gotO, gerr, got, wo, werr, want)
			}
			if werr != nil {
				seen["error"]++
			} else {
				seen[fmt.Sprint(pl.name, wo)]++
			}
		}
	}
	for _, k := range []string{"error", "vllm0", "vllm1", "vllm2", "sglang1", "sglang2", "vllm-tag-only1"} {
		if seen[k] == 0 {
			t.Errorf("no case of %s: %v", k, seen)
		}
	}
}

// TestBuildTag_OneCallStopsAfterFirst: parallel_tool_calls: false makes the tag end the
// output at its first call (xgrammar's stop_after_first) even in Hermes, which allows
// parallel calls otherwise; the real xgrammar holds the field's meaning in
// masking's TestXGrammar_StructuralTags.
func TestBuildTag_OneCallStopsAfterFirst(t *testing.T) {
	for _, c := range []struct {
		field string
		want  bool
	}{{``, false}, {`,"parallel_tool_calls":true`, false}, {`,"parallel_tool_calls":false`, true}} {
		body := `{"model":"m","messages":[],"tools":[{"type":"function","function":{"name":"a","parameters":{"type":"object"}}}]` + c.field + `}`
		tg, err := BuildTag([]byte(body), nil, masking.Hermes(), oai.ToolSchemas, nil)
		if err != nil {
			t.Fatalf("%s: %v", c.field, err)
		}
		if got := bytes.Contains(tg.Tag, []byte(`"stop_after_first":true`)); got != c.want {
			t.Errorf("%q: stop_after_first %v, want %v: %s", c.field, got, c.want, tg.Tag)
		}
	}
}

// TestBuildTag_CustomToolCarriesItsGrammar: a custom tool as the Responses door writes
// it (its input's schema with x-grammar) gets a grammar content in vLLM's and SGLang's
// tag, from the schemas and from the catalog alike, while a function tool keeps its
// json_schema content.
func TestBuildTag_CustomToolCarriesItsGrammar(t *testing.T) {
	body := `{"model":"m","messages":[],"tool_choice":{"type":"function","function":{"name":"edit"}},"tools":[` +
		`{"type":"function","function":{"name":"get","parameters":{"type":"object"}}},` +
		`{"type":"function","function":{"name":"edit","parameters":{"type":"object","properties":{"input":{"type":"string","x-grammar":{"type":"grammar","syntax":"regex","definition":"(add|delete) [0-9]+"}}},"required":["input"],"additionalProperties":false}}}]}`
	tg, err := BuildTag([]byte(body), nil, masking.Hermes(), oai.ToolSchemas, nil)
	if err != nil {
		t.Fatal(err)
	}
	var v struct {
		Format struct {
			Tags []struct {
				Begin   string
				Content struct{ Type, Grammar string }
			}
		}
	}
	if err := json.Unmarshal(tg.Tag, &v); err != nil {
		t.Fatalf("%v: %s", err, tg.Tag)
	}
	if len(v.Format.Tags) != 1 || v.Format.Tags[0].Content.Type != "grammar" ||
		!strings.Contains(v.Format.Tags[0].Content.Grammar, `( "add" | "delete" )`) {
		t.Fatalf("tag %s: want edit's one tag with its grammar", tg.Tag)
	}
	cat := masking.NewCatalogInOrder([]string{"get", "edit"}, map[string]json.RawMessage{"edit": json.RawMessage(`{"type":"object","properties":{"input":{"type":"string","x-grammar":{"type":"grammar","syntax":"regex","definition":"(add|delete) [0-9]+"}}},"required":["input"],"additionalProperties":false}`)})
	got, err := cat.StructuralTag(masking.Spec{Format: masking.Hermes(), Allowed: []string{"edit"}, Mode: masking.ModeSpecified, Namespace: "edit"})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(got, []byte(`"content":{"type":"grammar","grammar":"root ::= a0\n`)) {
		t.Errorf("catalog tag %s", got)
	}
}
