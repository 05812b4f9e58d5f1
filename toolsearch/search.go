package toolsearch

import (
	"math"
	"strings"
)

// SearchOptions tune one search.
type SearchOptions struct {
	// TopK is the most results to return; zero means 5, negative means no limit. A
	// namespace query returns its whole namespace whatever TopK says.
	TopK int
	// MinScore drops results scoring below it, on the 0–1 scale of Result.Score. Zero
	// means the default cut (see the package doc): results under DefaultMinScore are
	// dropped only from a query none of whose own words any tool has; when one has, a
	// result is kept if it scores DefaultMinScore or at least DefaultRelativeScore times
	// the best result. A positive value is an absolute threshold applied to every result,
	// as set; negative means no threshold.
	MinScore float64
	// Filter, if non-nil, hides the tools it returns false for. It is consulted in rank
	// order, so TopK still fills with the tools it allows.
	Filter func(*Tool) bool
}

// Result is one tool found by a search, in the shape of GET /v1/tools/search.
type Result struct {
	Name string `json:"name"`
	// Description is the first sentence of the tool's description, at most 150 characters.
	Description string `json:"description"`
	// Score is the relevance, 0 to 1, rounded to three decimals; see the package doc.
	Score float64 `json:"score"`
}

// Search returns the tools that best match text, best first; ties go to the tool that
// comes first in the catalog. Text is words ("open a ticket in Linear"), a tool's exact
// name (which comes first, scored 1), or a namespace ("git.*", "namespace:git"), which
// returns every tool of the namespace, scored 1, in catalog order.
func (ix *Index) Search(text string, o SearchOptions) []Result {
	topK := o.TopK
	if topK == 0 {
		topK = 5
	}
	allow := func(t *Tool) bool { return o.Filter == nil || o.Filter(t) }

	if ns, ok := namespaceQuery(text); ok {
		var out []Result
		for _, name := range ix.cat.InNamespace(ns) {
			if t, _ := ix.cat.Lookup(name); allow(t) {
				out = append(out, result(t, 1))
			}
		}
		return out
	}
	var out []Result
	exact, ok := ix.cat.Lookup(strings.TrimSpace(text))
	if ok && allow(exact) {
		out = append(out, result(exact, 1))
	} else {
		exact = nil
	}
	ix.root()
	q := ix.parse(text)
	if len(q.concepts) == 0 {
		return out
	}
	hits := ix.steps(text, &q, func(q *query) []hit { return ix.top(q, topK, o) })
	for _, h := range hits {
		if topK > 0 && len(out) >= topK {
			break
		}
		if t := ix.tool(h.doc); t != exact && allow(t) {
			out = append(out, result(t, h.score))
		}
	}
	return out
}

// steps ranks q with rank and, for a task-shaped query (see task.go), interleaves that
// ranking with each clause's; Search and Hybrid.Search's lexical ranking share it.
func (ix *Index) steps(text string, q *query, rank func(*query) []hit) []hit {
	hits := rank(q)
	cs := ix.taskClauses(text, q)
	if cs == nil {
		return hits
	}
	lists := [][]hit{hits}
	for i := range cs {
		lists = append(lists, rank(&cs[i]))
	}
	return interleave(lists)
}

// taskClauses parses the clauses of a task-shaped query q (see task.go), or returns nil
// for a query of one clause or fewer than minTaskWords words the catalog has. The plain
// baseline and the keyword scorer, the simple searches, never split.
func (ix *Index) taskClauses(text string, q *query) []query {
	if ix.cfg.plain || ix.cfg.keyword || len(q.concepts) < minTaskWords {
		return nil
	}
	var qs []query
	for _, c := range clauses(text) {
		if q := ix.parse(c); len(q.concepts) > 0 {
			qs = append(qs, q)
		}
	}
	if len(qs) < 2 {
		return nil
	}
	return qs
}

