package gateway_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/maskgate/maskgate/backends/openaicompat"
	"github.com/maskgate/maskgate/gateway"
	"github.com/maskgate/maskgate/toolsearch/tokens"
)

// truncation "auto" drops the oldest input until the request fits a known context
// window, keeping the instructions and never splitting a call from its output;
// "disabled" (the default) leaves the budget guard's 400.
func TestTruncation_AutoDropsTheOldestToFit(t *testing.T) {
	counter, err := tokens.New(tokens.Options{})
	if err != nil {
		t.Fatal(err)
	}
	up := newUpstream(t, replyJSON(http.StatusOK, completionJSON))
	gw := gatewayFor(t, up, func(o *gateway.Options, _ *openaicompat.Options) {
		o.Tokens = counter
		o.Upstreams = []gateway.Upstream{{ContextWindow: 200}}
	})
	long := strings.Repeat("lorem ipsum ", 200) // about 400 tokens
	call1 := `{"type":"function_call","call_id":"call_1","name":"get_weather","arguments":"{}"}`
	tools := `"tools":[{"type":"function","name":"get_weather","parameters":{"type":"object","properties":{}}}]`
	roles := func() (out []string) {
		var b struct {
			Messages []struct {
				Role      string            `json:"role"`
				ToolCalls []json.RawMessage `json:"tool_calls"`
				Content   json.RawMessage   `json:"content"`
			} `json:"messages"`
		}
		if err := json.Unmarshal(up.lastBody(), &b); err != nil {
			t.Fatalf("upstream body %s: %v", up.lastBody(), err)
		}
		for _, m := range b.Messages {
			r := m.Role
			if len(m.ToolCalls) > 0 {
				r += "+calls"
			}
			if strings.Contains(string(m.Content), "lorem") {
				r += "(long)"
			}
			out = append(out, r)
		}
		return out
	}
	for _, tc := range []struct {
		name, input string
		want        string
	}{
		// The long first message goes; the call and its output stay together.
		{"oldest message", `[{"role":"user","content":"` + long + `"},` + call1 +
			`,{"type":"function_call_output","call_id":"call_1","output":"18C"},{"role":"user","content":"and now?"}]`,
			"system assistant+calls tool user"},
		// The long output goes with its call, and the user message before them.
		{"call with its output", `[{"role":"user","content":"weather?"},` + call1 +
			`,{"type":"function_call_output","call_id":"call_1","output":"` + long + `"},{"role":"user","content":"and now?"}]`,
			"system user"},
	} {
		body := `{"model":"m1","instructions":"Be brief.","truncation":"auto",` + tools + `,"input":` + tc.input + `}`
		status, h, out := call(t, gw.Server, "POST", "/v1/responses", "", body)
		if status != http.StatusOK {
			t.Fatalf("%s: status %d: %s", tc.name, status, out)
		}
		if got := strings.Join(roles(), " "); got != tc.want {
			t.Errorf("%s: the engine got %s, want %s", tc.name, got, tc.want)
		}
		if w := strings.Join(h.Values(gateway.HeaderWarning), "|"); !strings.Contains(w, "truncation: the ") {
			t.Errorf("%s: no warning said what was dropped: %q", tc.name, w)
		}
		if !strings.Contains(out, `"truncation":"auto"`) {
			t.Errorf("%s: the response does not echo truncation: %s", tc.name, out)
		}

		// Disabled, the same request is the budget guard's 400.
		n := len(up.bodies)
		body = strings.Replace(body, `"truncation":"auto"`, `"truncation":"disabled"`, 1)
		status, _, out = call(t, gw.Server, "POST", "/v1/responses", "", body)
		if status != http.StatusBadRequest || !strings.Contains(out, "context_length_exceeded") || len(up.bodies) != n {
			t.Errorf("%s, disabled: status %d, %s", tc.name, status, out)
		}
	}

	// Even the last turn alone does not fit: still the 400, nothing sent.
	n := len(up.bodies)
	status, _, out := call(t, gw.Server, "POST", "/v1/responses", "", `{"model":"m1","truncation":"auto","input":[{"role":"user","content":"hi"},{"role":"user","content":"`+long+`"}]}`)
	if status != http.StatusBadRequest || !strings.Contains(out, "context_length_exceeded") || len(up.bodies) != n {
		t.Errorf("too long a last turn: status %d, %s", status, out)
	}
	// An unknown value is a 400 naming truncation.
	status, _, out = call(t, gw.Server, "POST", "/v1/responses", "", `{"model":"m1","truncation":"sometimes","input":"hi"}`)
	if status != http.StatusBadRequest || !strings.Contains(out, `"param":"truncation"`) {
		t.Errorf("unknown truncation: status %d, %s", status, out)
	}
}
