package meta

import (
	"context"
	"encoding/json"

	"github.com/maskgate/maskgate/toolsearch"
)

// Searcher finds tools for search_tools. TopK and minScore mean what
// toolsearch.SearchOptions says (zero: 5 and 0.1).
type Searcher interface {
	Search(text string, topK int, minScore float64) []toolsearch.Result
}

// OptionsSearcher is a Searcher that can also filter while it ranks, so that TopK fills
// with allowed tools, and that honours ctx (a hybrid searcher calls an embeddings
// backend). Execute prefers it where a searcher has it.
type OptionsSearcher interface {
	SearchOptions(ctx context.Context, text string, o toolsearch.SearchOptions) ([]toolsearch.Result, error)
}

// Names is what load_tool needs of the request's catalog; *toolsearch.Catalog has it.
type Names interface {
	Lookup(name string) (*toolsearch.Tool, bool)
	InNamespace(ns string) []string
}

var _ Names = (*toolsearch.Catalog)(nil)

// Phase is a filter-policy phase that Execute consults.
type Phase string

const (
	// PhaseSearch hides a tool from search results.
	PhaseSearch Phase = "search"
	// PhaseLoad refuses to load a tool.
	PhaseLoad Phase = "load"
)

// Env is what Execute needs of the request.
type Env struct {
	// Searcher answers search_tools. If nil, search_tools fails with a message for the
	// model.
	Searcher Searcher
	// Names is the request's catalog, for load_tool. If nil, every name is unknown.
	Names Names
	// Allowed is the filter policy: whether name may be shown (PhaseSearch) or loaded
	// (PhaseLoad). If nil, everything is allowed. It must not block.
	Allowed func(phase Phase, name string) bool
	// Loaded reports whether name is in the thread's loaded set already, so that it is
	// not loaded twice. If nil, nothing is.
	Loaded func(name string) bool
	// AutoLoad makes search_tools load what it finds.
	AutoLoad bool
	// TopK and MinScore tune search_tools as in toolsearch.SearchOptions; zero means the
	// defaults there (5 results, the default score cut).
	TopK     int
	MinScore float64
	// Define, under strategy index, returns the definitions a load puts into the
	// conversation, as an OpenAI tools array: those of names (what the call loads) and of
	// any loaded tool whose definition the conversation no longer holds; nil for none.
	// Nil under every other strategy: results then name tools and carry no definitions.
	Define func(names []string) json.RawMessage
}

// define is Define's answer for names, nil without Define.
func (e *Env) define(names []string) json.RawMessage {
	if e.Define == nil {
		return nil
	}
	return e.Define(names)
}

func (e *Env) allowed(p Phase, name string) bool { return e.Allowed == nil || e.Allowed(p, name) }

func (e *Env) loaded(name string) bool { return e.Loaded != nil && e.Loaded(name) }

// search runs a search with allow as the filter (nil: none).
func (e *Env) search(ctx context.Context, text string, topK int, minScore float64, allow func(string) bool) ([]toolsearch.Result, error) {
	if os, ok := e.Searcher.(OptionsSearcher); ok {
		o := toolsearch.SearchOptions{TopK: topK, MinScore: minScore}
		if allow != nil {
			o.Filter = func(t *toolsearch.Tool) bool { return allow(t.Name) }
		}
		return os.SearchOptions(ctx, text, o)
	}
	rs := e.Searcher.Search(text, topK, minScore)
	if allow == nil {
		return rs, nil
	}
	// Filtering after the fact may return fewer than topK; OptionsSearcher avoids that.
	out := rs[:0:0]
	for _, r := range rs {
		if allow(r.Name) {
			out = append(out, r)
		}
	}
	return out, nil
}

// IndexSearcher searches a toolsearch.Index (a profile's, or a request's from
// Index.WithClient).
type IndexSearcher struct{ Index *toolsearch.Index }

var (
	_ Searcher        = IndexSearcher{}
	_ OptionsSearcher = IndexSearcher{}
)

// Search implements Searcher.
func (s IndexSearcher) Search(text string, topK int, minScore float64) []toolsearch.Result {
	return s.Index.Search(text, toolsearch.SearchOptions{TopK: topK, MinScore: minScore})
}

// SearchOptions implements OptionsSearcher; the lexical search ignores ctx.
func (s IndexSearcher) SearchOptions(_ context.Context, text string, o toolsearch.SearchOptions) ([]toolsearch.Result, error) {
	return s.Index.Search(text, o), nil
}

// HybridSearcher searches a toolsearch.Hybrid: lexical and embedding ranks fused.
type HybridSearcher struct{ Hybrid *toolsearch.Hybrid }

var (
	_ Searcher        = HybridSearcher{}
	_ OptionsSearcher = HybridSearcher{}
)

// Search implements Searcher without a deadline; Execute uses SearchOptions instead.
func (s HybridSearcher) Search(text string, topK int, minScore float64) []toolsearch.Result {
	rs, _ := s.Hybrid.Search(context.Background(), text, toolsearch.SearchOptions{TopK: topK, MinScore: minScore})
	return rs
}

// SearchOptions implements OptionsSearcher.
func (s HybridSearcher) SearchOptions(ctx context.Context, text string, o toolsearch.SearchOptions) ([]toolsearch.Result, error) {
	return s.Hybrid.Search(ctx, text, o)
}