// top ranks the tools for q under o's score cut, best first: the first topK+1 (a caller
// that skips the exact name still has topK), or all if unbounded or filtered.
func (ix *Index) top(q *query, topK int, o SearchOptions) []hit {
	minScore, share := cut(o.MinScore, q)
	hits := ix.rankCut(q, topK, minScore, share, o.Filter != nil)
	if share > 0 && len(hits) > 0 {
		// Relative to the best match in the catalog, hidden or not: Filter hides tools,
		// it does not change which matches count as weak.
		minScore = math.Min(minScore, share*hits[0].score)
	}
	for i, h := range hits {
		if h.score < minScore {
			return hits[:i]
		}
	}
	return hits
}

const (
	// DefaultMinScore is the default cut's absolute floor: with SearchOptions.MinScore
	// zero, a query none of whose own words any tool has (it matches only through
	// synonyms, or through the list-or-get word a question implies) keeps only results
	// scoring at least this.
	DefaultMinScore = 0.1
	// DefaultRelativeScore is the default cut for a query some tool has a word of: a
	// result scoring under DefaultMinScore is still kept if it scores at least this share
	// of the best result, which is therefore always kept.
	DefaultRelativeScore = 0.25
)

// cut resolves SearchOptions.MinScore for q: results must score at least floor or, when
// share is not zero, at least share times the best result if that is less.
func cut(minScore float64, q *query) (floor, share float64) {
	switch {
	case minScore < 0:
		return 0, 0
	case minScore > 0:
		return minScore, 0
	case q.literal():
		return DefaultMinScore, DefaultRelativeScore
	}
	return DefaultMinScore, 0
}

// literal reports whether a word of the query itself, not only a synonym of it or the
// list-or-get word of a question, is a term of some tool: the query matched something
// it said.
func (q *query) literal() bool {
	for _, c := range q.concepts {
		if c.own {
			return true
		}
	}
	return false
}

type hit struct {
	doc   int32
	score float64
}

// rank scores every tool that matches q and returns those at or above minScore, best
// first: all of them if unbounded, else the best topK+1 (a caller that skips the exact
// name still has topK).
func (ix *Index) rank(q *query, topK int, minScore float64, unbounded bool) []hit {
	return ix.rankCut(q, topK, minScore, 0, unbounded)
}

