package masking

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// benchSchema is a tool's parameters as clients send them: indented, with
// descriptions, an enum, bounds and a nested array of objects; about 150
// tokens (600 bytes) once compacted.
func benchSchema(i int) json.RawMessage {
	return json.RawMessage(fmt.Sprintf(`{
  "type": "object",
  "properties": {
    "path": {"type": "string", "description": "Absolute path of file %d to read"},
    "mode": {"type": "string", "enum": ["text", "binary", "lines", "summary"], "description": "How to return the content"},
    "limit": {"type": "integer", "minimum": 1, "maximum": 10000, "description": "Maximum number of lines or bytes to return"},
    "recursive": {"type": "boolean"},
    "filters": {
      "type": "array",
      "description": "Entry conditions",
      "items": {
        "type": "object",
        "properties": {
          "field": {"type": "string", "enum": ["name", "size", "modified"]},
          "op": {"type": "string", "enum": ["eq", "lt", "gt", "glob"]},
          "value": {"type": "string"}
        },
        "required": ["field", "op", "value"]
      }
    }
  },
  "required": ["path"]
}`, i))
}

func benchCatalog(n int) ([]string, map[string]json.RawMessage) {
	names := benchNames(n)
	params := make(map[string]json.RawMessage, n)
	for i, nm := range names {
		params[nm] = benchSchema(i)
	}
	return names, params
}

