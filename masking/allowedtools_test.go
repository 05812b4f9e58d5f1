package masking

import (
	"encoding/json"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
)

// Golden tool_choice values are checked against OpenAI's API reference
// (Chat Completions, tool_choice, "Allowed tools": type "allowed_tools",
// allowed_tools.mode "auto" | "required", allowed_tools.tools of
// {"type":"function","function":{"name":...}}).

func TestAllowedTools_Golden(t *testing.T) {
	for _, tc := range goldenSpecs {
		t.Run(tc.name, func(t *testing.T) {
			b := AllowedTools(tc.spec)
			if !json.Valid(b) {
				t.Fatalf("not JSON: %s", b)
			}
			golden(t, "allowedtools/"+tc.name+".json", append(b, '\n'))
		})
	}
}

func TestAllowedTools_ModesAndNames(t *testing.T) {
	forRandomSpecs(t, 200, func(t *testing.T, spec Spec, allowed, _ []string) {
		var tc struct {
			Type         string `json:"type"`
			AllowedTools struct {
				Mode  string `json:"mode"`
				Tools []struct {
					Type     string `json:"type"`
					Function struct {
						Name string `json:"name"`
					} `json:"function"`
				} `json:"tools"`
			} `json:"allowed_tools"`
		}
		b := AllowedTools(spec)
		if err := json.Unmarshal(b, &tc); err != nil {
			t.Fatalf("%v\n%s", err, b)
		}
		wantMode := map[Mode]string{ModeAuto: "auto", ModeRequired: "required", ModeSpecified: "required"}[spec.Mode]
		if tc.Type != "allowed_tools" || tc.AllowedTools.Mode != wantMode {
			t.Errorf("type %q mode %q, want allowed_tools %q", tc.Type, tc.AllowedTools.Mode, wantMode)
		}
		got := []string{}
		for _, tool := range tc.AllowedTools.Tools {
			if tool.Type != "function" {
				t.Errorf("tool type %q", tool.Type)
			}
			got = append(got, tool.Function.Name)
		}
		if allowed == nil {
			allowed = []string{}
		}
		if !cmp.Equal(got, allowed) {
			t.Errorf("names %q, want %q", got, allowed)
		}
	})
}

func TestAppendJSONString_MatchesEncodingJSON(t *testing.T) {
	for _, s := range []string{"", "a", `q"b\`, "\n\r\t\x00\x1f\x7f", "<tool_call>&", "日本😀", "bad\xffutf8", "\u2028"} {
		var back string
		if err := json.Unmarshal(appendJSONString(nil, s), &back); err != nil {
			t.Fatalf("%q: %v", s, err)
		}
		want := s
		if !utf8.ValidString(s) {
			want = string([]rune(s)) // invalid bytes become U+FFFD, as in encoding/json
		}
		if back != want {
			t.Errorf("%q → %q", s, back)
		}
	}
}
