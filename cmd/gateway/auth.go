package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"strings"

	"github.com/maskgate/maskgate/config"
	"github.com/maskgate/maskgate/tenant"
)

// minKeyLength is the shortest client key accepted from the environment: a key is a
// password nobody types, so there is no reason for it to be guessable.
const minKeyLength = 16

// buildKeys resolves the configured keys: hashes as written, or the keys in the named
// variables, hashed at once (the plain key is not kept). Nil without keys.
func buildKeys(cfg *config.Config, getenv func(string) string, adminKey string) (*tenant.Keyring, error) {
	if len(cfg.Keys) == 0 {
		return nil, nil
	}
	keys := make([]tenant.Key, len(cfg.Keys))
	for i, k := range cfg.Keys {
		var h tenant.Hash
		if k.KeyEnv != "" {
			v := getenv(k.KeyEnv)
			switch {
			case v == "":
				return nil, fmt.Errorf("keys[%d] (%s): environment variable %s is empty; export the client key in it", i, k.Name, k.KeyEnv)
			case len(v) < minKeyLength:
				return nil, fmt.Errorf("keys[%d] (%s): the key in %s has %d characters; use at least %d random ones (openssl rand -hex 32)", i, k.Name, k.KeyEnv, len(v), minKeyLength)
			}
			h = tenant.HashOf(v)
		} else {
			var err error
			if h, err = tenant.ParseHash(k.KeyHash); err != nil { // config checked it
				return nil, fmt.Errorf("keys[%d] (%s): %w", i, k.Name, err)
			}
		}
		if adminKey != "" && h == tenant.HashOf(adminKey) {
			return nil, fmt.Errorf("keys[%d] (%s) is the admin key; give clients keys of their own", i, k.Name)
		}
		mcpToken := ""
		if k.MCPTokenEnv != "" {
			if mcpToken = getenv(k.MCPTokenEnv); mcpToken == "" {
				return nil, fmt.Errorf("keys[%d] (%s): environment variable %s (mcp_token_env) is empty; export the key's token for forward_auth servers in it", i, k.Name, k.MCPTokenEnv)
			}
		}
		keys[i] = tenant.Key{Name: k.Name, Hash: h, Profile: k.Profile, Models: k.Models, Backends: k.Backends, MCPToken: mcpToken,
			IsolateCache: k.IsolateCache, Limits: tenant.Limits{
				RequestsPerMinute: k.Limits.RequestsPerMinute,
				TokensPerMinute:   k.Limits.TokensPerMinute,
				MaxConcurrent:     k.Limits.MaxConcurrent,
			}}
	}
	return tenant.NewKeyring(keys)
}

// errExposed is the refusal to serve without keys beyond loopback.
var errExposed = errors.New("no client keys are configured, so anyone who reaches this address would use the gateway and its upstream keys")

// checkExposure refuses to serve without keys on an address other hosts can reach,
// unless the config says auth: none. It runs before the listener binds, so a refused
// address is never open, even for a moment. A host name counts as loopback only if
// every address it resolves to is.
func checkExposure(cfg *config.Config, listen string) error {
	if !cfg.Anonymous() || cfg.Auth == config.AuthNone || loopbackOnly(listen) {
		return nil
	}
	return fmt.Errorf("listen %s: %w; add keys: to the config (%s), listen on 127.0.0.1, or set auth: none to serve without keys on purpose", listen, errExposed, config.HashKeyHint)
}

func loopbackOnly(listen string) bool {
	host, _, err := net.SplitHostPort(listen)
	if err != nil || host == "" {
		return false // ":4000" is every interface
	}
	if ip := net.ParseIP(host); ip != nil {
		return ip.IsLoopback()
	}
	ips, err := net.LookupIP(host)
	if err != nil || len(ips) == 0 {
		return false
	}
	for _, ip := range ips {
		if !ip.IsLoopback() {
			return false
		}
	}
	return true
}

// hashKey is -hash-key: it reads one key from in (a trailing newline is not part of
// it) and prints the line to put in a config's key_hash.
func hashKey(in io.Reader, out, stderr io.Writer) int {
	line, err := bufio.NewReader(io.LimitReader(in, 4096)).ReadString('\n')
	if err != nil && err != io.EOF {
		fmt.Fprintf(stderr, "gateway: -hash-key: %v\n", err)
		return 1
	}
	key := strings.TrimSuffix(strings.TrimSuffix(line, "\n"), "\r")
	if len(key) < minKeyLength {
		fmt.Fprintf(stderr, "gateway: -hash-key: the key on stdin has %d characters; use at least %d random ones (openssl rand -hex 32)\n", len(key), minKeyLength)
		return 2
	}
	fmt.Fprintln(out, tenant.HashKey(key))
	return 0
}

// logAuth says at start who may use the gateway.
func logAuth(log *slog.Logger, cfg *config.Config, keys *tenant.Keyring, addr net.Addr) {
	switch {
	case keys != nil:
		log.Info("client keys required", "keys", keys.Len())
	case cfg.Auth == config.AuthNone:
		log.Warn("auth: none: no client keys; anyone who reaches this address uses the gateway as one anonymous identity", "addr", addr.String())
	default:
		log.Info("no client keys configured: serving loopback only; every client is one anonymous identity", "addr", addr.String())
	}
}
