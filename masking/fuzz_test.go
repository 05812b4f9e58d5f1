package masking

import (
	"errors"
	"testing"
)

// FuzzState drives a State with arbitrary tokens, half of them picked from
// the allowed set so that runs get deep into calls: it never panics, and
// Accept takes a token exactly when Allowed holds it.
func FuzzState(f *testing.F) {
	l := loadLlama(f)
	masks := []*Mask{
		compile(f, l, Spec{Allowed: []string{"get_file", "get_files", "git.commit", "git.config", "日本"}}),
		compile(f, l, Spec{Allowed: []string{"get_file", "browser_open"}, Mode: ModeRequired}),
		compile(f, l, Spec{Allowed: []string{"browser_open", "browser_click", "x"}, Mode: ModeSpecified, Namespace: "browser_"}),
		compile(f, l, Spec{}),
	}
	f.Add([]byte{0, 1, 2, 3, 4, 5, 6, 7, 8, 9})
	f.Add([]byte("\x00\xff\x80<tool_call>get_file"))
	f.Fuzz(func(t *testing.T, in []byte) {
		if len(in) == 0 {
			return
		}
		m := masks[int(in[0])%len(masks)]
		st := m.NewState()
		var ids []int32
		for i := 1; i+2 < len(in); i += 3 {
			v := int(in[i])<<16 | int(in[i+1])<<8 | int(in[i+2])
			set := st.Allowed()
			tok := v%(l.ix.Len()+2) - 1 // includes out-of-range ids
			if v&1 == 0 && set.Count() > 0 {
				ids = set.AppendIDs(ids[:0])
				tok = int(ids[(v>>1)%len(ids)])
			}
			before := st
			err := st.Accept(tok)
			if (err == nil) != set.Has(tok) {
				t.Fatalf("token %d: Has=%v Accept=%v", tok, set.Has(tok), err)
			}
			if err != nil && (!errors.Is(err, ErrDisallowed) || st != before) {
				t.Fatalf("refusal %v moved the state or lacks ErrDisallowed", err)
			}
		}
	})
}
