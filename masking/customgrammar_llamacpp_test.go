//go:build llamacpp

package masking

import (
	"encoding/json"
	"testing"
)

// TestGBNFEngine_CustomToolEveryFormat: in llama.cpp's grammar engine, in
// every built-in format and mode, a call to apply_patch is accepted exactly
// when its input is a patch Codex's grammar takes, written as the JSON
// string {"input": "…"}; the same patch written raw (unescaped newlines, or
// not wrapped at all) is refused, and a function tool beside it keeps its
// schema. CallGBNF (the embedded engine's) holds the same.
func TestGBNFEngine_CustomToolEveryFormat(t *testing.T) {
	e := newByteEngine()
	params := map[string]json.RawMessage{
		"apply_patch": customParams(applyPatchFormat(t)),
		"get_file":    json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`),
	}
	cat := NewCatalog(params)
	for _, c := range fmtCases {
		for _, mode := range []Mode{ModeAuto, ModeRequired} {
			spec := Spec{Format: c.f, Allowed: []string{"get_file", "apply_patch"}, Mode: mode}
			g, err := cat.GBNF(spec)
			if err != nil {
				t.Fatal(err)
			}
			call, err := cat.CallGBNF(spec)
			if err != nil {
				t.Fatal(err)
			}
			check := func(what, out string, want bool) {
				t.Helper()
				if ok, at := e.accepts(t, g.Grammar, out); ok != want {
					t.Errorf("%s/%d %s: accepted = %v (refused at byte %d), want %v\n%s", c.f.Name, mode, what, ok, at, want, out)
				}
			}
			for _, p := range patchCases {
				check(p.name, c.output(mode, inputArgs(p.text), "apply_patch"), p.accept)
				if p.accept {
					check(p.name+" unescaped", c.output(mode, `{"input": "`+p.text+`"}`, "apply_patch"), false)
					check(p.name+" not wrapped", c.output(mode, p.text, "apply_patch"), false)
				}
			}
			check("function tool", c.output(mode, `{"path": "a.go"}`, "get_file"), true)
			check("function tool, bad arguments", c.output(mode, `{"path": 1}`, "get_file"), false)
			if mode == ModeAuto {
				body := c.call("apply_patch", inputArgs(patchCases[0].text))
				body = body[len(c.f.Trigger):]
				if ok, at := e.accepts(t, call, body); !ok {
					t.Errorf("%s: CallGBNF refused a valid patch at byte %d\n%s", c.f.Name, at, body)
				}
				bad := c.call("apply_patch", inputArgs(patchCases[2].text))[len(c.f.Trigger):]
				if ok, _ := e.accepts(t, call, bad); ok {
					t.Errorf("%s: CallGBNF accepted a patch without its end marker", c.f.Name)
				}
			}
		}
	}
}
