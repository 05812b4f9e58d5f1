package toolsearch

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"testing"
	"time"
)

// The benchmarks search the retrieval benchmark's catalog (about 300 MCP-style tools),
// copied to 100, 1,000 and 10,000 tools: copy k of a tool is named NAME_vK, so
// namespaces grow and every posting list is as long as it would be for 33 servers of
// the same kind, a worst case for the vocabulary. Queries are the benchmark's own.
const benchData = "../bench/retrieval/testdata/"

var benchSizes = []int{100, 1000, 10000}

func benchTools(b *testing.B, n int) []Tool {
	b.Helper()
	base, err := ReadFiles(benchData + "catalog.json")
	if err != nil {
		b.Fatalf("benchmark catalog (bench/retrieval/testdata, in the repository): %v", err)
	}
	out := make([]Tool, 0, n)
	for k := 0; len(out) < n; k++ {
		for _, t := range base {
			if len(out) == n {
				break
			}
			if k > 0 {
				t.Name = fmt.Sprintf("%s_v%d", t.Name, k)
			}
			out = append(out, t)
		}
	}
	return out
}

func benchQueries(b *testing.B) []string {
	f, err := os.Open(benchData + "queries.txt")
	if err != nil {
		b.Fatalf("benchmark queries (bench/retrieval/testdata, in the repository): %v", err)
	}
	defer f.Close()
	var qs []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if line := sc.Text(); line != "" && !strings.HasPrefix(line, "#") {
			text, _, _ := strings.Cut(line, "|")
			qs = append(qs, strings.TrimSpace(text))
		}
	}
	return qs
}

func benchIndex(b *testing.B, n int, o Options) *Index {
	c, err := New(benchTools(b, n))
	if err != nil {
		b.Fatal(err)
	}
	return NewIndex(c, o)
}

// BenchmarkSearch reports ns/op and allocations, and p50/p99 of the same searches timed
// one by one.
func BenchmarkSearch(b *testing.B) {
	qs := benchQueries(b)
	for _, n := range benchSizes {
		for _, sc := range []struct {
			name string
			opt  Options
		}{{"bm25", Options{}}, {"keyword", Options{Scorer: Keyword}}} {
			b.Run(fmt.Sprintf("tools=%d/%s", n, sc.name), func(b *testing.B) {
				ix := benchIndex(b, n, sc.opt)
				for _, q := range qs { // warm the scratch pool
					ix.Search(q, SearchOptions{})
				}
				lat := make([]time.Duration, 0, b.N)
				b.ReportAllocs()
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					t0 := time.Now()
					ix.Search(qs[i%len(qs)], SearchOptions{})
					lat = append(lat, time.Since(t0))
				}
				b.StopTimer()
				reportPercentiles(b, lat)
			})
		}
	}
}

func reportPercentiles(b *testing.B, lat []time.Duration) {
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	at := func(p float64) float64 { return float64(lat[int(p*float64(len(lat)-1))].Nanoseconds()) / 1e3 }
	b.ReportMetric(at(0.50), "p50-µs")
	b.ReportMetric(at(0.99), "p99-µs")
}

// BenchmarkNewIndex is the cost of indexing a profile catalog, paid once per version.
func BenchmarkNewIndex(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprintf("tools=%d", n), func(b *testing.B) {
			c, err := New(benchTools(b, n))
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				NewIndex(c, Options{})
			}
			b.StopTimer()
			// What an index keeps: the heap it holds after a collection.
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			keep := NewIndex(c, Options{})
			runtime.GC()
			runtime.ReadMemStats(&after)
			runtime.KeepAlive(keep)
			b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/(1<<20), "index-MiB")
		})
	}
}

// BenchmarkRequest is one request's work with 20 client tools over a profile: merging the
// catalogs, its version, indexing the client tools and one search.
func BenchmarkRequest(b *testing.B) {
	qs := benchQueries(b)
	client := benchTools(b, 320)[300:]
	for i := range client {
		client[i].Name = "client_" + client[i].Name
		client[i].Source = FromClient
	}
	for _, n := range benchSizes {
		b.Run(fmt.Sprintf("tools=%d", n), func(b *testing.B) {
			ix := benchIndex(b, n, Options{})
			lat := make([]time.Duration, 0, b.N)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				t0 := time.Now()
				req, err := ix.WithClient(client)
				if err != nil {
					b.Fatal(err)
				}
				req.Catalog().Version()
				req.Search(qs[i%len(qs)], SearchOptions{})
				lat = append(lat, time.Since(t0))
			}
			b.StopTimer()
			reportPercentiles(b, lat)
		})
	}
}

// BenchmarkSearchMultilingual searches the retrieval benchmark's multilingual catalog (203
// MCP tools, 30 described in Chinese or Korean) with its queries in four languages and
// its multi-step tasks, which are split into clauses and ranked once per clause.
func BenchmarkSearchMultilingual(b *testing.B) {
	var files []string
	for _, dir := range []string{"mcp", "mcp_cjk"} {
		fs, err := filepath.Glob(benchData + dir + "/*.json")
		if err != nil || len(fs) == 0 {
			b.Fatalf("no %s catalog: %v", dir, err)
		}
		files = append(files, fs...)
	}
	tools, err := ReadFiles(files...)
	if err != nil {
		b.Fatal(err)
	}
	c, err := New(tools)
	if err != nil {
		b.Fatal(err)
	}
	ix := NewIndex(c, Options{})
	for _, set := range []string{"multilingual/zh.txt", "multilingual/ja.txt", "multilingual/ko.txt", "tasks.txt"} {
		b.Run(strings.TrimSuffix(filepath.Base(set), ".txt"), func(b *testing.B) {
			qs := readBenchQueries(b, benchData+set)
			lat := make([]time.Duration, 0, b.N)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				t0 := time.Now()
				ix.Search(qs[i%len(qs)], SearchOptions{})
				lat = append(lat, time.Since(t0))
			}
			b.StopTimer()
			reportPercentiles(b, lat)
		})
	}
}

func readBenchQueries(b *testing.B, path string) []string {
	data, err := os.ReadFile(path)
	if err != nil {
		b.Fatal(err)
	}
	var qs []string
	for _, line := range strings.Split(string(data), "\n") {
		if line != "" && !strings.HasPrefix(line, "#") {
			text, _, _ := strings.Cut(line, "|")
			qs = append(qs, strings.TrimSpace(text))
		}
	}
	return qs
}
