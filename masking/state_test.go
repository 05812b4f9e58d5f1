package masking

import "testing"

// TestAcceptCall_SaysWhereACallStarts: the token that completes the trigger reports how
// many of its bytes follow it (the call's first bytes), whether the trigger is one
// special token, ends a text token, or sits inside one; other tokens report -1.
func TestAcceptCall_SaysWhereACallStarts(t *testing.T) {
	pieces := []string{"<tool_call>", "Sure", " <tool", "_call>", "_call>\n{\"", "<tool_call>\n{", "x"}
	v := SliceVocab{Special: map[int]bool{0: true}}
	for _, p := range pieces {
		v.Pieces = append(v.Pieces, []byte(p))
	}
	ix, err := NewIndex(v)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		mode  Mode
		toks  []int
		after []int
	}{
		{ModeAuto, []int{1, 0}, []int{-1, 0}},
		{ModeAuto, []int{1, 2, 3}, []int{-1, -1, 0}},
		{ModeAuto, []int{2, 4}, []int{-1, 3}},
		{ModeAuto, []int{5}, []int{2}},
		{ModeRequired, []int{0}, []int{0}},
		{ModeRequired, []int{5}, []int{2}},
	}
	for _, tt := range tests {
		m, err := Compile(ix, Spec{Format: Hermes(), Allowed: []string{"x"}, Mode: tt.mode})
		if err != nil {
			t.Fatal(err)
		}
		st := m.NewState()
		for i, tok := range tt.toks {
			after, err := st.AcceptCall(tok)
			if err != nil || after != tt.after[i] {
				t.Errorf("%s %v: token %q: after %d, %v; want %d", tt.mode, tt.toks, pieces[tok], after, err, tt.after[i])
			}
		}
	}
}
