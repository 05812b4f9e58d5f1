package masking

import (
	"fmt"
	"testing"
)

func TestParseToolChoice_MapsEveryOpenAIForm(t *testing.T) {
	tests := []struct {
		raw   string
		mode  Mode
		names string
		none  bool
		bad   bool
	}{
		{"", ModeAuto, "[]", false, false},
		{`"auto"`, ModeAuto, "[]", false, false},
		{`"required"`, ModeRequired, "[]", false, false},
		{`"none"`, ModeAuto, "[]", true, false},
		{`{"type":"function","function":{"name":"a"}}`, ModeRequired, "[a]", false, false},
		{`{"type":"allowed_tools","allowed_tools":{"mode":"required","tools":[{"type":"function","function":{"name":"a"}},{"type":"function","function":{"name":"b"}}]}}`, ModeRequired, "[a b]", false, false},
		{`{"type":"allowed_tools","allowed_tools":{"mode":"auto","tools":[{"type":"function","function":{"name":"b"}}]}}`, ModeAuto, "[b]", false, false},
		{`{"type":"custom"}`, 0, "[]", false, true},
		{`{"type":"allowed_tools","allowed_tools":{"mode":"sometimes","tools":[]}}`, 0, "[]", false, true},
		{`"sometimes"`, 0, "[]", false, true},
	}
	for _, tt := range tests {
		mode, names, none, err := ParseToolChoice([]byte(tt.raw))
		if (err != nil) != tt.bad || (err == nil && (mode != tt.mode || fmt.Sprint(names) != tt.names || none != tt.none)) {
			t.Errorf("%s: mode %v names %v none %v err %v", tt.raw, mode, names, none, err)
		}
	}
	if got := fmt.Sprint(Narrow([]string{"a", "b", "c"}, []string{"c", "a"})); got != "[a c]" {
		t.Errorf("Narrow keeps %s", got)
	}
}
