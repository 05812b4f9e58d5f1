package gateway

import (
	"encoding/json"
	"testing"
)

// FuzzInspectChunk: whatever an upstream sends as a chunk, inspecting it never panics;
// what it passes on is valid JSON, and a dropped usage never reaches the client.
func FuzzInspectChunk(f *testing.F) {
	for _, s := range []string{
		`{"choices":[],"usage":{"prompt_tokens":1,"completion_tokens":2,"total_tokens":3}}`,
		`{"choices":[{"delta":{"content":"x"}}],"usage":null}`,
		`{"choices":[{"delta":{}}]}`, `not json`, `{"usage":"x"}`, `{"usage":{"prompt_tokens":"x"}}`,
	} {
		f.Add([]byte(s), true)
	}
	f.Fuzz(func(t *testing.T, chunk []byte, drop bool) {
		out, usage, err := inspectChunk(chunk, drop)
		if err != nil {
			return
		}
		if out == nil {
			if usage == nil {
				t.Fatalf("chunk %q dropped without usage", chunk)
			}
			return
		}
		if !json.Valid(out) {
			t.Fatalf("passed on invalid JSON %q from %q", out, chunk)
		}
		if drop {
			var m map[string]json.RawMessage
			if json.Unmarshal(out, &m) == nil {
				if _, ok := m["usage"]; ok {
					t.Fatalf("usage kept in %q", out)
				}
			}
		}
	})
}
