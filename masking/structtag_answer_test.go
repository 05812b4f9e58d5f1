package masking

import (
	"encoding/json"
	"testing"
)

// TestStructuralTagOrAnswer_Text: each allowed tool's tag and the schema as one "or", the
// format's lead (and DeepSeek's closing text) around the calls; a tag that is not one
// of required calls is an error.
func TestStructuralTagOrAnswer_Text(t *testing.T) {
	params := map[string]json.RawMessage{"f": json.RawMessage(`{"type":"object"}`), "g": nil}
	schema := []byte(`{"type":"object","properties":{"a":{"type":"integer"}}}`)
	for _, c := range []struct {
		f    Format
		want string
	}{
		{Hermes(), `{"type":"structural_tag","format":{"type":"or","elements":[` +
			`{"type":"tag","begin":"<tool_call>\n{\"name\": \"f\", \"arguments\": ","content":{"type":"json_schema","json_schema":{"type":"object"}},"end":"}\n</tool_call>"},` +
			`{"type":"tag","begin":"<tool_call>\n{\"name\": \"g\", \"arguments\": ","content":{"type":"json_schema","json_schema":{"type":"object"}},"end":"}\n</tool_call>"},` +
			`{"type":"json_schema","json_schema":{"type":"object","properties":{"a":{"type":"integer"}}}}]}}`},
		{DeepSeek(), `{"type":"structural_tag","format":{"type":"or","elements":[{"type":"sequence","elements":[{"type":"const_string","value":"<｜tool▁calls▁begin｜>"},{"type":"or","elements":[` +
			`{"type":"tag","begin":"<｜tool▁call▁begin｜>f<｜tool▁sep｜>","content":{"type":"json_schema","json_schema":{"type":"object"}},"end":"<｜tool▁call▁end｜>"},` +
			`{"type":"tag","begin":"<｜tool▁call▁begin｜>g<｜tool▁sep｜>","content":{"type":"json_schema","json_schema":{"type":"object"}},"end":"<｜tool▁call▁end｜>"}]},` +
			`{"type":"const_string","value":"<｜tool▁calls▁end｜>"}]},{"type":"json_schema","json_schema":{"type":"object","properties":{"a":{"type":"integer"}}}}]}}`},
	} {
		tag, err := StructuralTag(Spec{Format: c.f, Allowed: []string{"f", "g"}, Mode: ModeRequired}, params)
		if err != nil {
			t.Fatal(err)
		}
		got, err := StructuralTagOrAnswer(c.f, tag, schema)
		if err != nil || string(got) != c.want || !json.Valid(got) {
			t.Errorf("%s: %v\n%s\nwant\n%s", c.f.Name, err, got, c.want)
		}
	}
	if _, err := StructuralTagOrAnswer(Hermes(), []byte(`{"type":"structural_tag"}`), schema); err == nil {
		t.Error("a tag without a format was wrapped")
	}
}
