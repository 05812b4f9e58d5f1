package toolsearch

import (
	"cmp"
	"math"
	"slices"
	"strings"
)

// nearest ranks live tools by cosine similarity to qv, best Candidates first.
func (h *Hybrid) nearest(qv []float32, own [][]float32) []hit {
	var hits []hit
	add := func(doc int32, v []float32) {
		if len(v) == len(qv) {
			hits = append(hits, hit{doc: doc, score: dot(qv, v)})
		}
	}
	for d, v := range h.vecs {
		if w := d / 64; w < len(h.ix.dead) && h.ix.dead[w]&(1<<(d%64)) != 0 {
			continue
		}
		add(int32(d), v)
	}
	for j, v := range own {
		add(int32(len(h.vecs)+j), v)
	}
	sortHits(hits)
	if len(hits) > h.opt.Candidates {
		hits = hits[:h.opt.Candidates]
	}
	return hits
}

func (h *Hybrid) fuse(lexical, semantic []hit, o SearchOptions) []Result {
	k := float64(h.opt.K)
	fused := map[int32]float64{}
	for _, list := range [][]hit{lexical, semantic} {
		for r, x := range list {
			fused[x.doc] += 1 / (k + float64(r+1))
		}
	}
	hits := make([]hit, 0, len(fused))
	for d, s := range fused {
		hits = append(hits, hit{doc: d, score: s / (2 / (k + 1))})
	}
	sortHits(hits)
	topK := o.TopK
	if topK == 0 {
		topK = 5
	}
	// The fused score ranks, it does not measure a match: zero MinScore means the
	// DefaultMinScore floor alone, which with the default K and Candidates drops nothing
	// either ranking placed.
	minScore := orDefault(o.MinScore, DefaultMinScore)
	var out []Result
	for _, x := range hits {
		if x.score < minScore || (topK > 0 && len(out) >= topK) {
			break
		}
		if t := h.ix.tool(x.doc); o.Filter == nil || o.Filter(t) {
			out = append(out, result(t, x.score))
		}
	}
	return out
}

// sortHits orders by score, best first, then by doc id.
func sortHits(hits []hit) {
	slices.SortFunc(hits, func(a, b hit) int {
		switch {
		case a.score > b.score:
			return -1
		case a.score < b.score:
			return 1
		}
		return cmp.Compare(a.doc, b.doc)
	})
}

// embedText is what represents a tool to the embedder: its name in words, description,
// keywords and category.
func embedText(t *Tool) string {
	var b strings.Builder
	b.WriteString(strings.Join(tokenize(nil, t.Name), " "))
	if t.Description != "" {
		b.WriteString(": ")
		b.WriteString(t.Description)
	}
	if len(t.Keywords) > 0 {
		b.WriteString(" Keywords: ")
		b.WriteString(strings.Join(t.Keywords, ", "))
	}
	if t.Category != "" {
		b.WriteString(" Category: ")
		b.WriteString(t.Category)
	}
	return b.String()
}

// unit returns v scaled to length 1 (a zero vector stays zero), as a new slice.
func unit(v []float32) []float32 {
	var n float64
	for _, x := range v {
		n += float64(x) * float64(x)
	}
	out := make([]float32, len(v))
	if n == 0 {
		return out
	}
	s := 1 / math.Sqrt(n)
	for i, x := range v {
		out[i] = float32(float64(x) * s)
	}
	return out
}

func dot(a, b []float32) float64 {
	var s float64
	for i := range a {
		s += float64(a[i]) * float64(b[i])
	}
	return s
}
