package config

import (
	"slices"
	"testing"
)

// doors.history_bytes and doors.beta_flags are read as written; unset, beta_flags is nil
// (the gateway's default list) and [] is an empty list (no flag passes).
func TestParse_DoorsHistoryAndBetaFlags(t *testing.T) {
	const be = "backends: [{name: a, kind: openai, url: 'http://x/v1', models: ['*']}]\n"
	cfg, err := Parse("g.yaml", []byte(be+"doors:\n  history_bytes: 8MiB\n  beta_flags: [responses=experimental, prompt-caching-2024-07-31]\n"))
	if err != nil {
		t.Fatal(err)
	}
	if d := cfg.Doors; d.HistoryBytes != 8<<20 || !slices.Equal(d.BetaFlags, []string{"responses=experimental", "prompt-caching-2024-07-31"}) {
		t.Errorf("doors %+v", d)
	}
	for yaml, wantNil := range map[string]bool{"": true, "doors:\n  beta_flags: []\n": false} {
		cfg, err := Parse("g.yaml", []byte(be+yaml))
		if err != nil {
			t.Fatal(err)
		}
		if (cfg.Doors.BetaFlags == nil) != wantNil || len(cfg.Doors.BetaFlags) != 0 {
			t.Errorf("%q: beta_flags %#v, want nil %v", yaml, cfg.Doors.BetaFlags, wantNil)
		}
	}
}
