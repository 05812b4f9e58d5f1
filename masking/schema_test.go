package masking

import (
	"encoding/json"
	"math/rand/v2"
	"regexp"
	"strings"
	"sync"
	"testing"
)

// gbnfRuleRE reads the rules of a grammar: "NAME ::= BODY", one per line.
var gbnfRuleRE = regexp.MustCompile(`(?m)^([a-zA-Z0-9-]+) ::= `)

// checkRefs fails when a grammar refers to a rule it does not define or
// defines one twice. Literals and classes are cut out first, so names inside
// them do not count.
func checkRefs(t testing.TB, g string) {
	t.Helper()
	defined := map[string]bool{}
	if regexp.MustCompile(`(?m) ::= *$`).MatchString(g) {
		t.Fatalf("a rule has no body:\n%s", g)
	}
	for _, m := range gbnfRuleRE.FindAllStringSubmatch(g, -1) {
		if defined[m[1]] {
			t.Fatalf("rule %s defined twice:\n%s", m[1], g)
		}
		defined[m[1]] = true
	}
	bare := stripGBNFTerminals(g)
	for _, w := range regexp.MustCompile(`[a-zA-Z][a-zA-Z0-9-]*`).FindAllString(bare, -1) {
		if !defined[w] {
			t.Fatalf("rule %s used but not defined:\n%s", w, g)
		}
	}
}

