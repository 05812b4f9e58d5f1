package backends_test

import (
	"strings"
	"testing"

	"github.com/maskgate/maskgate/backends"
)

func TestRedact_KeyShapedThingsAndConfiguredValues(t *testing.T) {
	tests := []struct{ in, want string }{
		{"Incorrect API key provided: sk-proj-AbC123xyz789QQ. See docs.", "Incorrect API key provided: [redacted]. See docs."},
		{"bad key sk-ant-api03-Zz9_yy-XX", "bad key [redacted]"},
		{"header was Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.payload.sig", "header was Authorization: Bearer [redacted]"},
		{`{"api_key": "abcdef123456"}`, `{"api_key": "[redacted]"}`},
		{"token=0123456789abcdef&x=1", "token=[redacted]&x=1"},
		{"google AIzaSyA1234567890abcdefghijkl", "google [redacted]"},
		{"model 'gpt-4o' not found; tokens: 12", "model 'gpt-4o' not found; tokens: 12"},
		{"context length 4096 exceeded by 100 tokens", "context length 4096 exceeded by 100 tokens"},
	}
	for _, tt := range tests {
		if got := backends.Redact(tt.in); got != tt.want {
			t.Errorf("Redact(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
	if got := backends.Redact("the key hunter2hunter2 was refused", "hunter2hunter2"); got != "the key [redacted] was refused" {
		t.Errorf("configured value: %q", got)
	}
}

// FuzzRedact: a configured secret never survives, whatever surrounds it (secrets that
// the marker itself could spell are left out), and Redact never panics.
func FuzzRedact(f *testing.F) {
	f.Add("Incorrect API key provided: sk-abcdefgh12345678", "sk-abcdefgh12345678")
	f.Add("token=mysecretvalue;", "mysecretvalue")
	f.Add("Bearer abcdefghij and abcdefghij again", "abcdefghij")
	f.Fuzz(func(t *testing.T, msg, secret string) {
		out := backends.Redact(msg, secret)
		if len(secret) < 4 || strings.ContainsAny(secret, "[]") || strings.Contains("[redacted]", secret) {
			return
		}
		if strings.Contains(out, secret) {
			t.Fatalf("Redact(%q, %q) = %q keeps the secret", msg, secret, out)
		}
	})
}
