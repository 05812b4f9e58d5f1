package messages

import "testing"

// TestOutputFormat_BetaForm: the structured-outputs beta's top-level output_format maps
// onto response_format as output_config.format does, the schema's bytes as sent;
// output_config.format wins when both come; a format other than json_schema is a 400 on
// its own path.
func TestOutputFormat_BetaForm(t *testing.T) {
	const schema = `{"type":"object", "properties":{"a":{"type":"integer"}}}`
	want := `{"type":"json_schema","json_schema":{"name":"output","schema":` + schema + `}}`
	for _, extra := range []string{
		`"output_format":{"type":"json_schema","schema":` + schema + `}`,
		`"output_config":{"format":{"type":"json_schema","schema":` + schema + `}}`,
		`"output_config":{"format":{"type":"json_schema","schema":` + schema + `}},"output_format":{"type":"json_schema","schema":{"type":"string"}}`,
	} {
		r := mustDecode(t, req(`[{"role":"user","content":"x"}]`, extra), Options{})
		if string(r.ResponseFormat) != want {
			t.Errorf("%s: response_format %s, want %s", extra, r.ResponseFormat, want)
		}
	}
	_, e := Decode([]byte(req(`[{"role":"user","content":"x"}]`, `"output_format":{"type":"xml"}`)), Options{})
	if e == nil || e.Param != "output_format.type" {
		t.Errorf("output_format xml: %+v, want a 400 on output_format.type", e)
	}
}
