package config

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const routedBackend = "backends:\n  - name: a\n    kind: vllm\n    url: http://x/v1\n    models: [m]\n    routing:\n"

// TestParse_RouterHints: llm-d's session token and Dynamo's nvext members are read into
// the backend's routing, each field as written.
func TestParse_RouterHints(t *testing.T) {
	c, err := Parse("g.yaml", []byte(routedBackend+
		"      hint_value: caller\n      session_token: x-session-token\n      nvext:\n        session_control: true\n"+
		"        session_action: bind\n        session_timeout: 600\n        priority: -3\n        strict_priority: 2\n        speculative_prefill: true\n"))
	if err != nil {
		t.Fatal(err)
	}
	want := Routing{HintValue: "caller", SessionToken: "x-session-token", NVExt: NVExt{SessionControl: true, SessionAction: "bind",
		SessionTimeout: 600, Priority: ptr(-3), StrictPriority: ptr(2), SpeculativePrefill: true}}
	if d := cmp.Diff(want, c.Backends[0].Routing); d != "" {
		t.Errorf("routing (-want +got):\n%s", d)
	}
	// priority 0 is a priority, not "none".
	c, err = Parse("g.yaml", []byte(routedBackend+"      nvext:\n        priority: 0\n"))
	if err != nil {
		t.Fatal(err)
	}
	if p := c.Backends[0].Routing.NVExt.Priority; p == nil || *p != 0 {
		t.Errorf("priority 0 read as %v, want a pointer to 0", p)
	}
}

func TestParse_RouterHintErrors(t *testing.T) {
	tests := []struct {
		name, yaml, want string
	}{
		{"session token not a token", routedBackend + "      session_token: x session\n",
			`g.yaml:7: backends[0].routing.session_token: "x session" is not a header name`},
		{"session token on a header the request needs", routedBackend + "      session_token: Content-Type\n",
			"g.yaml:7: backends[0].routing.session_token: Content-Type is a header the request itself needs"},
		{"session token and hint in one header", routedBackend + "      hint_header: x-session-token\n      session_token: X-Session-Token\n",
			"g.yaml:8: backends[0].routing.session_token: X-Session-Token is hint_header too"},
		{"session token on the embedded engine", "backends:\n  - name: a\n    kind: embedded\n    model: m.gguf\n    models: [m]\n    routing:\n      session_token: x-session-token\n",
			"g.yaml:7: backends[0].routing.session_token: kind embedded runs in this process"},
		{"nvext on the embedded engine", "backends:\n  - name: a\n    kind: embedded\n    model: m.gguf\n    models: [m]\n    routing:\n      nvext:\n        priority: 1\n",
			"g.yaml:7: backends[0].routing.nvext: kind embedded runs in this process"},
		{"nvext on a translating backend", "backends:\n  - name: a\n    kind: llamacpp\n    url: http://x\n    models: [m]\n    routing:\n      nvext:\n        speculative_prefill: true\n",
			"g.yaml:7: backends[0].routing.nvext: kind llamacpp does not send the client's Chat Completions body"},
		{"session action without session control", routedBackend + "      nvext:\n        session_action: bind\n",
			"g.yaml:8: backends[0].routing.nvext.session_action: applies only with session_control: true"},
		{"session action open", routedBackend + "      nvext:\n        session_control: true\n        session_action: open\n",
			"g.yaml:9: backends[0].routing.nvext.session_action: must be bind (or left out)"},
		{"session timeout without session control", routedBackend + "      nvext:\n        session_timeout: 60\n",
			"g.yaml:8: backends[0].routing.nvext.session_timeout: applies only with session_control: true"},
		{"session timeout negative", routedBackend + "      nvext:\n        session_control: true\n        session_timeout: -1\n",
			"g.yaml:9: backends[0].routing.nvext.session_timeout: must be 1 to 31536000 seconds"},
		{"priority past 32 bits", routedBackend + "      nvext:\n        priority: 2147483648\n",
			"g.yaml:8: backends[0].routing.nvext.priority: must be a 32-bit signed integer"},
		{"strict priority negative", routedBackend + "      nvext:\n        strict_priority: -1\n",
			"g.yaml:8: backends[0].routing.nvext.strict_priority: must be 0 to 4294967295"},
		{"unknown nvext key", routedBackend + "      nvext:\n        osl: 10\n",
			"g.yaml:8: backends[0].routing.nvext.osl: unknown key (known keys here: session_control, session_action, session_timeout, priority, strict_priority, speculative_prefill)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse("g.yaml", []byte(tt.yaml))
			var ce *Error
			if !errors.As(err, &ce) {
				t.Fatalf("error %v (%T), want a *config.Error", err, err)
			}
			if got := err.Error(); !strings.HasPrefix(got, tt.want) {
				t.Errorf("error:\n got %s\nwant %s", got, tt.want)
			}
		})
	}
	// hint_value with only a session token or only session_control names where it goes.
	for _, y := range []string{routedBackend + "      hint_value: caller\n      session_token: x-session-token\n",
		routedBackend + "      hint_value: caller\n      nvext:\n        session_control: true\n"} {
		if _, err := Parse("g.yaml", []byte(y)); err != nil {
			t.Errorf("hint_value beside a session token or session_control: %v", err)
		}
	}
}
