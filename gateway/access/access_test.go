package access_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/maskgate/maskgate/gateway/access"
)

func TestPresentedKey_BearerOrXAPIKeyAndTheirProblems(t *testing.T) {
	for _, tc := range []struct {
		name          string
		auth, apiKey  string
		key, problemH string // problemH: a word the problem must hold ("" for none)
	}{
		{name: "bearer", auth: "Bearer sk-1", key: "sk-1"},
		{name: "scheme case", auth: "bearer  sk-1 ", key: "sk-1"},
		{name: "x-api-key", apiKey: " sk-2 ", key: "sk-2"},
		{name: "both the same", auth: "Bearer sk-3", apiKey: "sk-3", key: "sk-3"},
		{name: "both different", auth: "Bearer sk-3", apiKey: "sk-4", problemH: "two different keys"},
		{name: "basic", auth: "Basic dXNlcg==", problemH: "malformed Authorization"},
		{name: "empty bearer", auth: "Bearer ", problemH: "malformed Authorization"},
		{name: "none"},
	} {
		h := http.Header{}
		if tc.auth != "" {
			h.Set("Authorization", tc.auth)
		}
		if tc.apiKey != "" {
			h.Set("x-api-key", tc.apiKey)
		}
		key, problem := access.PresentedKey(h)
		if key != tc.key || (tc.problemH == "") != (problem == "") || !strings.Contains(problem, tc.problemH) {
			t.Errorf("%s: PresentedKey = %q, %q; want %q and a problem holding %q", tc.name, key, problem, tc.key, tc.problemH)
		}
	}
}

func TestRetryAfter_WholeSecondsRoundedUpAtLeastOne(t *testing.T) {
	for d, want := range map[time.Duration]string{0: "1", time.Millisecond: "1", time.Second: "1", 1500 * time.Millisecond: "2", time.Minute: "60"} {
		if got := access.RetryAfter(d); got != want {
			t.Errorf("RetryAfter(%v) = %q, want %q", d, got, want)
		}
	}
}

// FuzzPresentedKey: whatever the headers, a key and a problem never come together, and a
// key is never a header's text with its scheme or padding left on.
func FuzzPresentedKey(f *testing.F) {
	f.Add("Bearer sk-1", "")
	f.Add("", "sk-2")
	f.Add("Bearer a", "b")
	f.Add("bearer\t x", " x ")
	f.Fuzz(func(t *testing.T, auth, apiKey string) {
		h := http.Header{"Authorization": {auth}, "X-Api-Key": {apiKey}}
		key, problem := access.PresentedKey(h)
		if key != "" && problem != "" {
			t.Fatalf("key %q with problem %q", key, problem)
		}
		if key != strings.TrimSpace(key) || strings.HasPrefix(strings.ToLower(key), "bearer ") && key != strings.TrimSpace(apiKey) {
			t.Fatalf("key %q keeps padding or its scheme (auth %q, x-api-key %q)", key, auth, apiKey)
		}
	})
}
