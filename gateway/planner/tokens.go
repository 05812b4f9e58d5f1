package planner

import (
	"encoding/json"
	"sync"

	"github.com/maskgate/maskgate/toolsearch"
)

// tokenCounts keeps each catalog version's token counts, counted once.
type tokenCounts struct {
	mu sync.Mutex
	by map[string][]byte
}

// maxTokenCounts bounds the catalog versions whose counts are kept.
const maxTokenCounts = 64

// ToolTokens is {"total": N, "tools": {"name": n, ...}} for cat, counted once per
// version; nil without a token counter (Config.Tokens).
func (pl *Planner) ToolTokens(cat *toolsearch.Catalog) []byte {
	if pl.cfg.Tokens == nil {
		return nil
	}
	pl.tokens.mu.Lock()
	defer pl.tokens.mu.Unlock()
	if b, ok := pl.tokens.by[cat.Version()]; ok {
		return b
	}
	per := make(map[string]int, cat.Len())
	for i := 0; i < cat.Len(); i++ {
		t := cat.Tool(i)
		one := cat.AppendNames(nil, []string{t.Name})
		per[t.Name] = pl.cfg.Tokens.ToolTokens(one[1 : len(one)-1]) // the object, not its array
	}
	b, _ := json.Marshal(struct {
		Total int            `json:"total"`
		Tools map[string]int `json:"tools"`
	}{pl.cfg.Tokens.CatalogTokens(cat.Render()), per})
	if pl.tokens.by == nil || len(pl.tokens.by) >= maxTokenCounts {
		pl.tokens.by = map[string][]byte{}
	}
	pl.tokens.by[cat.Version()] = b
	return b
}
