package planner

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

func toolsArray(n int, desc string) []byte {
	var b strings.Builder
	b.WriteString("[")
	for i := range n {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, `{"type":"function","function":{"name":"t%03d","description":%q,"parameters":{"type":"object","properties":{"s":{"type":"string","description":"a \"quoted\" [string], {braces}"}}}}}`, i, desc)
	}
	b.WriteString("]")
	return []byte(b.String())
}

// The parse and the index are paid once per distinct array and scope; a hit compares the
// bytes, keeps its own copy (the request's buffer is recycled), and never crosses scopes.
func TestToolCache_OncePerArrayAndScope(t *testing.T) {
	pl := New(Config{})
	raw := toolsArray(30, "Does a thing.")
	a, err := pl.clientTools("alice\x00default\x00", raw, nil, nil)
	if err != nil || a.ix == nil || a.ix.Catalog().Len() != 30 {
		t.Fatalf("first: %v %v", a, err)
	}
	again := append([]byte(nil), raw...)
	if b, _ := pl.clientTools("alice\x00default\x00", again, nil, nil); b != a {
		t.Error("the same bytes in the same scope built again")
	}
	if b, _ := pl.clientTools("bob\x00default\x00", raw, nil, nil); b == a {
		t.Error("another identity got alice's entry")
	}
	// The request's buffer is reused for another body: the entry keeps its tools.
	for i := range raw {
		raw[i] = 'x'
	}
	tl, _ := a.ix.Catalog().Lookup("t007")
	if tl == nil || !json.Valid(tl.Parameters) || !strings.Contains(string(a.ix.Catalog().Render()), "Does a thing.") {
		t.Error("the cached tools point into the request's recycled bytes")
	}
	other := toolsArray(30, "Does another thing.")
	if c, _ := pl.clientTools("alice\x00default\x00", other, nil, nil); c == a {
		t.Error("different bytes hit")
	}
	if _, err := pl.clientTools("alice\x00default\x00", []byte(`[{"type":"function"}]`), nil, nil); err == nil {
		t.Error("a bad array was accepted")
	}
}

func TestToolCache_Bounded(t *testing.T) {
	pl := New(Config{})
	for i := range maxToolEntries + 50 {
		if _, err := pl.clientTools(fmt.Sprint(i), toolsArray(1, "x"), nil, nil); err != nil {
			t.Fatal(err)
		}
	}
	if n := len(pl.toolCache.items); n != maxToolEntries || pl.toolCache.order.Len() != n {
		t.Errorf("%d entries, want the bound %d", n, maxToolEntries)
	}
}
