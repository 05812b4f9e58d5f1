package main

import (
	"bytes"
	"context"
	"io"
	"maps"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/maskgate/maskgate/config"
	"github.com/maskgate/maskgate/tenant"
)

func writeConfig(t *testing.T, yaml string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "gw.yaml")
	if err := os.WriteFile(path, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

const oneBackend = "backends:\n  - {name: o, kind: openai, url: 'http://127.0.0.1:1/v1', models: [m]}\n"

// Probe: the Docker image listened on 0.0.0.0 without any client credential and
// served anyone. Now such a start is refused, before anything is bound.
func TestRun_RefusesToServeWithoutKeysBeyondLoopback(t *testing.T) {
	path := writeConfig(t, oneBackend)
	for _, addr := range []string{"0.0.0.0:4000", ":4000", "[::]:4000", "192.0.2.1:4000"} {
		var stderr bytes.Buffer
		if code := run(context.Background(), []string{"-config", path, "-listen", addr}, func(string) string { return "" }, &stderr); code != 2 {
			t.Errorf("-listen %s: exit %d, want 2\n%s", addr, code, stderr.String())
		}
		for _, want := range []string{"listen " + addr, "no client keys are configured", "add keys:", "auth: none"} {
			if !strings.Contains(stderr.String(), want) {
				t.Errorf("-listen %s: stderr %q does not say %q", addr, stderr.String(), want)
			}
		}
	}
}

func TestCheckExposure(t *testing.T) {
	anon := &config.Config{}
	none := &config.Config{Auth: config.AuthNone}
	keyed := &config.Config{Keys: []config.Key{{Name: "a", KeyEnv: "K"}}}
	for _, tt := range []struct {
		cfg    *config.Config
		listen string
		ok     bool
	}{
		{anon, "127.0.0.1:4000", true},
		{anon, "127.8.9.10:4000", true},
		{anon, "[::1]:4000", true},
		{anon, "localhost:4000", true},
		{anon, "0.0.0.0:4000", false},
		{anon, ":4000", false},
		{anon, "[::]:4000", false},
		{anon, "10.1.2.3:4000", false},
		{anon, "not-an-address", false},
		{none, "0.0.0.0:4000", true},
		{keyed, "0.0.0.0:4000", true},
	} {
		err := checkExposure(tt.cfg, tt.listen)
		if (err == nil) != tt.ok {
			t.Errorf("auth %q, %d keys, listen %s: err %v, want ok=%v", tt.cfg.Auth, len(tt.cfg.Keys), tt.listen, err, tt.ok)
		}
	}
}

func TestRun_KeysFromTheEnvironmentMustBeSetLongAndNotTheAdminKey(t *testing.T) {
	path := writeConfig(t, oneBackend+"admin_key_env: ADM\nkeys:\n  - {name: alice, key_env: ALICE}\n")
	for _, tt := range []struct {
		name string
		env  map[string]string
		want string
	}{
		{"unset", map[string]string{"ADM": "admin-key-0123456789"}, "keys[0] (alice): environment variable ALICE is empty"},
		{"short", map[string]string{"ADM": "admin-key-0123456789", "ALICE": "hunter2"}, "the key in ALICE has 7 characters; use at least 16"},
		{"admin", map[string]string{"ADM": "admin-key-0123456789", "ALICE": "admin-key-0123456789"}, "keys[0] (alice) is the admin key"},
		// The admin key was taken at any length, shorter than any client key.
		{"admin short", map[string]string{"ADM": "adm1", "ALICE": "alice-key-0123456789"}, "admin_key_env: the key in ADM has 4 characters; use at least 16"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var stderr bytes.Buffer
			code := run(context.Background(), []string{"-config", path}, func(k string) string { return tt.env[k] }, &stderr)
			if code != 2 || !strings.Contains(stderr.String(), tt.want) {
				t.Errorf("exit %d, stderr %q; want 2 and %q", code, stderr.String(), tt.want)
			}
			for _, v := range tt.env {
				if strings.Contains(stderr.String(), v) {
					t.Errorf("stderr shows a key: %q", stderr.String())
				}
			}
		})
	}
}