// stripGBNFTerminals drops string literals, character classes and
// repetition counts from GBNF text.
func stripGBNFTerminals(g string) string {
	var b strings.Builder
	for i := 0; i < len(g); i++ {
		switch c := g[i]; c {
		case '"', '[':
			end := byte('"')
			if c == '[' {
				end = ']'
			}
			for i++; i < len(g) && g[i] != end; i++ {
				if g[i] == '\\' {
					i++
				}
			}
		case '{':
			for i < len(g) && g[i] != '}' {
				i++
			}
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

func TestSchema_GoldenGrammars(t *testing.T) {
	for _, c := range schemaCases[:4] {
		g, err := CallGBNF(Spec{Format: Hermes(), Allowed: []string{"f"}}, map[string]json.RawMessage{"f": json.RawMessage(c.schema)})
		if err != nil {
			t.Fatal(err)
		}
		golden(t, "schema/"+strings.ReplaceAll(c.name, " ", "-")+".gbnf", []byte(g))
	}
}

// TestSchema_FollowsTheSchemaBytes: the properties come in the schema's own
// order, and equal bytes give equal grammars, call after call (no map
// iteration anywhere).
func TestSchema_FollowsTheSchemaBytes(t *testing.T) {
	render := func(schema string) string {
		g, err := CallGBNF(Spec{Format: Hermes(), Allowed: []string{"f"}}, map[string]json.RawMessage{"f": json.RawMessage(schema)})
		if err != nil {
			t.Fatal(err)
		}
		return g
	}
	zyx := render(`{"type":"object","properties":{"zeta":{},"yak":{},"xray":{},"w":{},"v":{},"u":{}}}`)
	if i, j := strings.Index(zyx, `"\"zeta\""`), strings.Index(zyx, `"\"u\""`); i < 0 || j < 0 || i > j {
		t.Errorf("properties not in the schema's order:\n%s", zyx)
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 50 {
		s := randomToolSchema(r).json
		first := render(s)
		for range 5 {
			if again := render(s); again != first {
				t.Fatalf("same schema, different grammar:\n%s\n---\n%s", first, again)
			}
		}
		checkRefs(t, first)
	}
}

// TestSchema_CatalogMatchesPlain: a catalog renders each tool once and the
// same bytes as GBNF without one, whatever order and subset is asked for.
func TestSchema_CatalogMatchesPlain(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	params := map[string]json.RawMessage{}
	var names []string
	for i := range 30 {
		n := "tool_" + string(rune('a'+i%26)) + strings.Repeat("x", i/26)
		names = append(names, n)
		params[n] = json.RawMessage(randomToolSchema(r).json)
	}
	cat := NewCatalog(params)
	for range 20 {
		r.Shuffle(len(names), func(i, j int) { names[i], names[j] = names[j], names[i] })
		spec := Spec{Format: Hermes(), Allowed: names[:1+r.IntN(len(names))], Mode: Mode(r.IntN(2))}
		a, err1 := GBNF(spec, params)
		b, err2 := cat.GBNF(spec)
		if err1 != nil || err2 != nil || a.Grammar != b.Grammar {
			t.Fatalf("catalog grammar differs (%v, %v)", err1, err2)
		}
		c1, _ := CallGBNF(spec, params)
		c2, _ := cat.CallGBNF(spec)
		if c1 != c2 {
			t.Fatal("catalog call grammar differs")
		}
		checkRefs(t, a.Grammar)
		checkRefs(t, c1)
	}
}

func TestSchema_BadParametersNameTheTool(t *testing.T) {
	_, err := GBNF(Spec{Format: Hermes(), Allowed: []string{"ok", "bad"}}, map[string]json.RawMessage{"bad": json.RawMessage(`{"type":`)})
	if err == nil || !strings.Contains(err.Error(), `"bad"`) {
		t.Errorf("error %v does not name the tool", err)
	}
}

// TestSchema_WideningIsBounded: counted repetitions past maxRepeat are left
// open rather than spelled out, so a grammar stays small.
func TestSchema_WideningIsBounded(t *testing.T) {
	g, err := CallGBNF(Spec{Format: Hermes(), Allowed: []string{"f"}}, map[string]json.RawMessage{
		"f": json.RawMessage(`{"type":"object","properties":{"s":{"type":"string","minLength":100000,"maxLength":200000},"a":{"type":"array","maxItems":1000000}}}`)})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(g, "json-char{256,}") || !strings.Contains(g, "( ws \",\" ws json-value )*") {
		t.Errorf("bounds not widened:\n%s", g)
	}
}

// FuzzArgRules: any parameters render without panicking into a grammar
// whose every rule is defined once, the same bytes twice. The llamacpp
// build's FuzzSchemaEngine compiles them in llama.cpp too.
func FuzzArgRules(f *testing.F) {
	for _, c := range schemaCases {
		f.Add(c.schema)
	}
	f.Add(`{"$ref":"#"}`)
	f.Add(`{"anyOf":[{"$ref":"#"}]}`)
	f.Add(`{"type":"object","properties":{"a":{"$ref":"#/properties/a"}}}`)
	f.Fuzz(func(t *testing.T, schema string) {
		spec := Spec{Format: Hermes(), Allowed: []string{"f"}}
		params := map[string]json.RawMessage{"f": json.RawMessage(schema)}
		g, err := CallGBNF(spec, params)
		if err != nil {
			return // not JSON
		}
		again, _ := CallGBNF(spec, params)
		if g != again {
			t.Fatal("not deterministic")
		}
		checkRefs(t, g)
	})
}

// TestSchema_CatalogRendersConcurrently: requests rendering one catalog at once share its
// per-tool rules and get equal bytes (run with -race).
func TestSchema_CatalogRendersConcurrently(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	params := map[string]json.RawMessage{}
	var names []string
	for i := range 40 {
		n := "t" + strings.Repeat("x", i)
		names = append(names, n)
		params[n] = json.RawMessage(randomToolSchema(r).json)
	}
	cat := NewCatalog(params)
	spec := Spec{Format: Hermes(), Allowed: names, Mode: ModeRequired}
	want, err := GBNF(spec, params)
	if err != nil {
		t.Fatal(err)
	}
	got := make([]string, 8)
	var wg sync.WaitGroup
	for i := range got {
		wg.Go(func() {
			g, err := cat.GBNF(spec)
			if err == nil {
				got[i] = g.Grammar
			}
		})
	}
	wg.Wait()
	for i, g := range got {
		if g != want.Grammar {
			t.Fatalf("render %d differs", i)
		}
	}
}