// BenchmarkBuild is the build cost of every constraint with the whole
// catalog loaded (the worst case), per catalog size:
//
//	cold    first build: the catalog's per-tool work and the rendering
//	percall GBNF / StructuralTag with params (per-tool work every call)
//	miss    a new loaded set over a catalog already built (Catalog methods;
//	        for the mask, Cache.Get of a set not cached: key, sort, Compile)
//	hit     Cache.Get of a cached mask
//
// and for masks ahead of time (Cache.Precompile of the catalog):
//
//	precompile  Precompile itself, once per catalog version
//	miss-aot    miss with the catalog precompiled: each mask derived
//	grow        a loaded set of 20 (half the catalog below 40) alternating
//	            with it grown by one tool, Max 1: every Get a miss one name
//	            from the cached mask, as a conversation loads a tool; -aot
//	            derived from the precompiled catalog, else compiled; +step
//	            adds the first decoding step's token set (free text: the
//	            whole vocabulary walked, unless reused from the cached mask)
//
// structtag-reuse is the miss with AppendStructuralTag into a reused buffer,
// structtag-string-reuse with AppendStructuralTagString (vLLM's form, the
// tag as a JSON string), as the vLLM and SGLang backends write it; both
// copy each tool's entry, rendered once per catalog (the first call).
//
// bytes is the rendered size. The text renderings have no cache of their
// own here: the caller keeps their bytes, so their hit is the caller's.
func BenchmarkBuild(b *testing.B) {
	for _, n := range benchGenSizes {
		names, params := benchCatalog(n)
		spec := Spec{Format: Hermes(), Allowed: names}
		cat := NewCatalog(params)
		var tagBuf []byte
		for _, g := range []struct {
			name    string
			cold    func() (int, error)
			percall func() (int, error)
			miss    func() (int, error)
		}{
			{"gbnf",
				func() (int, error) { gr, err := NewCatalog(params).GBNF(spec); return len(gr.Grammar), err },
				func() (int, error) { gr, err := GBNF(spec, params); return len(gr.Grammar), err },
				func() (int, error) { gr, err := cat.GBNF(spec); return len(gr.Grammar), err }},
			{"structtag",
				func() (int, error) { t, err := NewCatalog(params).StructuralTag(spec); return len(t), err },
				func() (int, error) { t, err := StructuralTag(spec, params); return len(t), err },
				func() (int, error) { t, err := cat.StructuralTag(spec); return len(t), err }},
			{"structtag-reuse", nil, nil,
				func() (int, error) {
					t, err := cat.AppendStructuralTag(tagBuf[:0], spec)
					tagBuf = t
					return len(t), err
				}},
			{"structtag-string-reuse", nil, nil,
				func() (int, error) {
					t, err := cat.AppendStructuralTagString(tagBuf[:0], spec)
					tagBuf = t
					return len(t), err
				}},
			{"allowedtools", nil, nil,
				func() (int, error) { return len(AllowedTools(spec)), nil }},
		} {
			for _, v := range []struct {
				kind string
				fn   func() (int, error)
			}{{"cold", g.cold}, {"percall", g.percall}, {"miss", g.miss}} {
				if v.fn == nil {
					continue
				}
				b.Run(fmt.Sprintf("%s/tools=%d/%s", g.name, n, v.kind), func(b *testing.B) {
					b.ReportAllocs()
					var size int
					for b.Loop() {
						s, err := v.fn()
						if err != nil {
							b.Fatal(err)
						}
						size = s
					}
					b.ReportMetric(float64(size), "bytes")
				})
			}
		}
	}
	l := loadLlama(b)
	for _, n := range benchGenSizes {
		names := benchNames(n)
		spec := Spec{Format: Hermes(), Allowed: names}
		other := Spec{Format: Hermes(), Allowed: names[1:]}
		b.Run(fmt.Sprintf("mask/tools=%d/cold", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Compile(l.ix, spec); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(fmt.Sprintf("mask/tools=%d/miss", n), func(b *testing.B) {
			b.ReportAllocs()
			c := &Cache{Max: 1}
			i := 0
			for b.Loop() {
				s := spec
				if i++; i%2 == 0 {
					s = other
				}
				if _, err := c.Get(l.ix, s); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(fmt.Sprintf("mask/tools=%d/precompile", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if err := new(Cache).Precompile(l.ix, spec); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(fmt.Sprintf("mask/tools=%d/miss-aot", n), func(b *testing.B) {
			c := &Cache{Max: 1}
			if err := c.Precompile(l.ix, spec); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				s := spec
				if i++; i%2 == 0 {
					s = other
				}
				if _, err := c.Get(l.ix, s); err != nil {
					b.Fatal(err)
				}
			}
		})
		k := min(20, n/2)
		loaded := Spec{Format: Hermes(), Allowed: names[:k:k]}
		for _, v := range []struct {
			name      string
			aot, step bool
		}{{"grow-aot", true, false}, {"grow-aot+step", true, true}, {"grow+step", false, true}} {
			b.Run(fmt.Sprintf("mask/tools=%d/%s", n, v.name), func(b *testing.B) {
				c := &Cache{Max: 1}
				if v.aot {
					if err := c.Precompile(l.ix, spec); err != nil {
						b.Fatal(err)
					}
				}
				get := func(s Spec) {
					m, err := c.Get(l.ix, s)
					if err != nil {
						b.Fatal(err)
					}
					if v.step {
						st := m.NewState()
						st.Allowed()
					}
				}
				get(loaded)
				b.ReportAllocs()
				i := 0
				for b.Loop() {
					s := loaded
					if i++; i%2 == 1 { // grown by the next tool not loaded
						s.Allowed = append(s.Allowed, names[k+(i/2)%(n-k)])
					}
					get(s)
				}
			})
		}
		b.Run(fmt.Sprintf("mask/tools=%d/hit", n), func(b *testing.B) {
			b.ReportAllocs()
			var c Cache
			if _, err := c.Get(l.ix, spec); err != nil {
				b.Fatal(err)
			}
			for b.Loop() {
				c.Get(l.ix, spec)
			}
		})
	}
}

// TestBenchSchema_About150Tokens keeps the benchmark's schema realistic:
// 500–700 bytes compacted (about 4 bytes a token).
func TestBenchSchema_About150Tokens(t *testing.T) {
	cat := NewCatalog(map[string]json.RawMessage{"a": benchSchema(1)})
	if n := len(cat.schema[0]); n < 500 || n > 700 || strings.Contains(cat.schema[0], "\n") {
		t.Errorf("compacted schema is %d bytes", n)
	}
}
