package masking

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The golden tags are checked against the structural_tag shape in vLLM's
// structured outputs docs (docs.vllm.ai/en/latest/features/structured_outputs:
// structured_outputs.structural_tag, "XGrammar latest structural tag format")
// and xgrammar's tutorial (xgrammar.mlc.ai/docs/tutorials/structural_tag.html:
// triggered_tags with triggers, tags of type "tag" with begin / content / end,
// at_least_one).

func TestStructuralTag_Golden(t *testing.T) {
	for _, tc := range goldenSpecs {
		t.Run(tc.name, func(t *testing.T) {
			tag, err := StructuralTag(tc.spec, goldenParams)
			if err != nil {
				t.Fatal(err)
			}
			var pretty bytes.Buffer
			if err := json.Indent(&pretty, tag, "", "  "); err != nil {
				t.Fatalf("not JSON: %v\n%s", err, tag)
			}
			golden(t, "structtag/"+tc.name+".json", append(tag, '\n'))
		})
	}
}

// structTag is the decoded shape, to check meaning apart from bytes.
type structTag struct {
	Type   string    `json:"type"`
	Format tagFormat `json:"format"`
}

// tagFormat is a decoded format: triggered_tags, or a sequence of a
// const_string (a required call's lead) and triggered_tags.
type tagFormat struct {
	Type           string   `json:"type"`
	Triggers       []string `json:"triggers"`
	AtLeastOne     *bool    `json:"at_least_one"`
	StopAfterFirst *bool    `json:"stop_after_first"`
	Tags           []struct {
		Type    string `json:"type"`
		Begin   string `json:"begin"`
		End     string `json:"end"`
		Content struct {
			Type       string          `json:"type"`
			JSONSchema json.RawMessage `json:"json_schema"`
		} `json:"content"`
	} `json:"tags"`
	Value    string      `json:"value"`
	Elements []tagFormat `json:"elements"`
}

// calls is the tag's lead ("" without one) and its triggered tags.
func (st structTag) calls(t testing.TB) (string, tagFormat) {
	t.Helper()
	f := st.Format
	if f.Type != "sequence" {
		return "", f
	}
	if len(f.Elements) != 2 || f.Elements[0].Type != "const_string" || f.Elements[1].Type != "triggered_tags" {
		t.Fatalf("sequence is not a const_string and triggered_tags: %+v", f)
	}
	return f.Elements[0].Value, f.Elements[1]
}

func TestStructuralTag_OneTagPerAllowedName(t *testing.T) {
	forRandomSpecs(t, 200, func(t *testing.T, spec Spec, allowed, _ []string) {
		raw, err := StructuralTag(spec, goldenParams)
		if len(allowed) == 0 {
			if err != ErrNoCallAllowed {
				t.Fatalf("err = %v, want ErrNoCallAllowed", err)
			}
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		var st structTag
		if err := json.Unmarshal(raw, &st); err != nil {
			t.Fatalf("%v\n%s", err, raw)
		}
		if st.Type != "structural_tag" || st.Format.Type != "triggered_tags" || !cmp.Equal(st.Format.Triggers, []string{"<tool_call>"}) {
			t.Fatalf("envelope wrong: %s", raw)
		}
		if st.Format.AtLeastOne == nil || *st.Format.AtLeastOne != (spec.Mode != ModeAuto) {
			t.Errorf("at_least_one wrong for mode %s", spec.Mode)
		}
		var got []string
		for _, tag := range st.Format.Tags {
			if tag.Type != "tag" || tag.End != "}\n</tool_call>" || tag.Content.Type != "json_schema" {
				t.Errorf("tag wrong: %+v", tag)
			}
			name, ok := strings.CutPrefix(tag.Begin, "<tool_call>\n{\"name\": \"")
			name, ok2 := strings.CutSuffix(name, "\", \"arguments\": ")
			if !ok || !ok2 {
				t.Errorf("begin %q", tag.Begin)
			}
			got = append(got, name)
			// begin + arguments + end is the call the model emits.
			if call := tag.Begin + "{}" + tag.End; call != hermesCall(name, "{}") {
				t.Errorf("call %q", call)
			}
		}
		if !cmp.Equal(got, allowed) {
			t.Errorf("tags %q, want %q", got, allowed)
		}
	})
}

func TestStructuralTag_Schemas(t *testing.T) {
	spec := Spec{Format: Hermes(), Allowed: []string{"get_file", "load_tool", "no_params"}}
	raw, err := StructuralTag(spec, goldenParams)
	if err != nil {
		t.Fatal(err)
	}
	var st structTag
	if err := json.Unmarshal(raw, &st); err != nil {
		t.Fatal(err)
	}
	want := []string{
		`{"type":"object","required":["path"],"properties":{"path":{"type":"string"}}}`, // compacted, key order kept
		`{"type":"object"}`, // null
		`{"type":"object"}`, // absent
	}
	for i, tag := range st.Format.Tags {
		if got := string(tag.Content.JSONSchema); got != want[i] {
			t.Errorf("%s: schema %s, want %s", spec.Allowed[i], got, want[i])
		}
	}
	if _, err := StructuralTag(spec, map[string]json.RawMessage{"get_file": json.RawMessage(`{"type":`)}); err == nil || !strings.Contains(err.Error(), `"get_file"`) {
		t.Errorf("invalid schema: err = %v, want one naming the tool", err)
	}
}

func TestStructuralTag_Deterministic(t *testing.T) {
	spec := goldenSpecs[0].spec
	a, err := StructuralTag(spec, goldenParams)
	if err != nil {
		t.Fatal(err)
	}
	for range 20 {
		b, _ := StructuralTag(spec, goldenParams)
		if !bytes.Equal(a, b) {
			t.Fatal("structural tag bytes changed between calls")
		}
	}
}

// TestStructuralTag_AsVLLMField shows how the tag travels: as a JSON string
// inside structured_outputs.
func TestStructuralTag_AsVLLMField(t *testing.T) {
	tag, err := StructuralTag(Spec{Format: Hermes(), Allowed: []string{"a"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	body := append([]byte(`{"structured_outputs":{"structural_tag":`), appendJSONString(nil, string(tag))...)
	body = append(body, "}}"...)
	var req struct {
		SO struct {
			Tag string `json:"structural_tag"`
		} `json:"structured_outputs"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		t.Fatal(err)
	}
	if req.SO.Tag != string(tag) {
		t.Errorf("round trip changed the tag")
	}
}
