//go:build llamacpp

package embedded

import (
	"strings"
	"testing"
)

func TestFilter_HoldsBackPartialMarkers(t *testing.T) {
	tests := []struct {
		name        string
		stops       []string
		trigger     string
		pieces      []string
		wantContent string
		wantTail    string
		wantStop    bool
	}{
		{"stop split across pieces", []string{"END"}, "", []string{"ab", "cE", "N", "Dxyz"}, "abc", "", true},
		{"near miss is sent", []string{"END"}, "", []string{"aE", "Nb"}, "aENb", "", false},
		{"trigger split", nil, "<tool_call>", []string{"hi <tool", "_call>{\"a\":1}"}, "hi ", "<tool_call>{\"a\":1}", false},
		{"stop inside the call", []string{"STOP"}, "<tool_call>", []string{"<tool_call>x", "STOPy"}, "", "<tool_call>x", true},
		{"utf-8 split", nil, "", []string{"caf\xc3", "\xa9!"}, "café!", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := &textFilter{stops: tt.stops, trigger: tt.trigger}
			var sent strings.Builder
			stop := false
			for _, p := range tt.pieces {
				out, s := f.push(p)
				if strings.ContainsRune(out, '\uFFFD') || (out != "" && !strings.HasPrefix(tt.wantContent[sent.Len():], out)) {
					t.Errorf("sent %q early", out)
				}
				sent.WriteString(out)
				if s {
					stop = true
					break
				}
			}
			sent.WriteString(f.flush())
			if sent.String() != tt.wantContent || f.content.String() != tt.wantContent || f.tail.String() != tt.wantTail || stop != tt.wantStop {
				t.Errorf("content %q tail %q stop %v; want %q %q %v", sent.String(), f.tail.String(), stop, tt.wantContent, tt.wantTail, tt.wantStop)
			}
		})
	}
}
