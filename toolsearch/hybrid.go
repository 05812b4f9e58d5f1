package toolsearch

import (
	"context"
	"crypto/sha256"
	"fmt"
	"strings"
	"sync"
)

// Hybrid search fuses the lexical ranking with a ranking by embedding similarity. A
// tool's fused score is Σ 1/(K + rank) over the two rankings (reciprocal rank fusion),
// each ranking cut at Candidates; it is reported divided by its most, 2/(K+1), so a tool
// first in both scores 1 and a tool first in one only about 0.5.
type Hybrid struct {
	ix   *Index
	e    Embedder
	opt  HybridOptions
	vecs [][]float32 // by doc id, unit length; the base's for a request Hybrid
	keys map[[32]byte][]float32

	base *Hybrid // a request Hybrid's profile Hybrid
	mu   sync.Mutex
	own  [][]float32 // a request Hybrid's client tool vectors, once embedded
}

// HybridOptions tune a Hybrid. The zero value is the default.
type HybridOptions struct {
	// K is the rank constant of the fusion; zero means 60.
	K int
	// Candidates is how much of each ranking is fused; zero means 50.
	Candidates int
	// Previous, if non-nil, is the Hybrid of an earlier catalog version: tools whose text
	// has not changed keep its vectors instead of being embedded again.
	Previous *Hybrid
}

// NewHybrid embeds every tool of ix's catalog, once: build it once per catalog version
// alongside the Index and reuse it. Requests add their own tools with WithClient.
func NewHybrid(ctx context.Context, ix *Index, e Embedder, o HybridOptions) (*Hybrid, error) {
	if o.K <= 0 {
		o.K = 60
	}
	if o.Candidates <= 0 {
		o.Candidates = 50
	}
	h := &Hybrid{ix: ix, e: e, opt: o, keys: map[[32]byte][]float32{}}
	prev := o.Previous
	h.opt.Previous = nil // keep no chain of old versions alive
	texts := make([]string, ix.cat.Len())
	var todo []int
	for i, t := range ix.cat.tools {
		texts[i] = embedText(t)
		if prev != nil {
			if v, ok := prev.keys[sha256.Sum256([]byte(texts[i]))]; ok {
				h.keys[sha256.Sum256([]byte(texts[i]))] = v
				continue
			}
		}
		todo = append(todo, i)
	}
	if len(todo) > 0 {
		batch := make([]string, len(todo))
		for j, i := range todo {
			batch[j] = texts[i]
		}
		vs, err := e.Embed(ctx, batch)
		if err != nil {
			return nil, fmt.Errorf("embedding %d tools: %w", len(batch), err)
		}
		if len(vs) != len(batch) {
			return nil, fmt.Errorf("embedding %d tools: got %d vectors", len(batch), len(vs))
		}
		for j, i := range todo {
			h.keys[sha256.Sum256([]byte(texts[i]))] = unit(vs[j])
		}
	}
	h.vecs = make([][]float32, len(texts))
	for i, s := range texts {
		h.vecs[i] = h.keys[sha256.Sum256([]byte(s))]
	}
	return h, nil
}

// Index is the lexical index h fuses with.
func (h *Hybrid) Index() *Index { return h.ix }

// WithClient is Index.WithClient for hybrid search. The client's tools are embedded on
// the first Search, in the same request as the query.
func (h *Hybrid) WithClient(tools []Tool) (*Hybrid, error) {
	if h.base != nil {
		return nil, fmt.Errorf("toolsearch: WithClient on a request Hybrid; call it on the profile one")
	}
	ix, err := h.ix.WithClient(tools)
	if err != nil {
		return nil, err
	}
	return &Hybrid{ix: ix, e: h.e, opt: h.opt, vecs: h.vecs, base: h}, nil
}

// Search is Index.Search with fused ranking; Result.Score is the normalised fused score,
// and MinScore applies to it. Exact names and namespace queries are answered lexically.
// If the embedder fails, Search returns the lexical results and the error, so a caller
// can log the error and still answer.
func (h *Hybrid) Search(ctx context.Context, text string, o SearchOptions) ([]Result, error) {
	if _, ok := namespaceQuery(text); ok {
		return h.ix.Search(text, o), nil
	}
	if _, ok := h.ix.cat.Lookup(strings.TrimSpace(text)); ok {
		return h.ix.Search(text, o), nil
	}
	qv, own, err := h.embedQuery(ctx, text)
	if err != nil {
		return h.ix.Search(text, o), err
	}
	ix := h.ix
	ix.root()
	var lexical []hit
	if q := ix.parse(text); len(q.concepts) > 0 {
		lexical = ix.steps(text, &q, func(q *query) []hit { return ix.rank(q, h.opt.Candidates, 0, false) })
		if len(lexical) > h.opt.Candidates {
			lexical = lexical[:h.opt.Candidates]
		}
	}
	semantic := h.nearest(qv, own)
	return h.fuse(lexical, semantic, o), nil
}

// embedQuery embeds the query and, the first time, a request's client tools. Only a
// request Hybrid, used by one request, takes its lock; the profile Hybrid takes none.
func (h *Hybrid) embedQuery(ctx context.Context, text string) ([]float32, [][]float32, error) {
	if h.base == nil {
		vs, err := h.e.Embed(ctx, []string{text})
		if err != nil {
			return nil, nil, fmt.Errorf("embedding the query: %w", err)
		}
		if len(vs) != 1 {
			return nil, nil, fmt.Errorf("embedding the query: got %d vectors for 1 text", len(vs))
		}
		return unit(vs[0]), nil, nil
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	texts := []string{text}
	if h.own == nil {
		h.ix.root()
		for _, t := range h.ix.client {
			texts = append(texts, embedText(t))
		}
	}
	vs, err := h.e.Embed(ctx, texts)
	if err != nil {
		return nil, nil, fmt.Errorf("embedding the query: %w", err)
	}
	if len(vs) != len(texts) {
		return nil, nil, fmt.Errorf("embedding the query: got %d vectors for %d texts", len(vs), len(texts))
	}
	if len(texts) > 1 {
		h.own = make([][]float32, len(texts)-1)
		for i, v := range vs[1:] {
			h.own[i] = unit(v)
		}
	}
	return unit(vs[0]), h.own, nil
}
