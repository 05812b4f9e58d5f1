package oai

import (
	"bytes"
	"encoding/json"
	"errors"
	"testing"
)

func TestParseEnvelope_ReadsModelStreamAndUsageOption(t *testing.T) {
	env, err := ParseEnvelope([]byte(`{"model":"m","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"x"}],"tools":[]}`))
	if err != nil {
		t.Fatal(err)
	}
	if env.Model != "m" || !env.Stream || !env.IncludeUsage || len(env.Messages) != 1 || string(env.Tools) != "[]" {
		t.Errorf("got %+v", env)
	}
}

// FuzzParseEnvelope: any input gives an envelope or a RequestError, never a panic, and
// an accepted request has a model and at least one message.
func FuzzParseEnvelope(f *testing.F) {
	for _, s := range []string{
		`{"model":"m","messages":[{"role":"user","content":"x"}]}`,
		`{"model":"m","stream":"x"}`, `[]`, ``, `{"model":1}`, `{"model":"m","messages":[1]}`,
		`{"model":"m","messages":[{"role":"user"}],"stream_options":{"include_usage":true},"tools":null}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		env, err := ParseEnvelope(body)
		if err != nil {
			var re *RequestError
			if !errors.As(err, &re) || re.Message == "" {
				t.Fatalf("error %T %v is not a RequestError with a message", err, err)
			}
			return
		}
		if env.Model == "" || len(env.Messages) == 0 {
			t.Fatalf("accepted %q without model or messages", body)
		}
	})
}

// memKnown remembers every value it is given, whatever its size.
type memKnown struct{ vals [][]byte }

func (m *memKnown) Match(b []byte) (int, int, bool) {
	for _, v := range m.vals {
		if bytes.HasPrefix(b, v) {
			var arr []json.RawMessage
			_ = json.Unmarshal(v, &arr)
			return len(v), len(arr), true
		}
	}
	return 0, 0, false
}

func (m *memKnown) Remember(v []byte, _ int) { m.vals = append(m.vals, bytes.Clone(v)) }

// FuzzParseEnvelopeKnown: a body parsed with known tools arrays gets the verdict, tools
// and count it gets without, the first time (when it is remembered) and the second (when
// its tools are compared, not scanned), even after another body's array was remembered.
func FuzzParseEnvelopeKnown(f *testing.F) {
	for _, s := range []string{
		`{"model":"m","messages":[],"tools":[{"a":1},{"b":[2]}]}`,
		`{"model":"m","messages":[],"tools":[{"a":1},{"b":[2]}],"x":tru}`,
		`{"model":"m","messages":[],"tools":[{"a":1}],"tools":[1,2,3]}`,
		`{"model":"m","tools":[]}`,
	} {
		f.Add([]byte(s), []byte(`{"model":"m","messages":[],"tools":[{"a":1}]}`))
	}
	f.Fuzz(func(t *testing.T, body, other []byte) {
		want, wantErr := ParseEnvelope(body)
		k := &memKnown{}
		_, _ = ParseEnvelopeKnown(other, k)
		for pass := range 2 {
			got, err := ParseEnvelopeKnown(body, k)
			if (err == nil) != (wantErr == nil) {
				t.Fatalf("pass %d: err %v, without known %v", pass, err, wantErr)
			}
			if err == nil && (!bytes.Equal(got.Tools, want.Tools) || got.ToolCount != want.ToolCount) {
				t.Fatalf("pass %d: tools %q (%d), without known %q (%d)", pass, got.Tools, got.ToolCount, want.Tools, want.ToolCount)
			}
		}
	})
}
