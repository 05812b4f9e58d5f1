package toolsearch

import (
	"math"
	"strings"
)

// A query is a list of concepts, one per distinct content word, each with the terms that
// satisfy it: the word's own term and its synonyms'.
type query struct {
	concepts []concept
	hints    []string // namespaces the query names
	max      float64  // Σ concept.max, plus unknown words: what a tool matching everything would score
	ids      []alt    // every term of every concept with weight 1 or SynonymWeight, for the name boost
}

type concept struct {
	alts []alt
	max  float64 // the best weight among alts
	own  bool    // alts[0] is the word's own term, not a synonym
}

type alt struct {
	id int32
	w  float64 // idf (BM25) or 1 (keyword), times the synonym weight for a synonym
}

// parse turns text into a query against ix: argument values become the words for their
// kind, phrases the words they stand for; each remaining content word is a concept. A
// word naming a namespace of the catalog, itself or through an alias, is also a hint. A
// question adds a list-or-get concept.
func (ix *Index) parse(text string) query {
	cfg := ix.cfg
	if !cfg.plain {
		text = values(text)
	}
	all := cfg.rewrite(tokenizeText(nil, text))
	var q query
	seen := map[string]bool{}
	for _, w := range all {
		if isStopWord(w) || number(w) {
			continue
		}
		if cfg.hintPenalty > 0 {
			ns := w
			if a, ok := cfg.aliases[w]; ok {
				ns = a
			}
			if ix.cat.ns.exists(ns) && !contains(q.hints, ns) {
				q.hints = append(q.hints, ns)
			}
		}
		t := cfg.term(w)
		if seen[t] {
			continue
		}
		seen[t] = true
		c, ok := ix.concept(t)
		if !ok {
			// A word no tool has still counts toward what the query asks for, as much
			// as the rarest word a tool could have: a tool that matches half a query
			// scores about half, whatever the other half is.
			q.max += ix.unknownWeight()
			continue
		}
		q.concepts = append(q.concepts, c)
		q.max += c.max
		for i, a := range c.alts {
			w := cfg.synWeight
			if i == 0 && c.own {
				w = 1
			}
			q.ids = append(q.ids, alt{id: a.id, w: w})
		}
	}
	if len(all) > 0 && question(all[0]) {
		q.intent(ix, "list", "get")
	}
	return q
}

// question reports whether a query starting with w asks for information ("what's in the
// bucket", "which pods are failing", "who is on call"). Such a query wants a tool that
// lists or reads, even though it names no such verb.
func question(w string) bool {
	switch w {
	case "what", "whats", "which", "who", "whose", "where", "when", "how", "any",
		"is", "are", "was", "were", "do", "does", "did", "have", "has":
		return true
	}
	return false
}

// intent adds a concept met by any of the words' terms, each weighed as a synonym.
func (q *query) intent(ix *Index, words ...string) {
	if ix.cfg.synWeight == 0 {
		return
	}
	var c concept
	for _, w := range words {
		id, ok := ix.lookup(ix.cfg.term(w))
		if !ok || ix.df(id) <= 0 {
			continue
		}
		wt := ix.cfg.synWeight
		if !ix.cfg.keyword {
			wt *= idf(ix.n, ix.df(id))
		}
		c.alts = append(c.alts, alt{id: id, w: wt})
		c.max = math.Max(c.max, wt)
	}
	if len(c.alts) == 0 {
		return
	}
	q.concepts = append(q.concepts, c)
	q.max += c.max
	for _, a := range c.alts {
		q.ids = append(q.ids, alt{id: a.id, w: ix.cfg.synWeight})
	}
}

// concept resolves a term and its synonyms. Synonyms weigh SynonymWeight times the word's
// own idf, so that how rare the user's word is, not its synonym, sets the concept's worth;
// a word the catalog lacks is worth its rarest synonym. A term no tool has is dropped, and
// a concept with no terms left does not count: unknown words neither match nor dilute.
func (ix *Index) concept(t string) (concept, bool) {
	cfg := ix.cfg
	weight := func(term string) (int32, float64, bool) {
		id, ok := ix.lookup(term)
		if !ok {
			return 0, 0, false
		}
		df := ix.df(id)
		if df <= 0 {
			return 0, 0, false
		}
		if cfg.keyword {
			return id, 1, true
		}
		return id, idf(ix.n, df), true
	}
	var c concept
	own, base, ok := weight(t)
	if ok {
		c.alts = append(c.alts, alt{id: own, w: base})
		c.max = base
		c.own = true
	}
	for _, s := range cfg.syn[t] {
		id, w, found := weight(s)
		if !found {
			continue
		}
		if ok {
			w = base
		}
		c.alts = append(c.alts, alt{id: id, w: cfg.synWeight * w})
		if !ok && w > c.max {
			c.max = w
		}
	}
	return c, len(c.alts) > 0
}

// namespaceQuery recognises a request for a whole namespace: "git.*", "github_*",
// "namespace:git".
func namespaceQuery(q string) (string, bool) {
	q = strings.TrimSpace(q)
	var ns string
	if rest, ok := strings.CutPrefix(q, "namespace:"); ok {
		ns = strings.TrimSpace(rest)
	} else if strings.HasSuffix(q, ".*") || strings.HasSuffix(q, "_*") {
		ns = q[:len(q)-2]
	} else {
		return "", false
	}
	if ns == "" || strings.ContainsAny(ns, " \t\n*") {
		return "", false
	}
	return strings.ToLower(ns), true
}

// unknownWeight is the weight of a query word that no tool has.
func (ix *Index) unknownWeight() float64 {
	if ix.cfg.keyword {
		return 1
	}
	return idf(ix.n, 1)
}
