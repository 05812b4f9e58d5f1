package masking

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
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

func TestParseToolChoiceStrict_NamesTheFieldAtFault(t *testing.T) {
	tests := []struct {
		raw, param string
		message    string // the whole message, or its start when it ends in ": "
	}{
		{`"sometimes"`, "tool_choice", `tool_choice "sometimes" is not one of "none", "auto", "required"`},
		{`5`, "tool_choice", "tool_choice must be a string or an object: "},
		{`{"type":"custom"}`, "tool_choice.type", `tool_choice type "custom" is not "function" or "allowed_tools"`},
		{`{"type":"function"}`, "tool_choice.function.name", "tool_choice names no function"},
		{`{"type":"function","function":{"name":""}}`, "tool_choice.function.name", "tool_choice names no function"},
		{`{"type":"allowed_tools"}`, "tool_choice.allowed_tools.tools", "allowed_tools lists no tools"},
		{`{"type":"allowed_tools","allowed_tools":{"mode":"auto","tools":[]}}`, "tool_choice.allowed_tools.tools", "allowed_tools lists no tools"},
		{`{"type":"allowed_tools","allowed_tools":{"tools":[{"type":"function","function":{"name":"a"}},{"type":"custom","custom":{"name":"b"}}]}}`,
			"tool_choice.allowed_tools.tools[1].type", `allowed tool type "custom" is not supported; only function`},
		{`{"type":"allowed_tools","allowed_tools":{"tools":[{"type":7}]}}`,
			"tool_choice.allowed_tools.tools[0].type", `allowed tool type "7" is not supported; only function`},
		{`{"type":"allowed_tools","allowed_tools":{"mode":"maybe","tools":[{"type":"function","function":{"name":"a"}}]}}`,
			"tool_choice.allowed_tools.mode", `allowed_tools mode "maybe" is not "auto" or "required"`},
	}
	for _, tt := range tests {
		_, err := ParseToolChoiceStrict([]byte(tt.raw))
		var ce *ToolChoiceError
		if !errors.As(err, &ce) || !errors.Is(err, ErrToolChoice) {
			t.Errorf("%s: err = %v, want a *ToolChoiceError that is ErrToolChoice", tt.raw, err)
			continue
		}
		msgOK := ce.Message == tt.message
		if strings.HasSuffix(tt.message, ": ") {
			msgOK = strings.HasPrefix(ce.Message, tt.message)
		}
		if ce.Param != tt.param || !msgOK || ce.Error() != ce.Message {
			t.Errorf("%s: param %q message %q; want %q %q", tt.raw, ce.Param, ce.Message, tt.param, tt.message)
		}
	}
}

// The lenient reading accepts what only narrows: the engines and the gateway narrow
// their allowed set by the names, so a nameless entry narrows to nothing.
func TestParseToolChoice_LenientWhereStrictRefuses(t *testing.T) {
	tests := []struct {
		raw   string
		mode  Mode
		names []string
	}{
		{`{"type":"function"}`, ModeRequired, []string{""}},
		{`{"type":"allowed_tools"}`, ModeAuto, []string{}},
		{`{"type":"allowed_tools","allowed_tools":{"mode":"required","tools":[]}}`, ModeRequired, []string{}},
		{`{"type":"allowed_tools","allowed_tools":{"tools":[{"type":"custom","custom":{"name":"b"}},{"type":7,"function":{"name":"a"}}]}}`, ModeAuto, []string{"", "a"}},
	}
	for _, tt := range tests {
		mode, names, none, err := ParseToolChoice([]byte(tt.raw))
		if err != nil || mode != tt.mode || none || !cmp.Equal(names, tt.names) {
			t.Errorf("%s: mode %v names %#v none %v err %v; want %v %#v", tt.raw, mode, names, none, err, tt.mode, tt.names)
		}
		if _, err := ParseToolChoiceStrict([]byte(tt.raw)); err == nil {
			t.Errorf("%s: the strict reading accepts it", tt.raw)
		}
	}
}

func TestParseToolChoiceStrict_ReadsTheType(t *testing.T) {
	tests := []struct {
		raw  string
		want ToolChoice
	}{
		{` null `, ToolChoice{}},
		{`"\u0061uto"`, ToolChoice{}},
		{`"required"`, ToolChoice{Mode: ModeRequired}},
		{`"none"`, ToolChoice{None: true}},
		{`{"type":"function","function":{"name":"a"}}`, ToolChoice{Type: "function", Mode: ModeRequired, Names: []string{"a"}}},
		{`{"type":"allowed_tools","allowed_tools":{"tools":[{"function":{"name":"a"}},{"type":"function","function":{"name":"a"}}]}}`,
			ToolChoice{Type: "allowed_tools", Mode: ModeAuto, Names: []string{"a", "a"}}},
	}
	for _, tt := range tests {
		got, err := ParseToolChoiceStrict([]byte(tt.raw))
		if err != nil {
			t.Errorf("%s: %v", tt.raw, err)
			continue
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tt.raw, diff)
		}
	}
}

func FuzzParseToolChoice(f *testing.F) {
	for _, s := range []string{
		``, `null`, `"auto"`, `"required"`, `"none"`, `"sometimes"`, `5`, `[]`,
		`{"type":"function","function":{"name":"a"}}`, `{"type":"function"}`,
		`{"type":"allowed_tools","allowed_tools":{"mode":"required","tools":[{"type":"function","function":{"name":"a"}},{"type":"custom","custom":{"name":"b"}}]}}`,
		`{"type":"allowed_tools","allowed_tools":{"mode":"sometimes","tools":[]}}`,
		`{"type":"allowed_tools","allowed_tools":{"tools":[{"type":7}]}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		mode, names, none, err := ParseToolChoice(raw)
		c, strictErr := ParseToolChoiceStrict(raw)
		for _, err := range []error{err, strictErr} {
			if err == nil {
				continue
			}
			var ce *ToolChoiceError
			if !errors.As(err, &ce) || !errors.Is(err, ErrToolChoice) || !strings.HasPrefix(ce.Param, "tool_choice") || ce.Message == "" {
				t.Fatalf("%q: error %#v", raw, err)
			}
		}
		if err != nil {
			if strictErr == nil {
				t.Fatalf("%q: strict accepts what lenient refuses: %v", raw, err)
			}
			return
		}
		if (mode != ModeAuto && mode != ModeRequired) || (none && (mode != ModeAuto || names != nil)) {
			t.Fatalf("%q: mode %v names %q none %v", raw, mode, names, none)
		}
		if strictErr != nil {
			return
		}
		if c.Mode != mode || c.None != none || !cmp.Equal(c.Names, names) {
			t.Fatalf("%q: strict %+v, lenient %v %q %v", raw, c, mode, names, none)
		}
		var ok bool
		switch c.Type {
		case "":
			ok = c.Names == nil
		case "function":
			ok = len(c.Names) == 1 && c.Names[0] != "" && c.Mode == ModeRequired
		case "allowed_tools":
			ok = len(c.Names) > 0
		}
		if !ok {
			t.Fatalf("%q: strict %+v", raw, c)
		}
	})
}
