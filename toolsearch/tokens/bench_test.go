package tokens

import "testing"

// BenchmarkCount tokenizes a 500-tool catalog of about 75k tokens (the size of the
// 500-tool prompts in kvcache.H200Llama8BSamples' measurement) from scratch, as a cache
// miss does.
func BenchmarkCount(b *testing.B) {
	c := newCounter(b, Options{})
	rendered := catalog(b, 500).Render()
	n := c.Count(rendered)
	b.SetBytes(int64(len(rendered)))
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		c.Count(rendered)
	}
	b.ReportMetric(float64(n), "tokens")
	b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "tokens/s")
}

// BenchmarkToolTokens counts one tool definition at a time.
func BenchmarkToolTokens(b *testing.B) {
	c := newCounter(b, Options{})
	cat := catalog(b, 500)
	tools := make([][]byte, cat.Len())
	for i := range tools {
		one := cat.AppendNames(nil, []string{cat.Tool(i).Name})
		tools[i] = one[1 : len(one)-1]
	}
	b.ReportAllocs()
	b.ResetTimer()
	i := 0
	for b.Loop() {
		c.ToolTokens(tools[i%len(tools)])
		i++
	}
}

// BenchmarkCatalogTokens_Hit is the per-request cost once a version is cached.
func BenchmarkCatalogTokens_Hit(b *testing.B) {
	c := newCounter(b, Options{})
	cat := catalog(b, 500)
	c.VersionTokens(cat.Version(), cat.Render)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		c.VersionTokens(cat.Version(), cat.Render)
	}
}