func TestHashKey_PrintsTheConfigLineForTheKeyOnStdin(t *testing.T) {
	const key = "k-0123456789abcdef"
	for _, in := range []string{key, key + "\n", key + "\r\n"} {
		var out, stderr bytes.Buffer
		if code := hashKey(strings.NewReader(in), &out, &stderr); code != 0 {
			t.Fatalf("exit %d: %s", code, stderr.String())
		}
		if got, want := out.String(), tenant.HashKey(key)+"\n"; got != want {
			t.Errorf("stdin %q: printed %q, want %q", in, got, want)
		}
	}
	var out, stderr bytes.Buffer
	if code := hashKey(strings.NewReader("short\n"), &out, &stderr); code != 2 || out.Len() != 0 {
		t.Errorf("a short key: exit %d, printed %q", code, out.String())
	}
	if code := run(context.Background(), []string{"-hash-key", "-listen", "x"}, nil, &stderr); code != 2 {
		t.Errorf("-hash-key with other flags: exit %d", code)
	}
}

// A gateway with keys may listen on any address; here loopback, with a key from a
// hash and one from the environment, both accepted, and a request without one refused.
func TestRun_ServesWithKeys(t *testing.T) {
	const alice, bob = "alice-key-0123456789", "bob-key-0123456789ab"
	path := writeConfig(t, oneBackend+"keys:\n  - {name: alice, key_hash: '"+tenant.HashKey(alice)+"'}\n  - {name: bob, key_env: BOB}\n")
	addr := freeAddr(t)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int, 1)
	var stderr syncBuffer
	go func() {
		done <- run(ctx, []string{"-config", path, "-listen", addr}, func(k string) string { return map[string]string{"BOB": bob}[k] }, &stderr)
	}()
	defer func() {
		cancel()
		if code := <-done; code != 0 {
			t.Errorf("exit %d\n%s", code, stderr.String())
		}
	}()
	get := func(key string) int {
		req, _ := http.NewRequest(http.MethodGet, "http://"+addr+"/v1/models", nil)
		if key != "" {
			req.Header.Set("Authorization", "Bearer "+key)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return 0
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode
	}
	deadline := time.Now().Add(5 * time.Second)
	for get(alice) != 200 {
		if time.Now().After(deadline) {
			t.Fatalf("gateway did not serve alice\n%s", stderr.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	if code := get(bob); code != 200 {
		t.Errorf("bob: %d", code)
	}
	if code := get(""); code != 401 {
		t.Errorf("no key: %d", code)
	}
	if !strings.Contains(stderr.String(), "client keys required") || strings.Contains(stderr.String(), bob) {
		t.Errorf("start log: %s", stderr.String())
	}
}

// freeAddr is a loopback address nothing listens on, for run to take.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// The Docker example listens on 0.0.0.0 with a key from the environment: without the
// key it stops at start, naming the variable, before anything is bound.
func TestRun_TheDockerExampleNeedsItsKey(t *testing.T) {
	var stderr bytes.Buffer
	code := run(context.Background(), []string{"-config", "../../examples/docker.yaml", "-listen", "0.0.0.0:4000"}, func(string) string { return "" }, &stderr)
	if code != 2 || !strings.Contains(stderr.String(), "MASKGATE_KEY_TEAM is empty") {
		t.Errorf("exit %d: %s", code, stderr.String())
	}
}

// TestSecretValues_NamesEverySecret: the log redactor is given the value of every
// secret the configuration names; the MCP servers' header tokens and the Redis password
// were missing (and a key's MCP token is one).
func TestSecretValues_NamesEverySecret(t *testing.T) {
	cfg := &config.Config{AdminKeyEnv: "ADM", ThreadSaltEnv: "SALT",
		Backends:   []config.Backend{{Name: "b", APIKeyEnv: "UP"}},
		Keys:       []config.Key{{Name: "alice", KeyEnv: "ALICE", MCPTokenEnv: "ALICE_MCP"}},
		MCPServers: []config.MCPServer{{Name: "gh", URL: "https://mcp.example", HeadersEnv: map[string]string{"Authorization": "GH_TOKEN", "X-Team": "TEAM_TOKEN"}}},
		State:      config.State{Redis: config.Redis{URL: "redis://r:6379", PasswordEnv: "REDIS_PW"}},
	}
	cfg.Search.Embeddings.APIKeyEnv = "EMB"
	env := map[string]string{"ADM": "v-adm", "SALT": "v-salt", "UP": "v-up", "ALICE": "v-alice", "GH_TOKEN": "v-gh", "TEAM_TOKEN": "v-team", "REDIS_PW": "v-redis", "EMB": "v-emb", "ALICE_MCP": "v-alice-mcp"}
	got := secretValues(cfg, func(k string) string { return env[k] })
	slices.Sort(got)
	want := slices.Sorted(maps.Values(env))
	if !slices.Equal(got, want) {
		t.Errorf("secret values %v, want %v", got, want)
	}
}
