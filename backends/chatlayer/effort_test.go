package chatlayer

import "testing"

func TestEffort(t *testing.T) {
	cases := []struct {
		effort  string
		harmony bool
		want    string
	}{
		{"", false, ""},
		{"", true, ""},
		{"none", false, `{"enable_thinking":false}`},
		{"minimal", false, `{"enable_thinking":true}`},
		{"high", false, `{"enable_thinking":true}`},
		{"none", true, `{"reasoning_effort":"low"}`},
		{"minimal", true, `{"reasoning_effort":"low"}`},
		{"medium", true, `{"reasoning_effort":"medium"}`},
		{"xhigh", true, `{"reasoning_effort":"high"}`},
	}
	for _, c := range cases {
		got, err := Effort(c.effort, c.harmony)
		if err != nil || string(got) != c.want {
			t.Errorf("Effort(%q, %v) = %s, %v; want %s", c.effort, c.harmony, got, err, c.want)
		}
	}
	if _, err := Effort("extreme", false); err == nil {
		t.Error(`Effort("extreme") gave no error`)
	}
}
