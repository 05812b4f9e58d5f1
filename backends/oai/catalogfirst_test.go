package oai

import (
	"bytes"
	"encoding/json"
	"testing"
)

// TestSystemBehindEmpty: a leading system message with text moves behind an empty one,
// its bytes and every other byte kept; anything else is left as it came.
func TestSystemBehindEmpty(t *testing.T) {
	tests := []struct{ in, want string }{
		{`[{"role":"system", "content":"You are an agent."},{"role":"user","content":"hi"}]`,
			`[{"role":"system","content":""},{"role":"system", "content":"You are an agent."},{"role":"user","content":"hi"}]`},
		{` [ {"content":[{"type":"text","text":"a"}],"role":"system"} ]`,
			` [{"role":"system","content":""}, {"content":[{"type":"text","text":"a"}],"role":"system"} ]`},
		{`[{"role":"\u0073ystem","content":"s"},{"role":"system","content":"t"}]`,
			`[{"role":"system","content":""},{"role":"\u0073ystem","content":"s"},{"role":"system","content":"t"}]`},
	}
	for _, tc := range tests {
		got, ok := SystemBehindEmpty([]byte(tc.in))
		if !ok || string(got) != tc.want {
			t.Errorf("%s:\n got %s (%v)\nwant %s", tc.in, got, ok, tc.want)
		}
	}
	for _, in := range []string{`[]`, `null`, `{}`, `[{"role":"user","content":"hi"}]`,
		`[{"role":"system","content":""},{"role":"user","content":"hi"}]`, `[{"role":"system","content":null}]`,
		`[{"role":"system","content":[]}]`, `[{"role":"system"}]`, `[{"role":"developer","content":"d"}]`,
		`[{"role":"system","content":"s"}`, `[{"role":"system","content":"s"}] x`, `["system"]`} {
		if got, ok := SystemBehindEmpty([]byte(in)); ok || string(got) != in {
			t.Errorf("%s changed: %s", in, got)
		}
	}
}

// FuzzSystemBehindEmpty: whatever the messages, the result is them unchanged, or
// EmptySystem followed by every one of their elements as its own bytes.
func FuzzSystemBehindEmpty(f *testing.F) {
	for _, s := range []string{`[{"role":"system","content":"x"}]`, `[]`, `null`, `[{"role":"user"}]`,
		`[{"role":"system","content":[{"type":"text","text":"a"}]},{"role":"user","content":"b"}]`, `[{"role":"system"`, `{}`,
		` [ {"role":"system","content":"x"} , 1 ] `} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, msgs []byte) {
		got, ok := SystemBehindEmpty(msgs)
		if !ok {
			if !bytes.Equal(got, msgs) {
				t.Fatalf("not moved, yet changed: %s → %s", msgs, got)
			}
			return
		}
		var in, out []json.RawMessage
		if err := json.Unmarshal(msgs, &in); err != nil {
			t.Fatalf("moved messages that are not an array: %s", msgs)
		}
		if err := json.Unmarshal(got, &out); err != nil {
			t.Fatalf("result is not an array: %s", got)
		}
		if len(out) != len(in)+1 || string(out[0]) != EmptySystem {
			t.Fatalf("got %s from %s", got, msgs)
		}
		for i := range in {
			if !bytes.Equal(out[i+1], in[i]) {
				t.Fatalf("element %d changed: %s → %s", i, in[i], out[i+1])
			}
		}
	})
}
