package tenant

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// HashPrefix starts every key hash as the configuration writes it.
const HashPrefix = "sha256:"

// Hash is the SHA-256 of a client key.
type Hash [sha256.Size]byte

// HashKey hashes a key as the configuration stores it: "sha256:" and 64 hex digits.
// Keys are random strings (e.g. openssl rand -hex 32), so an unsalted hash of one is as
// hard to reverse as the key is to guess.
func HashKey(key string) string { return HashOf(key).String() }

// HashOf is the hash of key.
func HashOf(key string) Hash { return sha256.Sum256([]byte(key)) }

func (h Hash) String() string { return HashPrefix + hex.EncodeToString(h[:]) }

// ErrHashFormat is the error of ParseHash for anything but "sha256:" and 64 hex digits.
var ErrHashFormat = errors.New(`a key hash is "sha256:" followed by 64 hex digits`)

// ParseHash reads a hash written as HashKey writes it.
func ParseHash(s string) (Hash, error) {
	var h Hash
	hexPart, ok := strings.CutPrefix(s, HashPrefix)
	if !ok || len(hexPart) != 2*len(h) {
		return h, ErrHashFormat
	}
	if _, err := hex.Decode(h[:], []byte(hexPart)); err != nil {
		return h, ErrHashFormat
	}
	return h, nil
}

// Key is one client key as configured: the identity it stands for and what it may do.
type Key struct {
	// Name is the identity: it keys the caller's state, labels metrics and logs. Unique.
	Name string
	// Hash is the SHA-256 of the key itself.
	Hash Hash
	// Profile names the tool profile the key uses; empty: the default.
	Profile string
	// Profiles are the profiles the key may choose per request (X-Maskgate-Profile).
	Profiles []string
	// MCPToken is what an MCP server with forward_auth gets as the caller's bearer token
	// on this key's calls: a token of its own for those servers, never the key itself.
	// Empty: such calls carry none.
	MCPToken string
	// Models are the model names the key may ask for ("*": any). If empty, any.
	Models []string
	// Backends are the backend names its requests may be routed to. If empty, any.
	Backends []string
	// IsolateCache: the key's requests carry a cache salt of their own, so the engine's
	// prefix cache is never shared with another identity.
	IsolateCache bool
	// Limits bound its traffic; zero fields are unlimited.
	Limits Limits
}

// Limits bound one key's traffic. A zero field is no limit.
type Limits struct {
	// RequestsPerMinute refills one request every 60/N seconds, up to N at once.
	RequestsPerMinute int
	// TokensPerMinute is charged with each answer's prompt and completion tokens once
	// the answer is done; a key in debt is refused until the bucket refills above zero.
	TokensPerMinute int
	// MaxConcurrent caps the key's requests in flight, streamed or whole.
	MaxConcurrent int
}

// AllowsModel reports whether the key may ask for model.
func (k *Key) AllowsModel(model string) bool {
	return len(k.Models) == 0 || slices.Contains(k.Models, "*") || slices.Contains(k.Models, model)
}

// AllowsBackend reports whether the key's requests may go to backend.
func (k *Key) AllowsBackend(backend string) bool {
	return len(k.Backends) == 0 || slices.Contains(k.Backends, backend)
}

// Keyring finds the key a client presented.
type Keyring struct {
	keys []*Key
}

// NewKeyring returns a ring of keys. Names and hashes must be unique.
func NewKeyring(keys []Key) (*Keyring, error) {
	r := &Keyring{}
	names := map[string]bool{}
	hashes := map[Hash]string{}
	for i := range keys {
		k := keys[i]
		if k.Name == "" {
			return nil, fmt.Errorf("key %d has no name", i)
		}
		if names[k.Name] {
			return nil, fmt.Errorf("two keys are named %q", k.Name)
		}
		if other, dup := hashes[k.Hash]; dup {
			return nil, fmt.Errorf("keys %q and %q are the same key: give each identity its own", other, k.Name)
		}
		names[k.Name], hashes[k.Hash] = true, k.Name
		r.keys = append(r.keys, &k)
	}
	return r, nil
}

// Len is the number of keys.
func (r *Keyring) Len() int { return len(r.keys) }

// Keys are the configured keys, in configuration order.
func (r *Keyring) Keys() []*Key { return r.keys }

// Lookup returns the key whose hash is presented's, or nil. It hashes presented and
// compares the hash with every key's, always all of them, in constant time, so its
// duration says nothing about which key, or how much of one, matched.
func (r *Keyring) Lookup(presented string) *Key {
	h := HashOf(presented)
	found := -1
	for i, k := range r.keys {
		eq := subtle.ConstantTimeCompare(h[:], k.Hash[:])
		found = subtle.ConstantTimeSelect(eq, i, found)
	}
	if found < 0 {
		return nil
	}
	return r.keys[found]
}
