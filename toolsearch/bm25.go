package toolsearch

import "math"

// posting is one tool that has a term, with the term's contribution precomputed: the BM25F
// saturation s = t/(k1+t), t = Σ_f w_f·tf_f/(1−b+b·len_f/avglen_f), or for the keyword
// scorer the share of the field weights whose field has the term. A query term's score in
// a tool is then its idf (BM25) or 1 (keyword) times s.
type posting struct {
	doc int32
	s   float32
}

// docInfo is what scoring needs of a tool beyond its postings.
type docInfo struct {
	name   []int32 // distinct terms of the name, namespace left out, for the name boost
	prefix string  // candidate namespace prefix, for hints
}

// docTerms is one analysed tool: its distinct terms with per-field frequencies, and its
// field lengths.
type docTerms struct {
	terms []termFreq
	lens  [numFields]int
	info  docInfo
}

type termFreq struct {
	term string
	tf   [numFields]uint16
}

// stemCache maps words as written to their terms, "" for a stop word or a number: a
// profile index keeps its own, read-only once built, and a request index consults it
// before analysing the client's words itself. Tools share most of their words, so most
// words cost one map lookup and no allocation.
type stemCache struct {
	shared map[string]string
	own    map[string]string
	at     map[string]int // analyze's scratch: a term's index in the tool being analysed
}

func newStemCache(shared map[string]string) *stemCache {
	return &stemCache{shared: shared, own: map[string]string{}, at: map[string]int{}}
}

func (s *stemCache) term(c *config, w string) string {
	if t, ok := s.shared[w]; ok {
		return t
	}
	t, ok := s.own[w]
	if !ok {
		if lw := lowercase(w); !isStopWord(lw) && !number(lw) {
			t = c.term(lw)
		}
		s.own[w] = t
	}
	return t
}

// analyze splits t into terms.
func (c *config) analyze(t *Tool, stems *stemCache) docTerms {
	fields := toolWords(t)
	var d docTerms
	at := stems.at
	clear(at)
	for f, ws := range fields {
		if c.w[f] == 0 {
			continue
		}
		dst := f
		if c.plain {
			dst = 0
		}
		for _, w := range ws {
			term := stems.term(c, w)
			if term == "" {
				continue
			}
			i, ok := at[term]
			if !ok {
				i = len(d.terms)
				at[term] = i
				d.terms = append(d.terms, termFreq{term: term})
			}
			if d.terms[i].tf[dst] < math.MaxUint16 {
				d.terms[i].tf[dst]++
			}
			d.lens[dst]++
		}
	}
	d.info.prefix, _ = candidate(t.Name)
	return d
}

// nameTerms are the terms of t's name after its namespace.
func (c *config) nameTerms(t *Tool, ns string, stems *stemCache) []string {
	name := t.Name
	if ns != "" && len(name) > len(ns) {
		name = name[len(ns)+1:]
	}
	var out []string
	for _, w := range words(nil, name, tokenize) {
		term := stems.term(c, w)
		if !contains(out, term) {
			out = append(out, term)
		}
	}
	return out
}

// weight is the precomputed score of one term in one tool (see posting), given the
// average field lengths.
func (c *config) weight(tf *[numFields]uint16, lens *[numFields]int, avg *[numFields]float64) float32 {
	if c.keyword {
		var got, all float64
		for f, w := range c.w {
			all += w
			if tf[f] > 0 {
				got += w
			}
		}
		return float32(got / all)
	}
	var t float64
	for f, w := range c.w {
		if tf[f] == 0 || w == 0 {
			continue
		}
		norm := 1.0
		if avg[f] > 0 {
			norm = 1 - c.b + c.b*float64(lens[f])/avg[f]
		}
		t += w * float64(tf[f]) / norm
	}
	return float32(t / (c.k1 + t))
}

// idf is BM25's inverse document frequency in the form that is never negative:
// ln(1 + (N − df + 0.5)/(df + 0.5)).
func idf(n, df int) float64 {
	return math.Log(1 + (float64(n)-float64(df)+0.5)/(float64(df)+0.5))
}

// averages returns the mean length of each field over docs.
func averages(docs []docTerms) [numFields]float64 {
	var avg [numFields]float64
	if len(docs) == 0 {
		return avg
	}
	for _, d := range docs {
		for f, l := range d.lens {
			avg[f] += float64(l)
		}
	}
	for f := range avg {
		avg[f] /= float64(len(docs))
	}
	return avg
}
