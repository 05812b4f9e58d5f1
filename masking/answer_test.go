package masking

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

// TestAnswerGBNF_Text: a small schema's answer grammar, exactly: the root is the
// object's rule, required members first, the optional one after, no extra keys, then
// the JSON primitives.
func TestAnswerGBNF_Text(t *testing.T) {
	a, err := NewAnswer([]byte(`{"type":"object","properties":{"name":{"type":"string"},"n":{"type":"integer"},` +
		`"kind":{"enum":["a","b"]}},"required":["name","kind"],"additionalProperties":false}`))
	if err != nil {
		t.Fatal(err)
	}
	want := `root ::= ans
ans ::= "{" ws ans-name-kv ws "," ws ans-kind-kv ( ws "," ws ( ans-n-kv ) )? ws "}"
ans-name-kv ::= "\"name\"" ws ":" ws json-string
ans-kind ::= "\"a\"" | "\"b\""
ans-kind-kv ::= "\"kind\"" ws ":" ws ans-kind
ans-n-kv ::= "\"n\"" ws ":" ws json-int
` + gbnfJSONRules
	if got := a.GBNF(); got != want {
		t.Errorf("grammar:\n%s\nwant:\n%s", got, want)
	}
	checkRefs(t, a.GBNF())
	obj, err := NewAnswer([]byte(AnyObject))
	if err != nil {
		t.Fatal(err)
	}
	if got := obj.GBNF(); got != "root ::= json-object\n"+gbnfJSONRules {
		t.Errorf("json_object grammar:\n%s", got)
	}
}

// TestNewAnswer_Refuses: every keyword the arguments grammar widens is a SchemaError
// naming it for an answer, at its place; annotations and what is rendered pass.
func TestNewAnswer_Refuses(t *testing.T) {
	for _, c := range []struct{ schema, keyword, at string }{
		{`{"type":"string","pattern":"a+"}`, "pattern", ""},
		{`{"type":"string","pattern":"^a+$","maxLength":3}`, "pattern", ""},
		{`{"type":"object","properties":{"p":{"type":"string","pattern":"^(?=a)a$"}}}`, "pattern", "p"},
		{`{"pattern":"^a$"}`, "pattern", ""},
		{`{"type":"object","properties":{"when":{"type":"string","format":"date-time"}}}`, "format", "when"},
		{`{"type":"object","properties":{"age":{"type":"integer","minimum":5}}}`, "minimum", "age"},
		{`{"type":"integer","minimum":0,"maximum":9}`, "maximum", ""},
		{`{"type":"integer","maximum":9007199254740990}`, "maximum", ""},
		{`{"type":"number","minimum":-9007199254740991,"maximum":9007199254740991}`, "maximum", ""},
		{`{"type":"integer","minimum":5,"maximum":9007199254740991}`, "maximum", ""},
		{`{"type":"number","exclusiveMinimum":0}`, "exclusiveMinimum", ""},
		{`{"type":"number","minimum":0.5}`, "minimum", ""},
		{`{"type":"array","items":{"type":"number","multipleOf":2}}`, "multipleOf", "item"},
		{`{"type":"array","uniqueItems":true}`, "uniqueItems", ""},
		{`{"type":"object","patternProperties":{"^x":{}}}`, "patternProperties", ""},
		{`{"not":{"type":"string"}}`, "not", ""},
		{`{"type":"object","if":{},"then":{}}`, "if", ""},
		{`{"anyOf":[{"type":"string"}],"oneOf":[{"type":"integer"}]}`, "oneOf", ""},
		{`{"type":"object","anyOf":[{"required":["a"]}]}`, "type", ""},
		{`{"allOf":[{"type":"string"},{"maxLength":3}]}`, "allOf", ""},
		{`{"$ref":"#/$defs/a","type":"object","$defs":{"a":{"type":"string"}}}`, "type", ""},
		{`{"$ref":"https://example.com/s.json"}`, "$ref", "https://example.com/s.json"},
		{`{"type":"string","maxLength":1000}`, "maxLength", ""},
		{`{"type":"object","properties":{"x":false},"required":["x"]}`, "false", "x"},
		{`{"type":"date"}`, "type", ""},
		{`{"enum":[1,2],"type":"string"}`, "enum", ""},
		{`{"minLength":2}`, "minLength", ""},
		{`{"$ref":"#"}`, "$ref", ""},
	} {
		_, err := NewAnswer([]byte(c.schema))
		var se *SchemaError
		if !errors.As(err, &se) {
			t.Errorf("%s: got %v, want a SchemaError", c.schema, err)
			continue
		}
		if se.Keyword != c.keyword || se.At != c.at {
			t.Errorf("%s: keyword %q at %q, want %q at %q (%v)", c.schema, se.Keyword, se.At, c.keyword, c.at, err)
		}
		if !strings.Contains(se.Error(), `"`+c.keyword+`"`) {
			t.Errorf("%s: the message does not name the keyword: %v", c.schema, err)
		}
	}
	for _, s := range []string{
		`{"type":"object","title":"T","description":"d","properties":{"a":{"type":"string","default":"x","examples":["y"]}},"$schema":"https://json-schema.org/draft/2020-12/schema"}`,
		`{"$defs":{"n":{"type":"object","properties":{"kids":{"type":"array","items":{"$ref":"#/$defs/n"}}}}},"$ref":"#/$defs/n","description":"tree"}`,
		`{"type":"object","properties":{"o":{"anyOf":[{"type":"string"},{"type":"null"}],"default":null}}}`,
		`{"type":"object","properties":{"p":{"allOf":[{"$ref":"#/$defs/p"}],"description":"d"}},"$defs":{"p":{"enum":["x"]}}}`,
		`{"type":"array","items":{"type":"string","minLength":1,"maxLength":256},"minItems":1,"maxItems":3,"uniqueItems":false}`,
		`{"type":["string","null"]}`, `{"type":"string","pattern":"^[A-Z]{3}-[0-9]{2}$"}`,
		`{"type":"integer","minimum":0}`, `{"type":"integer","exclusiveMinimum":0}`, `{"type":["number","null"],"minimum":0}`, `{"const":"k","type":"string"}`, `{"oneOf":[{"type":"string"},{"type":"integer"}]}`, `true`, `{}`,
	} {
		if _, err := NewAnswer([]byte(s)); err != nil {
			t.Errorf("%s: %v", s, err)
		}
	}
	if _, err := NewAnswer([]byte(`{"type":`)); err == nil {
		t.Error("a schema that is not JSON was taken")
	}
}

