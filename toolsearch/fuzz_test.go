package toolsearch

import (
	"bytes"
	"encoding/json"
	"testing"
	"unicode/utf8"
)

// A client's tools array is untrusted: parsing never panics, and what it accepts renders
// to JSON that parses back to the same names, and is searchable.
func FuzzParseClientTools(f *testing.F) {
	f.Add([]byte(`[{"type":"function","function":{"name":"a","description":"d","parameters":{"type":"object","properties":{"x":{"type":"string","description":"y"}}}}}]`))
	f.Add([]byte(`[{"type":"function","function":{"name":"a.b-c_d","parameters":{"properties":{"n":{"items":{"properties":{"deep":{"enum":["v",1,null]}}}}},"anyOf":[{"title":"t"}]}}}]`))
	f.Add([]byte(`[{"type":"function","function":{"name":"a","parameters":null,"strict":true}}]`))
	f.Add([]byte(`[{"type":"function","function":{"name":"a","parameters":{"properties":{"p":{"description":5}}}}}]`))
	f.Add([]byte(`[]`))
	f.Add([]byte(`null`))
	f.Add([]byte(`[{"type":"function","function":{"name":"\u00e9"}}]`))
	profile := func() *Index {
		c, _ := New([]Tool{{Name: "a", Description: "profile tool"}})
		return NewIndex(c, Options{})
	}()
	f.Fuzz(func(t *testing.T, data []byte) {
		tools, err := ParseClientTools(data)
		if err != nil {
			return
		}
		req, err := profile.WithClient(tools)
		if err != nil {
			return // duplicate names
		}
		out := req.Catalog().Render()
		var back []struct {
			Function struct {
				Name string `json:"name"`
			} `json:"function"`
		}
		if err := json.Unmarshal(out, &back); err != nil {
			t.Fatalf("render is not JSON: %v\n%s", err, out)
		}
		if len(back) != req.Catalog().Len() {
			t.Fatalf("%d tools rendered, catalog has %d", len(back), req.Catalog().Len())
		}
		for i, b := range back {
			if b.Function.Name != req.Catalog().Tool(i).Name {
				t.Fatalf("tool %d renders as %q", i, b.Function.Name)
			}
		}
		for _, tool := range tools {
			if tool.Parameters != nil && !bytes.Contains(out, tool.Parameters) {
				t.Fatalf("parameters of %s not rendered verbatim", tool.Name)
			}
			req.Search(tool.Name+" "+tool.Description, SearchOptions{})
		}
	})
}

// Queries are untrusted text: tokenizing and searching never panic, and tokens are
// non-empty lowercase valid UTF-8.
func FuzzSearchQuery(f *testing.F) {
	for _, s := range []string{"create an issue in Linear", "git.*", "namespace:", "\xff\xfe", "HTTPServer2Go",
		"email a@b.c", "#chan @u PROJ-1 x/y.md https://e", "turn off", "ö🙂x", ""} {
		f.Add(s)
	}
	ix := NewIndex(mustCorpus(f), Options{})
	kw := NewIndex(mustCorpus(f), Options{Scorer: Keyword})
	f.Fuzz(func(t *testing.T, q string) {
		for _, split := range []func([]string, string) []string{tokenize, tokenizeText} {
			for _, w := range split(nil, q) {
				if w == "" || !utf8.ValidString(w) {
					t.Fatalf("token %q of %q", w, q)
				}
			}
		}
		for _, x := range [](*Index){ix, kw} {
			for _, r := range x.Search(q, SearchOptions{TopK: -1, MinScore: -1}) {
				if r.Score < 0 || r.Score > 1 {
					t.Fatalf("score %v for %q", r.Score, q)
				}
			}
		}
	})
}

func mustCorpus(f *testing.F) *Catalog {
	tools, err := ReadFiles("testdata/corpus.json")
	if err != nil {
		f.Fatal(err)
	}
	c, err := New(tools)
	if err != nil {
		f.Fatal(err)
	}
	return c
}
