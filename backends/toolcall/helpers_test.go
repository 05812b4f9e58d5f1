package toolcall

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// flat is a parse result with adjacent text merged, for comparing splits.
type flat struct {
	Text      string
	Reasoning string
	Calls     []string // name + " " + arguments
}

func flatten(evs []Event) flat {
	var f flat
	for _, ev := range evs {
		f.Text += ev.Content
		f.Reasoning += ev.Reasoning
		if ev.Call != nil {
			f.Calls = append(f.Calls, ev.Call.Function.Name+" "+ev.Call.Function.Arguments)
		}
	}
	return f
}

// feed streams parts through a new Parser of format.
func feed(t testing.TB, format string, o Options, parts ...string) []Event {
	t.Helper()
	p, err := NewParser(format, o)
	if err != nil {
		t.Fatal(err)
	}
	var out []Event
	for _, s := range parts {
		out = append(out, p.Feed(s)...)
	}
	return append(out, p.Finish()...)
}

type parseCase struct {
	name string
	text string
	want flat
}

// checkCases holds each case whole, split at every byte, and fed byte by byte, and checks
// that Parse agrees.
func checkCases(t *testing.T, format string, cases []parseCase) {
	t.Helper()
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, flatten(feed(t, format, Options{}, tt.text))); diff != "" {
				t.Errorf("whole (-want +got):\n%s", diff)
			}
			for cut := 0; cut <= len(tt.text); cut++ {
				if diff := cmp.Diff(tt.want, flatten(feed(t, format, Options{}, tt.text[:cut], tt.text[cut:]))); diff != "" {
					t.Fatalf("split at %d (-want +got):\n%s", cut, diff)
				}
			}
			if diff := cmp.Diff(tt.want, flatten(feed(t, format, Options{}, strings.Split(tt.text, "")...))); diff != "" {
				t.Errorf("byte by byte (-want +got):\n%s", diff)
			}
			m, err := Parse(format, tt.text, Options{})
			if err != nil {
				t.Fatal(err)
			}
			got := flat{Text: m.Content, Reasoning: m.Reasoning}
			for _, c := range m.ToolCalls {
				got.Calls = append(got.Calls, c.Function.Name+" "+c.Function.Arguments)
				if c.Index != nil {
					t.Errorf("Parse set Index on %+v", c)
				}
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Parse (-want +got):\n%s", diff)
			}
		})
	}
}

func cmpFlat(want, got flat) string { return cmp.Diff(want, got) }
