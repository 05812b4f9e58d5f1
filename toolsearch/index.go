package toolsearch

import (
	"fmt"
	"sync"
)

// An Index searches one catalog. Build one per profile catalog version with NewIndex and
// keep it; per request, WithClient layers the client's tools over it without changing it.
// An Index is immutable once built and safe for concurrent use; Search takes no locks.
type Index struct {
	cat *Catalog
	cfg *config

	// The indexed tools: dict maps a term to its postings, ids 0..len(post)-1.
	dict  map[string]int32
	post  [][]posting
	docs  []docInfo
	n     int // live tools: the N of idf
	avg   [numFields]float64
	stems map[string]string // word → term, for request indexes to reuse

	// A request index (WithClient) is its base plus the client's tools, built on first
	// use. Its own docs are numbered after the base's; new terms after the base's.
	base    *Index
	once    sync.Once
	client  []*Tool
	extra   map[string]int32    // terms the base lacks
	more    map[int32][]posting // postings of client tools, by term
	dfDelta map[int32]int       // base tools replaced by client tools leave df
	dead    []uint64            // bitset of replaced base docs

	scratch *sync.Pool // shared by a base index and its request indexes
}

// NewIndex indexes every tool of c. It costs roughly a tokenised, stemmed pass over the
// catalog's text; reuse the result for as long as the catalog's Version is unchanged.
func NewIndex(c *Catalog, o Options) *Index {
	ix := &Index{cat: c, cfg: o.config(), dict: map[string]int32{}, scratch: &sync.Pool{}}
	stems := newStemCache(nil)
	docs := make([]docTerms, len(c.tools))
	for i, t := range c.tools {
		docs[i] = ix.cfg.analyze(t, stems)
	}
	ix.avg = averages(docs)
	ix.docs = make([]docInfo, len(docs))
	for i := range docs {
		d := &docs[i]
		for k := range d.terms {
			tf := &d.terms[k]
			id, ok := ix.dict[tf.term]
			if !ok {
				id = int32(len(ix.post))
				ix.dict[tf.term] = id
				ix.post = append(ix.post, nil)
			}
			if s := ix.cfg.weight(&tf.tf, &d.lens, &ix.avg); s > 0 {
				ix.post[id] = append(ix.post[id], posting{doc: int32(i), s: s})
			}
		}
		t := c.tools[i]
		ix.docs[i] = docInfo{prefix: d.info.prefix, name: ix.ids(ix.cfg.nameTerms(t, c.ns.of(t.Name), stems))}
	}
	ix.n = len(docs)
	ix.stems = stems.own
	return ix
}

// ids returns the ids of the terms the index has.
func (ix *Index) ids(terms []string) []int32 {
	var out []int32
	for _, t := range terms {
		if id, ok := ix.lookup(t); ok {
			out = append(out, id)
		}
	}
	return out
}

// WithClient returns an index over ix's catalog plus one request's client tools (see
// Catalog.WithClient for the merge rule and errors). ix is not changed and stays usable by
// other requests; the result belongs to this request alone. The client's tools are
// indexed on the first Search, against ix's statistics: N and document frequencies count
// them, while field-length averages stay ix's so that ix's precomputed weights hold.
func (ix *Index) WithClient(tools []Tool) (*Index, error) {
	if ix.base != nil {
		return nil, fmt.Errorf("toolsearch: WithClient on a request index; call it on the profile index")
	}
	c, err := ix.cat.WithClient(tools)
	if err != nil {
		return nil, err
	}
	return &Index{cat: c, cfg: ix.cfg, base: ix, scratch: ix.scratch}, nil
}

// Catalog is the catalog the index searches.
func (ix *Index) Catalog() *Catalog { return ix.cat }

// build indexes a request index's client tools.
func (ix *Index) build() {
	b := ix.base
	ix.client = ix.cat.tools[len(ix.cat.tools)-len(ix.cat.client):]
	stems := newStemCache(b.stems)
	docs := make([]docTerms, len(ix.client))
	for i, t := range ix.client {
		docs[i] = ix.cfg.analyze(t, stems)
	}
	avg := b.avg
	if b.n == 0 {
		avg = averages(docs)
	}
	ix.extra = map[string]int32{}
	ix.more = map[int32][]posting{}
	ix.docs = make([]docInfo, len(docs))
	nb := int32(len(b.docs))
	for j := range docs {
		d := &docs[j]
		for k := range d.terms {
			tf := &d.terms[k]
			id, ok := ix.lookup(tf.term)
			if !ok {
				id = int32(len(b.post) + len(ix.extra))
				ix.extra[tf.term] = id
			}
			if s := ix.cfg.weight(&tf.tf, &d.lens, &avg); s > 0 {
				ix.more[id] = append(ix.more[id], posting{doc: nb + int32(j), s: s})
			}
		}
		t := ix.client[j]
		ix.docs[j] = docInfo{prefix: d.info.prefix, name: ix.ids(ix.cfg.nameTerms(t, ix.cat.ns.of(t.Name), stems))}
	}
	if len(ix.cat.overridden) > 0 {
		ix.dead = make([]uint64, (len(b.docs)+63)/64)
		ix.dfDelta = map[int32]int{}
		for name := range ix.cat.overridden {
			doc := b.cat.byName[name]
			ix.dead[doc/64] |= 1 << (doc % 64)
			for _, tf := range ix.cfg.analyze(b.cat.tools[doc], stems).terms {
				if id, ok := b.dict[tf.term]; ok {
					ix.dfDelta[id]--
				}
			}
		}
	}
	ix.n = b.n - len(ix.cat.overridden) + len(ix.client)
}

// root returns the index's root (the one with the base dictionary), building a request
// index's own part first if needed.
func (ix *Index) root() *Index {
	if ix.base == nil {
		return ix
	}
	ix.once.Do(ix.build)
	return ix.base
}

func (ix *Index) lookup(term string) (int32, bool) {
	r := ix
	if ix.base != nil {
		r = ix.base
	}
	if id, ok := r.dict[term]; ok {
		return id, true
	}
	id, ok := ix.extra[term]
	return id, ok
}

// df is the number of live tools with the term.
func (ix *Index) df(id int32) int {
	r := ix.root()
	n := 0
	if int(id) < len(r.post) {
		n = len(r.post[id])
	}
	if ix.base != nil {
		n += len(ix.more[id]) + ix.dfDelta[id]
	}
	return n
}

// docCount is the number of doc ids in use, replaced ones included.
func (ix *Index) docCount() int {
	if ix.base == nil {
		return len(ix.docs)
	}
	return len(ix.base.docs) + len(ix.docs)
}

func (ix *Index) info(doc int32) *docInfo {
	if ix.base == nil {
		return &ix.docs[doc]
	}
	if nb := int32(len(ix.base.docs)); doc >= nb {
		return &ix.docs[doc-nb]
	}
	return &ix.base.docs[doc]
}

func (ix *Index) tool(doc int32) *Tool {
	if ix.base == nil {
		return ix.cat.tools[doc]
	}
	if nb := int32(len(ix.base.docs)); doc >= nb {
		return ix.client[doc-nb]
	}
	return ix.base.cat.tools[doc]
}
