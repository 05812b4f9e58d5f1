//go:build llamacpp

package embedded

import "testing"

func TestFormatFor_NamedDetectedOrUnconstrained(t *testing.T) {
	tests := []struct {
		name, format, template string
		constrains             bool
		parse, marker          string
	}{
		{"hermes template", "", `{{- '<tool_call>\n{"name": "' }}`, true, "hermes", "<tool_call>"},
		{"named mistral", "mistral", `anything`, true, "mistral", "[TOOL_CALLS]"},
		{"deepseek starts at its calls block", "", `<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>{{ name }}<｜tool▁sep｜>`, true, "deepseek", "<｜tool▁calls▁begin｜>"},
		{"harmony is channels throughout", "harmony", ``, true, "harmony", "<|channel|>"},
		{"no tool format", "", `<|im_start|>{{ message.role }}`, false, "hermes", "<tool_call>"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := formatFor(tt.format, tt.template)
			if err != nil {
				t.Fatal(err)
			}
			if f.constrains != tt.constrains || f.parse != tt.parse || f.marker != tt.marker {
				t.Errorf("got constrains %v parse %q marker %q; want %v %q %q", f.constrains, f.parse, f.marker, tt.constrains, tt.parse, tt.marker)
			}
		})
	}
	if _, err := formatFor("chatml", ""); err == nil {
		t.Error("an unknown format name was accepted")
	}
}

func TestParseCalls_HarmonyKeepsItsFinalChannel(t *testing.T) {
	text := "<|channel|>analysis<|message|>think<|end|><|start|>assistant<|channel|>final<|message|>Done.<|return|>"
	calls, content, reasoning, err := parseCalls("harmony", text, false)
	if err != nil || len(calls) != 0 || content != "Done." || reasoning != "think" {
		t.Errorf("calls %v content %q reasoning %q err %v; want the final channel as content, the analysis as reasoning", calls, content, reasoning, err)
	}
}
