package masking

import (
	"encoding/json"
	"fmt"
	"testing"
)

// benchGenSizes are the catalog sizes of the target (≤ 2 ms at
// 10,000 tools for a cache miss).
var benchGenSizes = []int{10, 100, 1000, 10000}

// BenchmarkGenerators is the build time of each rendering with every tool
// of an n-tool catalog loaded (the worst case), and its size in bytes.
func BenchmarkGenerators(b *testing.B) {
	schema := json.RawMessage(`{"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}`)
	for _, n := range benchGenSizes {
		names := benchNames(n)
		params := make(map[string]json.RawMessage, n)
		for _, nm := range names {
			params[nm] = schema
		}
		spec := Spec{Format: Hermes(), Allowed: names}
		b.Run(fmt.Sprintf("gbnf/tools=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			var size int
			for b.Loop() {
				g, err := GBNF(spec, params)
				if err != nil {
					b.Fatal(err)
				}
				size = len(g.Grammar)
			}
			b.ReportMetric(float64(size), "bytes")
		})
		b.Run(fmt.Sprintf("structtag/tools=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			var size int
			for b.Loop() {
				tag, err := StructuralTag(spec, params)
				if err != nil {
					b.Fatal(err)
				}
				size = len(tag)
			}
			b.ReportMetric(float64(size), "bytes")
		})
		b.Run(fmt.Sprintf("structtag-noschema/tools=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			var size int
			for b.Loop() {
				tag, err := StructuralTag(spec, nil)
				if err != nil {
					b.Fatal(err)
				}
				size = len(tag)
			}
			b.ReportMetric(float64(size), "bytes")
		})
		b.Run(fmt.Sprintf("allowedtools/tools=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			var size int
			for b.Loop() {
				size = len(AllowedTools(spec))
			}
			b.ReportMetric(float64(size), "bytes")
		})
	}
}
