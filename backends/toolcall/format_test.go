package toolcall

import (
	"regexp"
	"strings"
	"testing"
)

func TestNewParser_UnknownFormatNamesTheKnownOnes(t *testing.T) {
	_, err := NewParser("chatml", Options{})
	if err == nil || !strings.Contains(err.Error(), "hermes, llama3, mistral, harmony, deepseek") {
		t.Fatalf("err = %v", err)
	}
	if _, err := Parse("", "x", Options{}); err == nil {
		t.Error("empty format accepted")
	}
	for _, n := range Names() {
		if !IsFormat(n) || len(SpecialTokens(n)) == 0 {
			t.Errorf("%s: IsFormat %v, SpecialTokens %v", n, IsFormat(n), SpecialTokens(n))
		}
	}
	if IsFormat("chatml") || SpecialTokens("chatml") != nil {
		t.Error("chatml is a format")
	}
}

// TestDetect_ByTemplateMarkers: each family's template is told by the markers it writes
// (excerpts of the kind each official template contains).
func TestDetect_ByTemplateMarkers(t *testing.T) {
	tests := []struct{ name, tmpl, want string }{
		{"qwen", `{{- '<|im_start|>assistant\n<tool_call>\n{"name": "' }}`, Hermes},
		{"llama 3.1", `{{- "<|python_tag|>" + tool_call.name + ".call(" }}<|start_header_id|>`, Llama3},
		{"llama without builtin tools", `<|start_header_id|>user<|end_header_id|> {"name": function name, "parameters": dictionary}`, Llama3},
		{"mistral", `{{- "[TOOL_CALLS]" + tool.function.name + "[ARGS]" }}`, Mistral},
		{"gpt-oss", `{{- "<|start|>assistant<|channel|>commentary to=functions." }}<|constrain|>json<|message|>`, Harmony},
		{"deepseek", `{{'<｜Assistant｜><｜tool▁calls▁begin｜><｜tool▁call▁begin｜>'}}`, DeepSeek},
		{"chatml without tools", `<|im_start|>{{ message.role }}`, ""},
	}
	for _, tt := range tests {
		got, ok := Detect(tt.tmpl)
		if got != tt.want || ok != (tt.want != "") {
			t.Errorf("%s: Detect = %q, %v; want %q", tt.name, got, ok, tt.want)
		}
	}
}

func TestCallID_DeterministicPerResponse(t *testing.T) {
	if got := CallID(Hermes, "chatcmpl-abc", 2); got != "call_abc_2" {
		t.Errorf("hermes id %q", got)
	}
	if got := CallID(Llama3, "", 1); got != "call_1" {
		t.Errorf("id without a response %q", got)
	}
	nine := regexp.MustCompile(`^[A-Za-z0-9]{9}$`)
	seen := map[string]bool{}
	for _, resp := range []string{"chatcmpl-a", "chatcmpl-b"} {
		for i := range 3 {
			id := CallID(Mistral, resp, i)
			if !nine.MatchString(id) || id != CallID(Mistral, resp, i) || seen[id] {
				t.Errorf("mistral id %q for %s/%d: not 9 alphanumerics, not deterministic, or repeated", id, resp, i)
			}
			seen[id] = true
		}
	}
}