// rankCut is rank for a cut that may be relative: with share above zero, it returns at
// least the tools scoring min(minScore, share × the best score), and the caller, knowing
// the best score from the first hit, makes the exact cut.
func (ix *Index) rankCut(q *query, topK int, minScore, share float64, unbounded bool) []hit {
	sc := ix.getScratch()
	defer ix.scratch.Put(sc)
	acc, best := sc.acc, sc.best
	for _, c := range q.concepts {
		// A tool's score for a concept is its best-matching term's, never a sum over
		// synonyms: matching three words for "delete" is still one match.
		for _, a := range c.alts {
			own, more := ix.lists(a.id)
			for _, ps := range [2][]posting{own, more} {
				for _, p := range ps {
					if w := int(p.doc / 64); w < len(ix.dead) && ix.dead[w]&(1<<(p.doc%64)) != 0 {
						continue // a base tool this request's client replaced
					}
					v := a.w * float64(p.s)
					if best[p.doc] == 0 {
						sc.touched = append(sc.touched, p.doc)
					}
					if v > best[p.doc] {
						best[p.doc] = v
					}
				}
			}
		}
		for _, d := range sc.touched {
			if acc[d] == 0 {
				sc.cand = append(sc.cand, d)
			}
			acc[d] += best[d]
			best[d] = 0
		}
		sc.touched = sc.touched[:0]
	}

	// final = lex·boost·hint with boost in [1/(1+β), 1] and hint in [penalty, 1], so lex
	// bounds final from above and lex·lowest from below: a tool whose upper bound is under
	// the k-th best lower bound cannot make the cut and is never fully scored.
	lowest := 1 / (1 + ix.cfg.nameBoost)
	if len(q.hints) > 0 {
		lowest *= ix.cfg.hintPenalty
	}
	if share > 0 {
		// The best score is at least the best lexical share times lowest.
		minScore = math.Min(minScore, share*kthLargest(sc, acc, 1)*lowest/q.max)
	}
	floor := minScore
	if !unbounded && topK > 0 {
		floor = math.Max(floor, kthLargest(sc, acc, topK)*lowest/q.max)
	}
	// Bounded, the best topK+1 so far are kept in order; a tool whose lex, the upper bound
	// of its score, is under the last of them once there are topK+1 is not scored.
	bounded, n := !unbounded && topK > 0, topK+1
	hits := sc.hits[:0]
	for _, d := range sc.cand {
		lex := acc[d] / q.max
		acc[d] = 0
		if lex < floor || (bounded && len(hits) == n && lex < hits[n-1].score) {
			continue
		}
		h := hit{doc: d, score: lex * ix.boost(d, q)}
		if h.score < minScore {
			continue
		}
		if !bounded {
			hits = append(hits, h)
			continue
		}
		if len(hits) == n {
			if !before(h, hits[n-1]) {
				continue
			}
			hits = hits[:n-1]
		}
		hits = append(hits, h)
		for i := len(hits) - 1; i > 0 && before(h, hits[i-1]); i-- {
			hits[i], hits[i-1] = hits[i-1], h
		}
	}
	sc.cand = sc.cand[:0]
	if !bounded {
		sortHits(hits)
	}
	out := append([]hit(nil), hits...)
	sc.hits = hits[:0]
	return out
}

// before reports whether a ranks before b: higher score, then lower doc id, as sortHits.
func before(a, b hit) bool {
	return a.score > b.score || (a.score == b.score && a.doc < b.doc)
}

// boost is the name boost times the hint penalty of one tool.
func (ix *Index) boost(d int32, q *query) float64 {
	f := 1.0
	info := ix.info(d)
	if beta := ix.cfg.nameBoost; beta > 0 && len(info.name) > 0 {
		// The share of the name's words the query has; a word matched only through a
		// synonym counts at the synonym weight.
		covered := 0.0
		for _, id := range info.name {
			w := 0.0
			for _, a := range q.ids {
				if a.id == id && a.w > w {
					w = a.w
				}
			}
			covered += w
		}
		f = (1 + beta*covered/float64(len(info.name))) / (1 + beta)
	} else if beta > 0 {
		f = 1 / (1 + beta)
	}
	if len(q.hints) > 0 && !contains(q.hints, info.prefix) {
		f *= ix.cfg.hintPenalty
	}
	return f
}

// kthLargest is the k-th largest accumulated score among the candidates, or 0.
func kthLargest(sc *scratch, acc []float64, k int) float64 {
	if len(sc.cand) < k {
		return 0
	}
	top := sc.top[:0]
	for _, d := range sc.cand {
		v := acc[d]
		if len(top) < k {
			top = append(top, v)
			for i := len(top) - 1; i > 0 && top[i] < top[i-1]; i-- {
				top[i], top[i-1] = top[i-1], top[i]
			}
			continue
		}
		if v <= top[0] {
			continue
		}
		top[0] = v
		for i := 1; i < k && top[i] < top[i-1]; i++ {
			top[i], top[i-1] = top[i-1], top[i]
		}
	}
	sc.top = top
	return top[0]
}

// lists returns the term's base postings and the request's own.
func (ix *Index) lists(id int32) (own, more []posting) {
	r := ix.root()
	if int(id) < len(r.post) {
		own = r.post[id]
	}
	if ix.base != nil {
		more = ix.more[id]
	}
	return own, more
}

func result(t *Tool, score float64) Result {
	return Result{Name: t.Name, Description: shortDescription(t.Description), Score: math.Round(score*1000) / 1000}
}
