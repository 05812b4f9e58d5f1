package tokens

import (
	"crypto/sha256"
	"encoding/hex"
	"sync"

	"github.com/tiktoken-go/tokenizer"
)

// Encoding is the BPE the Counter uses; see the package doc for why.
const Encoding = "o200k_base"

// Options configure a Counter. The zero value is ready to use.
type Options struct {
	// CacheSize is how many catalog versions keep their counts; zero means 64. When full,
	// the oldest version is forgotten first.
	CacheSize int
}

// A Counter counts tokens. It is safe for concurrent use; make one per process.
type Counter struct {
	codec tokenizer.Codec
	size  int

	mu      sync.Mutex
	entries map[string]*entry
	order   []string // versions, oldest first
}

// entry is one version's count, computed once however many requests ask at the same time.
type entry struct {
	once sync.Once
	n    int
}

// New returns a Counter. Building o200k_base's tables takes some tens of milliseconds and
// memory the first time in a process.
func New(o Options) (*Counter, error) {
	codec, err := tokenizer.Get(tokenizer.O200kBase)
	if err != nil {
		return nil, err
	}
	size := o.CacheSize
	if size <= 0 {
		size = 64
	}
	return &Counter{codec: codec, size: size, entries: map[string]*entry{}}, nil
}

// Count is the number of tokens in text. Invalid UTF-8 is counted byte by byte, as the
// tokenizer's byte-level fallback encodes it.
func (c *Counter) Count(text []byte) int {
	if len(text) == 0 {
		return 0
	}
	n, err := c.codec.Count(string(text))
	if err != nil {
		// Only a regexp failure can land here; a rough estimate beats none.
		return (len(text) + 3) / 4
	}
	return n
}

// ToolTokens is the number of tokens of one rendered tool definition (an OpenAI tool
// object as toolsearch renders it).
func (c *Counter) ToolTokens(toolJSON []byte) int { return c.Count(toolJSON) }

// CatalogTokens is the number of tokens of a rendered catalog (a tools array), cached by
// its version: the hex SHA-256 of rendered, which is what toolsearch.Catalog.Version is
// for a catalog's Render. Callers that hold the version already should use
// VersionTokens and skip the hashing.
func (c *Counter) CatalogTokens(rendered []byte) int {
	sum := sha256.Sum256(rendered)
	return c.VersionTokens(hex.EncodeToString(sum[:]), func() []byte { return rendered })
}

// VersionTokens is CatalogTokens for a catalog whose version is known: render is called
// only when version is not cached, so a hit costs no rendering and no hashing.
func (c *Counter) VersionTokens(version string, render func() []byte) int {
	e := c.entry(version)
	e.once.Do(func() { e.n = c.Count(render()) })
	return e.n
}

// entry returns version's entry, adding it (and forgetting the oldest) if new.
func (c *Counter) entry(version string) *entry {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.entries[version]; ok {
		return e
	}
	if len(c.order) >= c.size {
		delete(c.entries, c.order[0])
		c.order = append(c.order[:0], c.order[1:]...)
	}
	e := &entry{}
	c.entries[version] = e
	c.order = append(c.order, version)
	return e
}

// cached is the number of versions cached, for tests.
func (c *Counter) cached() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.entries)
}
