package toolname

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
)

// Rule is what a backend's API accepts as a tool name.
type Rule struct {
	// Max is the longest name accepted, in bytes. If zero, 64.
	Max int
	// Byte reports whether b may appear in a name. If nil, [a-zA-Z0-9_-].
	Byte func(b byte) bool
}

// OpenAI is the rule of OpenAI's and Anthropic's APIs: ^[a-zA-Z0-9_-]{1,64}$.
var OpenAI = Rule{Max: 64}

func (r Rule) max() int {
	if r.Max <= 0 {
		return 64
	}
	return r.Max
}

func (r Rule) ok(b byte) bool {
	if r.Byte != nil {
		return r.Byte(b)
	}
	return b == '_' || b == '-' || '0' <= b && b <= '9' || 'a' <= b && b <= 'z' || 'A' <= b && b <= 'Z'
}

// Valid reports whether name is accepted as it is.
func (r Rule) Valid(name string) bool {
	if name == "" || len(name) > r.max() {
		return false
	}
	for i := 0; i < len(name); i++ {
		if !r.ok(name[i]) {
			return false
		}
	}
	return true
}

// hashLen is the suffix: '_' and eight hex digits.
const hashLen = 9

// Wire returns the name the API sees for name.
func (r Rule) Wire(name string) string {
	if r.Valid(name) {
		return name
	}
	keep := r.max() - hashLen
	if keep < 0 {
		keep = 0
	}
	b := make([]byte, 0, r.max())
	for i := 0; i < len(name) && len(b) < keep; i++ {
		c := name[i]
		if !r.ok(c) {
			c = '_'
		}
		b = append(b, c)
	}
	sum := sha256.Sum256([]byte(name))
	b = append(b, '_')
	b = hex.AppendEncode(b, sum[:4])
	return string(b[:min(len(b), r.max())])
}

// Map is the mapping for one request's tool names. The zero Map and a nil *Map map
// every name to itself.
type Map struct {
	toWire map[string]string
	toReal map[string]string
}

// New returns the mapping of names under r. It is nil when every name is valid, the
// common case, so callers can skip the work. Two names with one wire name are an
// error naming both.
func New(r Rule, names []string) (*Map, error) {
	var m *Map
	for i, n := range names {
		if r.Valid(n) {
			continue
		}
		if m == nil {
			m = &Map{toWire: map[string]string{}, toReal: map[string]string{}}
			// Valid names map to themselves, but they must be known to catch a
			// collision with a wire name.
			for _, v := range names[:i] {
				m.toReal[v] = v
			}
		}
		w := r.Wire(n)
		if prev, ok := m.toReal[w]; ok && prev != n {
			return nil, fmt.Errorf("tool names %q and %q both map to %q for this backend; rename one", prev, n, w)
		}
		m.toWire[n], m.toReal[w] = w, n
	}
	if m == nil {
		return nil, nil
	}
	for _, n := range names {
		if r.Valid(n) {
			if prev, ok := m.toReal[n]; ok && prev != n {
				return nil, fmt.Errorf("tool names %q and %q both map to %q for this backend; rename one", prev, n, n)
			}
			m.toReal[n] = n
		}
	}
	return m, nil
}

// Wire returns the name the API sees for a real name.
func (m *Map) Wire(name string) string {
	if m != nil {
		if w, ok := m.toWire[name]; ok {
			return w
		}
	}
	return name
}

// Real returns the real name for a wire name; an unknown name is returned unchanged.
func (m *Map) Real(wire string) string {
	if m != nil {
		if n, ok := m.toReal[wire]; ok {
			return n
		}
	}
	return wire
}

// Empty reports whether the mapping changes no name.
func (m *Map) Empty() bool { return m == nil || len(m.toWire) == 0 }
