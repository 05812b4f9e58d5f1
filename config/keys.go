package config

import (
	"fmt"

	"github.com/maskgate/maskgate/tenant"
)

// HashKeyHint is how the operator makes a key_hash, for messages.
const HashKeyHint = "printf %s \"$KEY\" | gateway -hash-key"

// validateKeys checks auth and keys: names, exactly one source per key, hashes well
// formed and unique, allowed backends configured, isolated keys on backends that can
// salt their cache.
func (c *Config) validateKeys(file string) error {
	bad := func(key, format string, args ...any) error {
		return &Error{File: file, Line: c.line(key), Key: key, Msg: fmt.Sprintf(format, args...)}
	}
	switch c.Auth {
	case "", AuthKeys:
		if c.Auth == AuthKeys && len(c.Keys) == 0 {
			return bad("auth", "auth: keys needs at least one entry under keys:")
		}
	case AuthNone:
		if len(c.Keys) > 0 {
			return bad("auth", "auth: none serves without keys, yet keys: lists %d; remove one or the other", len(c.Keys))
		}
	default:
		return bad("auth", "unknown auth %q (keys, or none to serve without keys on purpose)", c.Auth)
	}
	kinds := map[string]string{}
	for _, b := range c.Backends {
		kinds[b.Name] = b.Kind
	}
	names := map[string]int{}
	hashes := map[tenant.Hash]int{}
	for i, k := range c.Keys {
		key := fmt.Sprintf("keys[%d]", i)
		if k.Name == "" {
			return bad(key+".name", "required: the identity this key stands for (labels its metrics, keys its threads)")
		}
		if j, dup := names[k.Name]; dup {
			return bad(key+".name", "duplicate key name %q (also keys[%d])", k.Name, j)
		}
		names[k.Name] = i
		switch {
		case k.KeyHash != "" && k.KeyEnv != "":
			return bad(key, "set key_hash or key_env, not both")
		case k.KeyHash == "" && k.KeyEnv == "":
			return bad(key+".key_hash", "required: the key's hash (%s), or key_env naming a variable that holds the key", HashKeyHint)
		case k.KeyHash != "":
			// Never echo the value: if it is not a hash, it may be the key itself.
			h, err := tenant.ParseHash(k.KeyHash)
			if err != nil {
				return bad(key+".key_hash", "not a key hash: write \"sha256:\" and 64 hex digits, as %s prints; never the key itself", HashKeyHint)
			}
			if j, dup := hashes[h]; dup {
				return bad(key+".key_hash", "the same key as keys[%d]: give each identity its own key", j)
			}
			hashes[h] = i
		}
		for j, m := range k.Models {
			if m == "" {
				return bad(fmt.Sprintf("%s.models[%d]", key, j), "empty model name")
			}
		}
		for j, b := range k.Backends {
			if _, ok := kinds[b]; !ok {
				return bad(fmt.Sprintf("%s.backends[%d]", key, j), "no backend is named %q", b)
			}
		}
		if k.IsolateCache {
			reach := k.Backends
			if len(reach) == 0 {
				for _, b := range c.Backends {
					reach = append(reach, b.Name)
				}
			}
			for _, b := range reach {
				if kinds[b] != "vllm" {
					return bad(key+".isolate_cache", "backend %q (kind %s) cannot keep one identity's prefix cache from another's; only vllm takes a cache_salt: list the vllm backends under %s.backends", b, kinds[b], key)
				}
			}
		}
		l := k.Limits
		for _, f := range []struct {
			name string
			v    int
		}{{"requests_per_minute", l.RequestsPerMinute}, {"tokens_per_minute", l.TokensPerMinute}, {"max_concurrent", l.MaxConcurrent}} {
			if f.v < 0 {
				return bad(key+".limits."+f.name, "must be positive, or 0 for no limit")
			}
		}
	}
	return nil
}

// Anonymous reports whether clients are not told apart by keys.
func (c *Config) Anonymous() bool { return len(c.Keys) == 0 }
