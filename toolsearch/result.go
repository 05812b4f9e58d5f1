package toolsearch

import (
	"strings"
	"unicode/utf8"
)

// maxShort is the most characters of a description a search result carries.
const maxShort = 150

// shortDescription is the first sentence of d (up to a '.', '!' or '?' followed by a
// space, or the first line break), cut at a word to at most maxShort characters with
// "..." when longer.
func shortDescription(d string) string {
	d = strings.TrimSpace(d)
	end := len(d)
	for i := 0; i < len(d); i++ {
		c := d[i]
		if c == '\n' {
			end = i
			break
		}
		if (c == '.' || c == '!' || c == '?') && (i+1 == len(d) || d[i+1] == ' ') {
			end = i + 1
			break
		}
	}
	d = strings.TrimSpace(d[:end])
	if utf8.RuneCountInString(d) <= maxShort {
		return d
	}
	cut, n := 0, 0
	for i := range d {
		if n == maxShort-3 {
			cut = i
			break
		}
		n++
	}
	if sp := strings.LastIndexByte(d[:cut], ' '); sp > cut/2 {
		cut = sp
	}
	return strings.TrimRight(d[:cut], " ,;:") + "..."
}

// scratch is the per-search working memory, pooled: dense score arrays indexed by tool,
// all zero between uses.
type scratch struct {
	acc, best     []float64
	touched, cand []int32
	hits          []hit
	top           []float64
}

func (ix *Index) getScratch() *scratch {
	n := ix.docCount()
	sc, _ := ix.scratch.Get().(*scratch)
	if sc == nil {
		sc = &scratch{}
	}
	if len(sc.acc) < n {
		sc.acc = make([]float64, n)
		sc.best = make([]float64, n)
	}
	return sc
}
