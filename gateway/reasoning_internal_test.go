package gateway

import (
	"bytes"
	"encoding/json"
	"testing"
)

// Reasoning in history goes back under the name the engine reads; only the key's bytes
// change, so the prompt's other bytes (and the engine's prefix cache) stay as they were.
func TestRenameReasoning_KeyOnly(t *testing.T) {
	cases := []struct{ name, in, want string }{
		{"assistant message", `{"model":"m","messages":[{"role":"user","content":"q"},{"role":"assistant","reasoning_content":"think","content":"a"},{"role":"user","content":"reasoning_content"}]}`,
			`{"model":"m","messages":[{"role":"user","content":"q"},{"role":"assistant","reasoning":"think","content":"a"},{"role":"user","content":"reasoning_content"}]}`},
		{"two turns, spaces kept", `{"messages":[ {"role":"assistant", "reasoning_content" : "a"}, {"role":"assistant","reasoning_content":"b"} ]}`,
			`{"messages":[ {"role":"assistant", "reasoning" : "a"}, {"role":"assistant","reasoning":"b"} ]}`},
		{"both names: left alone", `{"messages":[{"role":"assistant","reasoning_content":"a","reasoning":"a"}]}`,
			`{"messages":[{"role":"assistant","reasoning_content":"a","reasoning":"a"}]}`},
		{"top-level member is not a message's", `{"reasoning_content":"x","messages":[]}`, `{"reasoning_content":"x","messages":[]}`},
		{"not JSON", `{"messages":[{"reasoning_content":`, `{"messages":[{"reasoning_content":`},
	}
	for _, c := range cases {
		got := renameReasoning([]byte(c.in), "reasoning_content", "reasoning")
		if string(got) != c.want {
			t.Errorf("%s:\n got %s\nwant %s", c.name, got, c.want)
		}
	}
	// And back, for an engine that reads reasoning_content.
	in := `{"messages":[{"role":"assistant","reasoning":"r"}]}`
	if got := renameReasoning([]byte(in), "reasoning", "reasoning_content"); string(got) != `{"messages":[{"role":"assistant","reasoning_content":"r"}]}` {
		t.Errorf("back: %s", got)
	}
	// Nothing to rename: the same slice, not a copy.
	plain := []byte(`{"messages":[{"role":"user","content":"hi"}]}`)
	if got := renameReasoning(plain, "reasoning_content", "reasoning"); &got[0] != &plain[0] {
		t.Error("a body with nothing to rename was copied")
	}
}

// The name: configured wins; else the engine's last answer; else the kind's.
func TestReasoningName_ConfiguredThenLearntThenKind(t *testing.T) {
	vllm := newReasoningName(&Upstream{Kind: "vllm"})
	llama := newReasoningName(&Upstream{Kind: "llamacpp"})
	fixed := newReasoningName(&Upstream{Kind: "vllm", ReasoningField: "reasoning_content"})
	if vllm.name() != "reasoning" || llama.name() != "reasoning_content" || fixed.name() != "reasoning_content" {
		t.Fatalf("before any answer: vllm %q, llamacpp %q, configured %q", vllm.name(), llama.name(), fixed.name())
	}
	vllm.saw(false) // an older vLLM answered under reasoning_content
	llama.saw(true)
	fixed.saw(true)
	if vllm.name() != "reasoning_content" || llama.name() != "reasoning" || fixed.name() != "reasoning_content" {
		t.Errorf("after answers: vllm %q, llamacpp %q, configured %q", vllm.name(), llama.name(), fixed.name())
	}
	var none *reasoningName // before routing
	none.saw(true)
	if b := []byte(`{"messages":[{"reasoning":"x"}]}`); string(none.rewrite(b)) != string(b) {
		t.Error("a nil name rewrote the body")
	}
}

func FuzzRenameReasoning(f *testing.F) {
	f.Add([]byte(`{"messages":[{"role":"assistant","reasoning_content":"think","content":"a"}]}`))
	f.Add([]byte(`{"messages":[{"reasoning_content":1,"reasoning":2},{"reasoning_content":{"reasoning_content":3}}]}`))
	f.Add([]byte(`{"messages":{"reasoning_content":1}}`))
	f.Fuzz(func(t *testing.T, in []byte) {
		out := renameReasoning(in, "reasoning_content", "reasoning")
		if bytes.Equal(out, in) {
			return
		}
		if !json.Valid(in) || !json.Valid(out) {
			t.Fatalf("renamed %q (valid %v) into %q (valid %v)", in, json.Valid(in), out, json.Valid(out))
		}
		if n := len(in) - len(out); n <= 0 || n%len("_content") != 0 {
			t.Fatalf("length changed by %d: %q -> %q", n, in, out)
		}
		if back := renameReasoning(out, "reasoning", "reasoning_content"); !bytes.Equal(back, in) {
			t.Fatalf("renaming back gave %q, want %q", back, in)
		}
	})
}
