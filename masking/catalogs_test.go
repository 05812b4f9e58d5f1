package masking

import (
	"encoding/json"
	"errors"
	"testing"
)

func TestCatalogs_BuildOncePerIDAndEvictOldest(t *testing.T) {
	c := &Catalogs{Max: 2}
	reads := 0
	read := func() (map[string]json.RawMessage, error) {
		reads++
		return map[string]json.RawMessage{"a": nil}, nil
	}
	a1, _ := c.Get("a", read)
	a2, _ := c.Get("a", read)
	if a1 != a2 || reads != 1 {
		t.Fatalf("same id read %d times", reads)
	}
	c.Get("b", read)
	c.Get("c", read) // evicts a
	if c.Get("a", read); reads != 4 {
		t.Errorf("reads = %d, want 4 (a evicted and read again)", reads)
	}
	if x, _ := c.Get("", read); x == a1 || reads != 5 {
		t.Error("an empty id must build a fresh catalog")
	}
	if _, err := c.Get("bad", func() (map[string]json.RawMessage, error) { return nil, errors.New("boom") }); err == nil {
		t.Error("read error lost")
	}
	if _, err := c.Get("bad", read); err != nil || reads != 6 {
		t.Error("a failed read must not be kept")
	}
}

func TestCatalogs_GetInOrderKeepsTheToolsOrder(t *testing.T) {
	var c Catalogs
	cat, err := c.GetInOrder("x", func() ([]string, map[string]json.RawMessage, error) {
		return []string{"b", "a", "b"}, map[string]json.RawMessage{"a": nil, "b": nil}, nil
	})
	if err != nil || cat.Len() != 2 || cat.names[0] != "b" || cat.names[1] != "a" {
		t.Fatalf("catalog %v, err %v", cat.names, err)
	}
	if again, _ := c.GetInOrder("x", nil); again != cat {
		t.Error("not kept")
	}
}
