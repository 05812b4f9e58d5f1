package oai

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestElements_VisitsEachElementOrFailsLikeJSONValid(t *testing.T) {
	var got []string
	err := Elements([]byte(` [1, "a\"b" ,{"x":[2]}, null] `), func(e []byte) error {
		got = append(got, string(e))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{`1`, `"a\"b"`, `{"x":[2]}`, `null`}; !cmp.Equal(got, want) {
		t.Errorf("elements %q, want %q", got, want)
	}
	for _, bad := range []string{`[1,]`, `[1 2]`, `{"a":1}`, `[1] x`, `[`, ``} {
		if err := Elements([]byte(bad), func([]byte) error { return nil }); err == nil {
			t.Errorf("Elements(%q) accepted it", bad)
		}
	}
}

func TestToolSchemas_NamesAndParametersBytesVerbatim(t *testing.T) {
	tools := `[{"type":"function","function":{"name":"git.commit","parameters":{"b": 1, "a": 2}}},` +
		`{"type":"function","function":{"description":"x","name":"esc\u0041ped"}}]`
	got, err := ToolSchemas([]byte(tools))
	if err != nil {
		t.Fatal(err)
	}
	want := []ToolSchema{{"git.commit", json.RawMessage(`{"b": 1, "a": 2}`)}, {"escAped", nil}}
	if !cmp.Equal(got, want) {
		t.Errorf("%s", cmp.Diff(want, got))
	}
	if got, err := ToolSchemas([]byte(`[{"type":"custom","custom":{"name":"x"}}]`)); err != nil || len(got) != 0 {
		t.Errorf("a custom tool: %v, %v; want it skipped", got, err)
	}
	for _, bad := range []string{`[{"function":{"description":"no name"}}]`, `[{"function":{"name":3}}]`, `[1]`, `[{"function":[]}]`} {
		if _, err := ToolSchemas([]byte(bad)); err == nil {
			t.Errorf("ToolSchemas(%s) accepted it", bad)
		}
	}
}

func FuzzToolSchemas(f *testing.F) {
	f.Add([]byte(`[{"function":{"name":"a","parameters":{}}}]`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, b []byte) {
		got, err := ToolSchemas(b)
		if err != nil {
			return
		}
		var want []struct {
			Function struct {
				Name       *string         `json:"name"`
				Parameters json.RawMessage `json:"parameters"`
			} `json:"function"`
		}
		if json.Unmarshal(b, &want) != nil {
			t.Fatalf("ToolSchemas accepted %q, which encoding/json refuses", b)
		}
		if len(got) > len(want) {
			t.Fatalf("%d tools, encoding/json sees %d", len(got), len(want))
		}
		for _, g := range got {
			found := false
			for _, w := range want {
				found = found || (w.Function.Name != nil && *w.Function.Name == g.Name)
			}
			if !found {
				t.Fatalf("name %q is not one encoding/json sees", g.Name)
			}
		}
	})
}

func TestSchemaCache_ReadsOncePerID(t *testing.T) {
	var c SchemaCache
	a := []byte(`[{"function":{"name":"a"}}]`)
	b := []byte(`[{"function":{"name":"b"}}]`)
	first, err := c.Get("v1", a)
	if err != nil || len(first) != 1 || first[0].Name != "a" {
		t.Fatalf("Get = %v, %v", first, err)
	}
	// One ID promises one tools array: the cache does not read b.
	if again, _ := c.Get("v1", b); again[0].Name != "a" {
		t.Errorf("the cached schemas were not used: %v", again)
	}
	if fresh, _ := c.Get("", b); fresh[0].Name != "b" {
		t.Errorf("no ID must mean no cache: %v", fresh)
	}
	if _, err := c.Get("v2", []byte(`[1]`)); err == nil {
		t.Error("a bad tools array was accepted")
	}
	if _, err := c.Get("v2", a); err != nil {
		t.Errorf("a failed read must not be cached: %v", err)
	}
}