// TestGBNFOrAnswer_Text: calls or the answer, one root, never lazy; the call rules are
// GBNF's and the answer's its own; with no tool allowed, the answer alone.
func TestGBNFOrAnswer_Text(t *testing.T) {
	a, err := NewAnswer([]byte(`{"type":"object","properties":{"x":{"type":"string"}},"required":["x"]}`))
	if err != nil {
		t.Fatal(err)
	}
	cat := NewCatalog(map[string]json.RawMessage{"f": json.RawMessage(`{"type":"object","properties":{"q":{"type":"string"}},"required":["q"]}`)})
	for _, f := range []Format{Hermes(), Llama3(), Mistral(), Harmony(), DeepSeek()} {
		spec := Spec{Format: f, Allowed: []string{"f"}}
		g, err := cat.GBNFOrAnswer(spec, a)
		if err != nil {
			t.Fatal(err)
		}
		calls, _ := cat.GBNF(Spec{Format: f, Allowed: []string{"f"}, Mode: ModeRequired})
		if g.Lazy || len(g.Triggers) != 0 {
			t.Errorf("%s: lazy %v, triggers %v", f.Name, g.Lazy, g.Triggers)
		}
		head, callRules, _ := strings.Cut(calls.Grammar, "\ncall ::= ")
		wantHead := "root ::= calls | ans\ncalls ::= " + strings.TrimPrefix(head, "root ::= ") + "\ncall ::= "
		if !strings.HasPrefix(g.Grammar, wantHead) {
			t.Errorf("%s: grammar begins\n%s\nwant\n%s", f.Name, g.Grammar[:min(len(g.Grammar), len(wantHead))], wantHead)
		}
		if !strings.Contains(g.Grammar, callRules) || !strings.HasSuffix(g.Grammar, "ans ::= \"{\" ws ans-x-kv ws \"}\"\nans-x-kv ::= \"\\\"x\\\"\" ws \":\" ws json-string\n") {
			t.Errorf("%s: grammar:\n%s", f.Name, g.Grammar)
		}
		checkRefs(t, g.Grammar)
		if strings.Join(g.PreservedTokens, " ") != strings.Join(calls.PreservedTokens, " ") {
			t.Errorf("%s: preserved %v, want %v", f.Name, g.PreservedTokens, calls.PreservedTokens)
		}
	}
	g, err := cat.GBNFOrAnswer(Spec{Format: Hermes(), Allowed: []string{}}, a)
	if err != nil || g.Grammar != a.GBNF() {
		t.Errorf("nothing allowed: %v\n%s", err, g.Grammar)
	}
	if _, err := cat.GBNFOrAnswer(Spec{Format: Hermes(), Allowed: []string{"f"}, Mode: ModeRequired}, a); err == nil {
		t.Error("a required call beside an answer was rendered")
	}
}

// TestPrefixRoot: the root is the literal, then the old root's body as one group; the
// rules after it are unchanged.
func TestPrefixRoot(t *testing.T) {
	got := PrefixRoot("root ::= calls | ans\ncalls ::= call\n", "</think>\n\n")
	if want := "root ::= \"</think>\\n\\n\" ( calls | ans )\ncalls ::= call\n"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	a, _ := NewAnswer([]byte(AnyObject))
	checkRefs(t, PrefixRoot(a.GBNF(), "</think>"))
}
