package oai

import (
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
