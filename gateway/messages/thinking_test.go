package messages

import "testing"

func TestReasoningEffort(t *testing.T) {
	cases := map[string]string{
		``:                                "",
		`"thinking":{"type":"disabled"},`: "none",
		`"thinking":{"type":"enabled","budget_tokens":1024},`:  "low",
		`"thinking":{"type":"enabled","budget_tokens":2048},`:  "medium",
		`"thinking":{"type":"enabled","budget_tokens":31999},`: "high",
		`"thinking":{"type":"adaptive"},`:                      "",
		`"thinking":null,`:                                     "",
	}
	for member, want := range cases {
		body := `{"model":"m","max_tokens":8,` + member + `"messages":[{"role":"user","content":"hi"}]}`
		r, err := Decode([]byte(body), Options{})
		if err != nil {
			t.Fatalf("%s: %v", body, err)
		}
		if got := r.ReasoningEffort(); got != want {
			t.Errorf("%s: ReasoningEffort() = %q, want %q", member, got, want)
		}
	}
}
