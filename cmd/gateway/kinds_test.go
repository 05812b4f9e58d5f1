package main

import (
	"testing"

	"github.com/maskgate/maskgate/backends"
	"github.com/maskgate/maskgate/config"
)

// TestNewBackend_EveryKindAndWhetherItConstrains: each configured kind builds, and the
// gateway's strategy follows from whether it constrains decoding (mask) or not.
func TestNewBackend_EveryKindAndWhetherItConstrains(t *testing.T) {
	cases := []struct {
		kind, url  string
		constrains bool
	}{
		{"openai", "https://api.openai.com/v1", true}, // allowed_tools
		{"vllm", "http://127.0.0.1:8000/v1", true},    // structural tag
		{"sglang", "http://127.0.0.1:30000/v1", true}, // structural tag in response_format
		{"llamacpp", "http://127.0.0.1:8080", true},   // GBNF
		{"ollama", "http://127.0.0.1:11434", false},   // format schemas only for forced calls
		{"anthropic", "https://api.anthropic.com", false},
	}
	for _, c := range cases {
		t.Run(c.kind, func(t *testing.T) {
			be, err := newBackend(config.Backend{Name: c.kind, Kind: c.kind, URL: c.url}, "key", nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			tc, ok := be.(backends.ToolConstrainer)
			if got := ok && tc.ConstrainsTools(); got != c.constrains {
				t.Errorf("%s constrains = %v, want %v", c.kind, got, c.constrains)
			}
		})
	}
}
