package chatlayer

import (
	"errors"
	"strings"
	"testing"

	"github.com/maskgate/maskgate/backends"
	"github.com/maskgate/maskgate/masking"
)

// TestFormat: what each response_format asks of the answer, and the 400 for one the
// grammar cannot hold, naming the keyword.
func TestFormat(t *testing.T) {
	schema := `{"type":"object","properties":{"a":{"type":"integer"}},"required":["a"],"additionalProperties":false}`
	want, err := masking.NewAnswer([]byte(schema))
	if err != nil {
		t.Fatal(err)
	}
	obj, _ := masking.NewAnswer([]byte(masking.AnyObject))
	anyValue, _ := masking.NewAnswer([]byte("true"))
	for _, c := range []struct {
		body, grammar, errHas string
	}{
		{body: `{"messages":[]}`},
		{body: `{"response_format":null}`},
		{body: `{"response_format":{"type":"text"}}`},
		{body: `{"response_format":{"type":"json_object"}}`, grammar: obj.GBNF()},
		{body: `{"response_format":{"type":"json_schema","json_schema":{"name":"x","strict":true,"schema":` + schema + `}}}`, grammar: want.GBNF()},
		{body: `{"response_format":{"type":"json_schema","json_schema":{"name":"x"}}}`, grammar: anyValue.GBNF()},
		{body: `{"response_format":{"type":"json_schema","json_schema":{"name":"x","strict":false,"schema":{"type":"integer","minimum":1,"maximum":5}}}}`, errHas: `"maximum"`},
		{body: `{"response_format":{"type":"json_schema","json_schema":{"name":"x","schema":{"type":"object","properties":{"d":{"type":"string","format":"date"}}}}}}`, errHas: `"format" at d`},
		{body: `{"response_format":{"type":"json_schema"}}`, errHas: "json_schema object"},
		{body: `{"response_format":{"type":"json_schema","json_schema":{"schema":[1]}}}`, errHas: "must be a JSON Schema object"},
		{body: `{"response_format":{"type":"yaml"}}`, errHas: `"yaml" is not supported`},
		{body: `{"response_format":"json"}`, errHas: "must be an object"},
		{body: `{"response_format":{"type":1}}`, errHas: "must be an object"},
	} {
		a, err := Format([]byte(c.body))
		if c.errHas != "" {
			var be *backends.Error
			if !errors.As(err, &be) || be.Status != 400 || be.Param != "response_format" || be.Type != "invalid_request_error" || !strings.Contains(be.Message, c.errHas) {
				t.Errorf("%s: got %v (%#v), want a 400 on response_format saying %s", c.body, err, be, c.errHas)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", c.body, err)
			continue
		}
		switch {
		case c.grammar == "" && a != nil:
			t.Errorf("%s: an answer grammar where none was asked:\n%s", c.body, a.GBNF())
		case c.grammar != "" && (a == nil || a.GBNF() != c.grammar):
			t.Errorf("%s: got %v, want\n%s", c.body, a, c.grammar)
		}
	}
}

// FuzzFormat: any body gives an answer, nothing, or a 400 on response_format; never a
// panic or another error.
func FuzzFormat(f *testing.F) {
	for _, s := range []string{`{}`, `{"response_format":{"type":"json_object"}}`, `{"response_format":{"type":"json_schema","json_schema":{"schema":{"$ref":"#/x"}}}}`,
		`{"response_format":{"type":"json_schema","json_schema":{"schema":{"type":"object","properties":{"a":{"anyOf":[{"$ref":"#"}]}}}}}}`, `{"response_format":[]}`, `not json`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body string) {
		a, err := Format([]byte(body))
		var be *backends.Error
		switch {
		case err != nil && (!errors.As(err, &be) || be.Param != "response_format" || be.Status != 400):
			t.Fatalf("%q: %v", body, err)
		case a != nil && !strings.HasPrefix(a.GBNF(), "root ::= "):
			t.Fatalf("%q: grammar %q", body, a.GBNF())
		}
	})
}
