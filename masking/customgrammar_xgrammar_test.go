package masking

import (
	"encoding/json"
	"testing"

	"github.com/maskgate/maskgate/internal/xgrammartest"
)

// TestXGrammar_CustomToolEveryFormat compiles, with the real xgrammar, the
// structural tag of a catalog holding Codex's apply_patch (a custom tool) and
// a function tool, in every built-in format and mode, and checks whole
// outputs: a patch the grammar takes, as {"input": "…"}, is accepted;
// malformed patches, the raw unescaped text and a function call breaking its
// schema are refused.
func TestXGrammar_CustomToolEveryFormat(t *testing.T) {
	params := map[string]json.RawMessage{
		"apply_patch": customParams(applyPatchFormat(t)),
		"get_file":    json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`),
	}
	var cases []xgrammartest.Case
	for _, c := range fmtCases {
		for _, mode := range []Mode{ModeAuto, ModeRequired} {
			spec := Spec{Format: c.f, Allowed: []string{"get_file", "apply_patch"}, Mode: mode}
			tag, err := StructuralTag(spec, params)
			if err != nil {
				t.Fatal(err)
			}
			var outs []xgrammartest.Output
			for _, p := range patchCases {
				outs = append(outs, xgrammartest.Output{Text: c.output(mode, inputArgs(p.text), "apply_patch"), Accept: p.accept, Kind: p.name})
				if p.accept {
					outs = append(outs, xgrammartest.Output{Text: c.output(mode, `{"input": "`+p.text+`"}`, "apply_patch"), Kind: p.name + " unescaped"})
				}
			}
			outs = append(outs,
				xgrammartest.Output{Text: c.output(mode, `{"path": "a.go"}`, "get_file"), Accept: true, Kind: "function tool"},
				xgrammartest.Output{Text: c.output(mode, `{"path": 1}`, "get_file"), Kind: "function tool, bad arguments"})
			cases = append(cases, xgrammartest.Case{Name: c.f.Name + "/" + modeName(mode), Tag: tag, Outputs: outs})
		}
	}
	version, results := xgrammartest.Run(t, cases)
	t.Logf("xgrammar %s: %d tags", version, len(cases))
	for i, r := range results {
		c := cases[i]
		if r.Err != "" {
			t.Errorf("%s: xgrammar refused the tag: %s", c.Name, r.Err)
			continue
		}
		for j, o := range c.Outputs {
			if r.Accepted[j] != o.Accept {
				t.Errorf("%s, %s: accepted = %v, want %v\n%s", c.Name, o.Kind, r.Accepted[j], o.Accept, o.Text)
			}
		}
	}
}

func modeName(m Mode) string {
	if m == ModeAuto {
		return "auto"
	}
	return "required"
}
