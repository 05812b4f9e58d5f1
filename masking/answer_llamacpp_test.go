//go:build llamacpp

package masking

import (
	"encoding/json"
	"testing"
)

// TestAnswerEngine_Cases: in llama.cpp's grammar engine, the answer grammar of each case
// schema NewAnswer takes accepts exactly the instances the case accepts, alone and as
// the answer side of GBNFOrAnswer; a Hermes call of the allowed tool passes there too,
// and a call of another tool does not.
func TestAnswerEngine_Cases(t *testing.T) {
	e := newByteEngine()
	cat := NewCatalog(map[string]json.RawMessage{"f": json.RawMessage(`{"type":"object","properties":{"q":{"type":"string"}},"required":["q"]}`)})
	var taken, checked int
	for _, c := range schemaCases {
		a, err := NewAnswer([]byte(c.schema))
		if err != nil {
			continue // refused: TestNewAnswer_Refuses holds which
		}
		taken++
		or, err := cat.GBNFOrAnswer(Spec{Format: Hermes(), Allowed: []string{"f"}}, a)
		if err != nil {
			t.Fatal(err)
		}
		for _, g := range []string{a.GBNF(), or.Grammar} {
			for want, list := range map[bool][]string{true: c.accept, false: c.refuse} {
				for _, inst := range list {
					if ok, at := e.accepts(t, g, inst); ok != want {
						t.Errorf("%s: %s accepted %v (refused at byte %d), want %v\n%s", c.name, inst, ok, at, want, g)
					}
					checked++
				}
			}
		}
		for text, want := range map[string]bool{
			"<tool_call>\n{\"name\": \"f\", \"arguments\": {\"q\": \"x\"}}\n</tool_call>":         true,
			"<tool_call>\n{\"name\": \"g\", \"arguments\": {\"q\": \"x\"}}\n</tool_call>":         false,
			"I think <tool_call>\n{\"name\": \"f\", \"arguments\": {\"q\": \"x\"}}\n</tool_call>": false,
		} {
			if ok, _ := e.accepts(t, or.Grammar, text); ok != want {
				t.Errorf("%s: %q accepted %v, want %v", c.name, text, ok, want)
			}
		}
	}
	if taken < len(schemaCases)/2 {
		t.Errorf("only %d of %d case schemas were taken for an answer", taken, len(schemaCases))
	}
	t.Logf("%d of %d case schemas taken; %d verdicts", taken, len(schemaCases), checked)
}

// TestAnswerEngine_Pattern: an anchored pattern holds the string, as a model writes it in
// JSON, to the expression, in llama.cpp's grammar engine.
func TestAnswerEngine_Pattern(t *testing.T) {
	e := newByteEngine()
	a, err := NewAnswer([]byte(`{"type":"object","properties":{"code":{"type":"string","pattern":"^[A-Z]{3}-[0-9]{2}(/x)?$"}},"required":["code"]}`))
	if err != nil {
		t.Fatal(err)
	}
	for inst, want := range map[string]bool{
		`{"code": "ABC-12"}`: true, `{"code": "XYZ-00/x"}`: true,
		`{"code": "abc-12"}`: false, `{"code": "ABC-123"}`: false, `{"code": "AB-12"}`: false, `{"code": "ABC-12/"}`: false,
	} {
		if ok, at := e.accepts(t, a.GBNF(), inst); ok != want {
			t.Errorf("%s: accepted %v (refused at byte %d), want %v\n%s", inst, ok, at, want, a.GBNF())
		}
	}
}

// TestAnswerEngine_LowerBounds: the lower bounds an answer renders, in llama.cpp's
// grammar engine.
func TestAnswerEngine_LowerBounds(t *testing.T) {
	e := newByteEngine()
	for _, c := range []struct {
		schema         string
		accept, refuse []string
	}{
		{`{"type":"integer","minimum":0}`, []string{"0", "7", "120"}, []string{"-1", "-0", "01", "1.5"}},
		{`{"type":"integer","exclusiveMinimum":0}`, []string{"1", "42"}, []string{"0", "-3"}},
		{`{"type":"integer","minimum":1}`, []string{"1", "10"}, []string{"0", "-10"}},
		{`{"type":"number","minimum":0}`, []string{"0", "0.5", "3e2", "12.25"}, []string{"-0.5", "-1", ".5"}},
	} {
		a, err := NewAnswer([]byte(c.schema))
		if err != nil {
			t.Fatal(err)
		}
		for want, list := range map[bool][]string{true: c.accept, false: c.refuse} {
			for _, inst := range list {
				if ok, _ := e.accepts(t, a.GBNF(), inst); ok != want {
					t.Errorf("%s: %s accepted %v, want %v\n%s", c.schema, inst, ok, want, a.GBNF())
				}
			}
		}
	}
}

// TestAnswerEngine_SafeIntegers: zod's int() writes an integer's maximum as 2^53-1 and,
// without .min(), its minimum as -(2^53-1), and the AI SDK, LangChain and the Agents SDK
// send those schemas as they are; the answer refused them ("upper bounds are not
// rendered"). Now such an integer is rendered with at most 15 digits (under 2^53-1), a
// minimum of 0 or 1 kept, in llama.cpp's grammar engine.
func TestAnswerEngine_SafeIntegers(t *testing.T) {
	e := newByteEngine()
	for _, c := range []struct {
		schema         string
		accept, refuse []string
	}{
		{`{"type":"integer","minimum":-9007199254740991,"maximum":9007199254740991}`,
			[]string{"0", "-7", "999999999999999", "-999999999999999"}, []string{"1000000000000000", "1.5", "01"}},
		{`{"type":"integer","maximum":9007199254740991}`, []string{"42", "-42"}, []string{"1000000000000000"}},
		{`{"type":"integer","minimum":0,"maximum":9007199254740991}`, []string{"0", "7"}, []string{"-1", "1000000000000000"}},
		{`{"type":"integer","minimum":1,"maximum":9007199254740991}`, []string{"1", "999999999999999"}, []string{"0", "-1"}},
	} {
		a, err := NewAnswer([]byte(c.schema))
		if err != nil {
			t.Fatalf("%s: %v", c.schema, err)
		}
		for want, list := range map[bool][]string{true: c.accept, false: c.refuse} {
			for _, inst := range list {
				if ok, at := e.accepts(t, a.GBNF(), inst); ok != want {
					t.Errorf("%s: %s accepted %v (refused at byte %d), want %v\n%s", c.schema, inst, ok, at, want, a.GBNF())
				}
			}
		}
	}
}
