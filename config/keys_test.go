package config

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/maskgate/maskgate/tenant"
)

const vllmBackend = "backends:\n  - {name: gpu, kind: vllm, url: 'http://x/v1', models: [m]}\n  - {name: cpu, kind: llamacpp, url: 'http://y', models: ['*']}\n"

func TestParse_KeyErrorsNameFileLineAndKey(t *testing.T) {
	hash := tenant.HashKey("a-long-random-client-key")
	for _, tt := range []struct{ name, yaml, want string }{
		{"plain key in key_hash", vllmBackend + "keys:\n  - name: a\n    key_hash: sk-live-123\n",
			`g.yaml:6: keys[0].key_hash: not a key hash: write "sha256:" and 64 hex digits, as printf %s "$KEY" | gateway -hash-key prints; never the key itself`},
		{"no key", vllmBackend + "keys:\n  - name: a\n    models: [m]\n",
			"g.yaml:5: keys[0].key_hash: required: the key's hash"},
		{"both sources", vllmBackend + "keys:\n  - {name: a, key_hash: '" + hash + "', key_env: K}\n",
			"g.yaml:5: keys[0]: set key_hash or key_env, not both"},
		{"no name", vllmBackend + "keys:\n  - {key_env: K}\n", "g.yaml:5: keys[0].name: required"},
		{"duplicate name", vllmBackend + "keys:\n  - {name: a, key_env: K}\n  - {name: a, key_env: L}\n",
			`g.yaml:6: keys[1].name: duplicate key name "a" (also keys[0])`},
		{"one key twice", vllmBackend + "keys:\n  - {name: a, key_hash: '" + hash + "'}\n  - {name: b, key_hash: '" + hash + "'}\n",
			"g.yaml:6: keys[1].key_hash: the same key as keys[0]"},
		{"unknown backend", vllmBackend + "keys:\n  - name: a\n    key_env: K\n    backends: [gpu, tpu]\n",
			`g.yaml:7: keys[0].backends[1]: no backend is named "tpu"`},
		{"isolate_cache on llamacpp", vllmBackend + "keys:\n  - name: a\n    key_env: K\n    isolate_cache: true\n",
			`g.yaml:7: keys[0].isolate_cache: backend "cpu" (kind llamacpp) cannot keep one identity's prefix cache from another's`},
		{"negative limit", vllmBackend + "keys:\n  - name: a\n    key_env: K\n    limits: {requests_per_minute: -5}\n",
			"g.yaml:7: keys[0].limits.requests_per_minute: must be positive"},
		{"unknown limit", vllmBackend + "keys:\n  - name: a\n    key_env: K\n    limits: {rpm: 5}\n",
			"g.yaml:7: keys[0].limits.rpm: unknown key (known keys here: requests_per_minute, tokens_per_minute, max_concurrent)"},
		{"auth none with keys", "auth: none\nkeys:\n  - {name: a, key_env: K}\n",
			"g.yaml:1: auth: auth: none serves without keys, yet keys: lists 1"},
		{"auth keys without keys", "auth: keys\n", "g.yaml:1: auth: auth: keys needs at least one entry under keys:"},
		{"unknown auth", "auth: basic\n", `g.yaml:1: auth: unknown auth "basic" (keys, or none`},
		{"negative max_in_flight", "backends:\n  - {name: a, kind: vllm, url: 'http://x/v1', models: [m], max_in_flight: -1}\n",
			"g.yaml:2: backends[0].max_in_flight: must be positive"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse("g.yaml", []byte(tt.yaml))
			if err == nil {
				t.Fatal("no error")
			}
			if got := err.Error(); !strings.HasPrefix(got, tt.want) {
				t.Errorf("error:\n got %s\nwant %s", got, tt.want)
			}
			if strings.Contains(err.Error(), "sk-live-123") {
				t.Errorf("the error echoes what may be a plain key: %s", err)
			}
		})
	}
}

func TestParse_Keys(t *testing.T) {
	hash := tenant.HashKey("a-long-random-client-key")
	cfg, err := Parse("g.yaml", []byte(vllmBackend+`thread_salt_env: SALT
search: {fingerprint_threads: true}
profiles: [{name: coding}]
keys:
  - name: alice
    key_hash: "`+hash+`"
    profile: coding
    models: [m]
    backends: [gpu]
    isolate_cache: true
    limits: {requests_per_minute: 60, tokens_per_minute: 100000, max_concurrent: 4}
  - name: bob
    key_env: BOB_KEY
`))
	if err != nil {
		t.Fatal(err)
	}
	want := []Key{
		{Name: "alice", KeyHash: hash, Profile: "coding", Models: []string{"m"}, Backends: []string{"gpu"}, IsolateCache: true,
			Limits: KeyLimits{RequestsPerMinute: 60, TokensPerMinute: 100000, MaxConcurrent: 4}},
		{Name: "bob", KeyEnv: "BOB_KEY"},
	}
	if diff := cmp.Diff(want, cfg.Keys); diff != "" {
		t.Errorf("keys (-want +got):\n%s", diff)
	}
	if cfg.ThreadSaltEnv != "SALT" || !cfg.Search.FingerprintThreads || cfg.Anonymous() {
		t.Errorf("thread_salt_env %q, fingerprint_threads %v, anonymous %v", cfg.ThreadSaltEnv, cfg.Search.FingerprintThreads, cfg.Anonymous())
	}
}

func TestParse_AdmissionDefaults(t *testing.T) {
	cfg, err := Parse("g.yaml", []byte("backends:\n  - {name: a, kind: vllm, url: 'http://x/v1', models: [m], max_in_flight: 8, queue_timeout: 2s}\n  - {name: b, kind: vllm, url: 'http://y/v1', models: [n]}\n"))
	if err != nil {
		t.Fatal(err)
	}
	a, b := cfg.Backends[0], cfg.Backends[1]
	if a.MaxInFlight != 8 || a.MaxQueue != DefaultMaxQueue || time.Duration(a.QueueTimeout) != 2*time.Second {
		t.Errorf("a: max_in_flight %d, max_queue %d, queue_timeout %v", a.MaxInFlight, a.MaxQueue, time.Duration(a.QueueTimeout))
	}
	if b.MaxInFlight != DefaultMaxInFlight || time.Duration(b.QueueTimeout) != DefaultQueueTimeout {
		t.Errorf("b: max_in_flight %d, queue_timeout %v", b.MaxInFlight, time.Duration(b.QueueTimeout))
	}
	if !cfg.Anonymous() || cfg.Auth != "" {
		t.Errorf("no keys: anonymous %v, auth %q", cfg.Anonymous(), cfg.Auth)
	}
}
