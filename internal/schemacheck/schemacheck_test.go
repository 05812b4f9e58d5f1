package schemacheck

import "testing"

func TestValidate_Keywords(t *testing.T) {
	tests := []struct {
		schema, inst string
		ok           bool
	}{
		{`{"type":"integer"}`, `3`, true},
		{`{"type":"integer"}`, `3.0`, true},
		{`{"type":"integer"}`, `3.5`, false},
		{`{"type":["string","null"]}`, `null`, true},
		{`{"type":"string","nullable":true}`, `null`, true},
		{`{"type":"string","maxLength":2}`, `"日本"`, true},
		{`{"type":"string","maxLength":2}`, `"abc"`, false},
		{`{"type":"string","minLength":1}`, `""`, false},
		{`{"enum":["a",1,{"k":[1]}]}`, `{"k":[1.0]}`, true},
		{`{"enum":["a",1]}`, `"b"`, false},
		{`{"const":true}`, `false`, false},
		{`{"type":"object","properties":{"a":{"type":"boolean"}},"required":["a"]}`, `{"a":true}`, true},
		{`{"type":"object","properties":{"a":{"type":"boolean"}},"required":["a"]}`, `{}`, false},
		{`{"type":"object","properties":{"a":{"type":"boolean"}}}`, `{"b":1}`, false},
		{`{"type":"object","properties":{"a":{}},"additionalProperties":true}`, `{"b":1}`, true},
		{`{"type":"object","additionalProperties":{"type":"integer"}}`, `{"b":"x"}`, false},
		{`{"type":"object"}`, `{"b":"x"}`, true},
		{`{"type":"array","items":{"type":"integer"},"maxItems":2}`, `[1,2,3]`, false},
		{`{"type":"array","prefixItems":[{"type":"string"}],"items":{"type":"integer"}}`, `["a",1]`, true},
		{`{"type":"array","prefixItems":[{"type":"string"}],"items":{"type":"integer"}}`, `[1]`, false},
		{`{"anyOf":[{"type":"string"},{"type":"integer"}]}`, `true`, false},
		{`{"oneOf":[{"type":"integer"},{"type":"number"}]}`, `1`, false},
		{`{"$defs":{"n":{"type":"object","properties":{"k":{"$ref":"#/$defs/n"}}}},"$ref":"#/$defs/n"}`, `{"k":{"k":{}}}`, true},
		{`{"$defs":{"n":{"type":"object","properties":{"k":{"$ref":"#/$defs/n"}}}},"$ref":"#/$defs/n"}`, `{"k":{"k":1}}`, false},
	}
	for _, tt := range tests {
		err := Validate([]byte(tt.schema), []byte(tt.inst))
		if (err == nil) != tt.ok {
			t.Errorf("%s against %s: %v, want valid %v", tt.inst, tt.schema, err, tt.ok)
		}
	}
}

func TestValidate_UnsupportedKeywordIsAnError(t *testing.T) {
	if err := Validate([]byte(`{"type":"string","pattern":"^a$"}`), []byte(`"a"`)); err == nil {
		t.Error("pattern was silently ignored")
	}
}
