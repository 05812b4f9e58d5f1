//go:build llamacpp

package masking

import (
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"

	llamacpp "github.com/ollama/ollama/llama"

	"github.com/maskgate/maskgate/internal/schemacheck"
)

// argsCall is a Hermes call to f with args, from just after the trigger, as
// CallGBNF's grammar reads it.
func argsCall(args string) string {
	return "\n{\"name\": \"f\", \"arguments\": " + args + "}\n</tool_call>"
}

func callGrammar(t testing.TB, schema string) string {
	t.Helper()
	g, err := CallGBNF(Spec{Format: Hermes(), Allowed: []string{"f"}}, map[string]json.RawMessage{"f": json.RawMessage(schema)})
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// TestSchemaEngine_Cases: in llama.cpp's grammar engine, each case's grammar
// accepts exactly the instances the case accepts; llama.cpp's own converter
// (llama.SchemaToGrammar) gives the same verdicts wherever it reads the
// schema the same way.
func TestSchemaEngine_Cases(t *testing.T) {
	e := newByteEngine()
	var accepted, refused, oracle int
	for _, c := range schemaCases {
		t.Run(c.name, func(t *testing.T) {
			g := callGrammar(t, c.schema)
			var ref string
			if c.llamaDiffers == "" {
				ref = string(llamacpp.SchemaToGrammar([]byte(c.schema)))
				if ref == "" {
					t.Fatalf("llama.cpp's converter refused the schema")
				}
			}
			for want, list := range map[bool][]string{true: c.accept, false: c.refuse} {
				for _, inst := range list {
					if ok, at := e.accepts(t, g, argsCall(inst)); ok != want {
						t.Errorf("%s: accepted %v (refused at byte %d), want %v\n%s", inst, ok, at, want, g)
					} else if want {
						accepted++
					} else {
						refused++
					}
					if ref != "" {
						if ok, _ := e.accepts(t, ref, inst); ok != want {
							t.Errorf("llama.cpp's converter: %s accepted %v, want %v", inst, ok, want)
						}
						oracle++
					}
				}
			}
		})
	}
	t.Logf("%d schemas: %d instances accepted, %d refused as expected; %d verdicts matched by llama.cpp's own converter", len(schemaCases), accepted, refused, oracle)
}

// TestSchemaEngine_CasesThroughWholeGrammar: the same cases through GBNF,
// the grammar llama-server gets, in required mode: the arguments rule is
// the same one behind the tool's name.
func TestSchemaEngine_CasesThroughWholeGrammar(t *testing.T) {
	e := newByteEngine()
	for _, c := range schemaCases {
		g, err := GBNF(Spec{Format: Hermes(), Allowed: []string{"other", "f"}, Mode: ModeRequired},
			map[string]json.RawMessage{"f": json.RawMessage(c.schema), "other": json.RawMessage(`{"type":"object","additionalProperties":false}`)})
		if err != nil {
			t.Fatal(err)
		}
		for _, inst := range c.accept {
			if ok, at := e.accepts(t, g.Grammar, hermesCall("f", inst)); !ok {
				t.Errorf("%s: %s refused at byte %d", c.name, inst, at)
			}
			// Another tool's schema does not admit f's arguments.
			if inst != "{}" && inst != "{ }" {
				if ok, _ := e.accepts(t, g.Grammar, hermesCall("other", inst)); ok {
					t.Errorf("%s: %s accepted for tool other, whose schema admits only {}", c.name, inst)
				}
			}
		}
		for _, inst := range c.refuse {
			if ok, _ := e.accepts(t, g.Grammar, hermesCall("f", inst)); ok {
				t.Errorf("%s: %s accepted", c.name, inst)
			}
		}
	}
}

// TestSchemaEngine_Random: over random schemas, llama.cpp accepts every
// valid instance written in the grammar's forms, and a near-valid instance
// exactly when the independent validator (internal/schemacheck) finds it
// valid: zero false accepts, zero false rejects.
func TestSchemaEngine_Random(t *testing.T) {
	e := newByteEngine()
	n := 150
	if testing.Short() {
		n = 40
	}
	r := rand.New(rand.NewPCG(11, 0x5eed))
	var valid, nearValid, nearInvalid int
	for i := range n {
		s := randomToolSchema(r)
		g := callGrammar(t, s.json)
		cg := e.compile(t, g)
		cg.Free()
		for range 6 {
			inst := s.valid(r)
			if err := schemacheck.Validate([]byte(s.json), []byte(inst)); err != nil {
				t.Fatalf("schema %d: the generator wrote an invalid instance %s: %v\n%s", i, inst, err, s.json)
			}
			if ok, at := e.accepts(t, g, argsCall(inst)); !ok {
				t.Errorf("schema %d: valid %s refused at byte %d\nschema %s\n%s", i, inst, at, s.json, g)
			}
			valid++
		}
		for range 10 {
			inst := s.near(r)
			want := schemacheck.Validate([]byte(s.json), []byte(inst)) == nil
			if ok, at := e.accepts(t, g, argsCall(inst)); ok != want {
				t.Errorf("schema %d: %s accepted %v (refused at %d), validator says valid %v\nschema %s\n%s", i, inst, ok, at, want, s.json, g)
			}
			if want {
				nearValid++
			} else {
				nearInvalid++
			}
		}
	}
	t.Logf("%d random schemas: %d valid instances accepted; of the near-valid ones %d valid accepted and %d invalid refused", n, valid, nearValid, nearInvalid)
}

// FuzzSchemaEngine: any parameters bytes give an error (not JSON) or a
// grammar llama.cpp compiles, in every format.
func FuzzSchemaEngine(f *testing.F) {
	for _, c := range schemaCases {
		f.Add(c.schema, byte(0))
	}
	r := rand.New(rand.NewPCG(3, 4))
	for i := range 20 {
		f.Add(randomToolSchema(r).json, byte(i))
	}
	f.Add(`{"$ref":"#"}`, byte(1))
	f.Add(`{"anyOf":[{"$ref":"#/anyOf/1"},{"$ref":"#/anyOf/0"}]}`, byte(2))
	f.Add(`{"type":"string","maxLength":100000,"minLength":99999}`, byte(3))
	f.Add(`{"properties":{"\u0000\"]-\\":{"enum":["\u0000",1e400]}}}`, byte(4))
	e := newByteEngine()
	f.Fuzz(func(t *testing.T, schema string, pick byte) {
		c := fmtCases[int(pick)%len(fmtCases)]
		spec := Spec{Format: c.f, Allowed: []string{"f", "g"}, Mode: Mode(int(pick) / len(fmtCases) % 2)}
		params := map[string]json.RawMessage{"f": json.RawMessage(schema), "g": json.RawMessage(schema)}
		g, err := GBNF(spec, params)
		if err != nil {
			if json.Valid([]byte(strings.TrimSpace(schema))) && strings.TrimSpace(schema) != "" {
				t.Fatalf("valid JSON refused: %v", err)
			}
			return
		}
		e.compile(t, g.Grammar).Free()
		call, err := CallGBNF(spec, params)
		if err != nil {
			t.Fatal(err)
		}
		e.compile(t, call).Free()
	})
}
