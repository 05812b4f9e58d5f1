package backends

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/maskgate/maskgate/backends/oai"
)

func intp(n int) *int { return &n }

var dynamoHints = NVExt{SessionControl: true, SessionAction: "bind", SessionTimeout: 600, Priority: intp(5), StrictPriority: intp(0), SpeculativePrefill: true}

// TestNVExt_MergesIntoTheClientsOwn: the members go into nvext byte for byte as
// rendered; a client's nvext keeps every member of its own and every value it set wins;
// a null nvext is replaced; one that is not an object is left for the upstream to
// refuse; a request without a conversation gets no session_control.
func TestNVExt_MergesIntoTheClientsOwn(t *testing.T) {
	const ours = `{"agent_hints":{"priority":5,"strict_priority":0,"speculative_prefill":true},"session_control":{"session_id":"c0ffee","action":"bind","timeout":600}}`
	tests := []struct {
		name, session string
		n             NVExt
		body, want    string
	}{
		{"no nvext", "c0ffee", dynamoHints,
			`{"model":"m", "messages":[]}`,
			`{"model":"m", "messages":[],"nvext":` + ours + `}`},
		{"null nvext", "c0ffee", dynamoHints,
			`{"nvext":null,"model":"m"}`,
			`{"nvext":` + ours + `,"model":"m"}`},
		{"the client's members kept, its values win", "c0ffee", dynamoHints,
			`{"model":"m","nvext":{"extra_fields":["worker_id"],"agent_hints":{"priority":1,"osl":64}}}`,
			`{"model":"m","nvext":{"extra_fields":["worker_id"],"agent_hints":{"priority":1,"osl":64,"strict_priority":0,"speculative_prefill":true},"session_control":{"session_id":"c0ffee","action":"bind","timeout":600}}}`},
		{"the client's session_control wins", "c0ffee", dynamoHints,
			`{"nvext":{"session_control":{"session_id":"mine"}}}`,
			`{"nvext":{"session_control":{"session_id":"mine"},"agent_hints":{"priority":5,"strict_priority":0,"speculative_prefill":true}}}`},
		{"no conversation, no session_control", "", dynamoHints,
			`{"model":"m"}`,
			`{"model":"m","nvext":{"agent_hints":{"priority":5,"strict_priority":0,"speculative_prefill":true}}}`},
		{"session only, no action or timeout", "c0ffee", NVExt{SessionControl: true},
			`{}`,
			`{"nvext":{"session_control":{"session_id":"c0ffee"}}}`},
		{"nvext not an object", "c0ffee", dynamoHints,
			`{"nvext":[1]}`, `{"nvext":[1]}`},
		{"agent_hints not an object", "c0ffee", dynamoHints,
			`{"nvext":{"agent_hints":"fast"}}`, `{"nvext":{"agent_hints":"fast"}}`},
		{"nothing configured", "c0ffee", NVExt{},
			`{"nvext":{"x":1} }`, `{"nvext":{"x":1} }`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.n.Apply([]byte(tt.body), tt.session)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.want {
				t.Errorf("Apply:\n got %s\nwant %s", got, tt.want)
			}
		})
	}
	if _, err := dynamoHints.Apply([]byte(`[1]`), "s"); err == nil {
		t.Error("Apply on a body that is not an object: no error")
	}
}

// FuzzNVExtApply: whatever a client sends, Apply never panics; a body that is not a
// JSON object is an error; on an object it returns valid JSON whose members other than
// nvext are the client's, whose nvext keeps every member the client set with its value
// (agent_hints' too) and adds ours where the client set none; a body whose nvext or
// agent_hints is neither an object nor null comes back unchanged.
func FuzzNVExtApply(f *testing.F) {
	for _, s := range []string{`{}`, `{"nvext":null}`, `{"nvext":{"agent_hints":{"priority":1}}}`, `{"nvext":{"session_control":{"session_id":"x"}}}`,
		`{"nvext":3}`, `{"nvext":{"agent_hints":[]}}`, `{"a":1,"nvext":{},"nvext":{"b":2}}`, `{"nv\u0065xt":{"x":1}}`, `[]`, `{"model":"m","messages":[{"role":"user","content":"hi"}]}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		out, err := dynamoHints.Apply(body, "c0ffee")
		if _, perr := oai.ParseObject(body); perr != nil {
			if err == nil {
				t.Fatalf("Apply(%q): no error for a body that is not a JSON object", body)
			}
			return
		}
		if err != nil {
			t.Fatalf("Apply(%s): %v", body, err)
		}
		if !json.Valid(out) {
			t.Fatalf("Apply(%s) = %s: not JSON", body, out)
		}
		var in, got map[string]json.RawMessage
		if json.Unmarshal(body, &in) != nil || json.Unmarshal(out, &got) != nil {
			t.Fatalf("Apply(%s) = %s: not objects", body, out)
		}
		for k, v := range in {
			if k != "nvext" && !sameJSON(got[k], v) {
				t.Fatalf("member %s: %s became %s", k, v, got[k])
			}
		}
		clientExt, ok := objectMembers(in["nvext"])
		if !ok {
			if !bytes.Equal(out, body) {
				t.Fatalf("nvext %s is not an object, yet the body changed: %s", in["nvext"], out)
			}
			return
		}
		clientHints, ok := objectMembers(clientExt["agent_hints"])
		if !ok {
			if !bytes.Equal(out, body) {
				t.Fatalf("agent_hints %s is not an object, yet the body changed: %s", clientExt["agent_hints"], out)
			}
			return
		}
		ext, _ := objectMembers(got["nvext"])
		for k, v := range clientExt {
			if k != "agent_hints" && !(k == "session_control" && isNull(v)) && !sameJSON(ext[k], v) {
				t.Fatalf("the client's nvext.%s %s became %s", k, v, ext[k])
			}
		}
		hints, _ := objectMembers(ext["agent_hints"])
		for k, v := range clientHints {
			if !sameJSON(hints[k], v) {
				t.Fatalf("the client's agent_hints.%s %s became %s", k, v, hints[k])
			}
		}
		for _, k := range []string{"priority", "strict_priority", "speculative_prefill"} {
			if hints[k] == nil {
				t.Fatalf("Apply(%s) = %s: agent_hints.%s missing", body, out, k)
			}
		}
		if sc := clientExt["session_control"]; sc == nil || isNull(sc) {
			var got struct {
				SessionID string `json:"session_id"`
			}
			if json.Unmarshal(ext["session_control"], &got) != nil || got.SessionID != "c0ffee" {
				t.Fatalf("Apply(%s) = %s: no session_control with the session", body, out)
			}
		}
	})
}

// objectMembers decodes raw as an object's members: absent or null is an empty object;
// ok is false for anything else.
func objectMembers(raw json.RawMessage) (map[string]json.RawMessage, bool) {
	m := map[string]json.RawMessage{}
	if raw == nil || isNull(raw) {
		return m, true
	}
	if bytes.TrimSpace(raw)[0] != '{' || json.Unmarshal(raw, &m) != nil {
		return nil, false
	}
	return m, true
}

func isNull(raw json.RawMessage) bool { return bytes.Equal(bytes.TrimSpace(raw), []byte("null")) }

func sameJSON(a, b json.RawMessage) bool {
	var ca, cb bytes.Buffer
	return json.Compact(&ca, a) == nil && json.Compact(&cb, b) == nil && bytes.Equal(ca.Bytes(), cb.Bytes())
}
