package gateway

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"sync"

	"github.com/maskgate/maskgate/toolsearch"
)

// maxSearchK caps k on GET /v1/tools/search.
const maxSearchK = 100

// tools serves the caller's profile's catalog exactly as it is rendered into prompts,
// with its version, so operators can see what the engine sees and diff it across
// deployments. A key that may choose profiles names one with X-Maskgate-Profile.
func (s *Server) tools(w http.ResponseWriter, r *http.Request) {
	p, _, err := s.profileFor(r, callerOf(r.Context()), "")
	if err != nil {
		writeError(w, s.log, err)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	ix := p.index()
	if ix == nil {
		_, _ = w.Write([]byte(`{"object":"list","version":"","data":[]}`))
		return
	}
	cat := ix.Catalog()
	buf := make([]byte, 0, 64+len(cat.Version()))
	buf = append(buf, `{"object":"list","version":`...)
	buf = strconv.AppendQuote(buf, cat.Version())
	if counts := s.toolTokens(cat); counts != nil {
		buf = append(buf, `,"tokens":`...)
		buf = append(buf, counts...)
	}
	buf = append(buf, `,"data":`...)
	_, _ = w.Write(buf)
	_, _ = cat.WriteTo(w)
	_, _ = w.Write([]byte("}"))
}

// toolSearch answers GET /v1/tools/search?q=TEXT&k=N over the caller's profile's
// catalog.
func (s *Server) toolSearch(w http.ResponseWriter, r *http.Request) {
	p, _, err := s.profileFor(r, callerOf(r.Context()), "")
	if err != nil {
		writeError(w, s.log, err)
		return
	}
	q := strings.TrimSpace(r.URL.Query().Get("q"))
	if q == "" {
		writeError(w, s.log, badRequest("missing query: pass ?q=TEXT (words, a tool name, or a namespace such as git.*)", "q"))
		return
	}
	k := p.SearchTopK
	if raw := r.URL.Query().Get("k"); raw != "" {
		n, err := strconv.Atoi(raw)
		if err != nil || n < 1 || n > maxSearchK {
			writeError(w, s.log, badRequest("k must be an integer from 1 to "+strconv.Itoa(maxSearchK), "k"))
			return
		}
		k = n
	}
	results := []toolsearch.Result{}
	opts := toolsearch.SearchOptions{TopK: k, MinScore: p.SearchMinScore}
	if ix := p.index(); ix != nil {
		removed := p.Catalog.Removed()
		opts.Filter = func(t *toolsearch.Tool) bool { return !removed[t.Name] }
		if h := p.hybridFor(ix); h != nil {
			found, err := h.Search(r.Context(), q, opts)
			if err != nil {
				s.log.Warn("embeddings failed; lexical results only", "request_id", requestID(r.Context()), "error", err)
			}
			if found != nil {
				results = found
			}
		} else if found := ix.Search(q, opts); found != nil {
			results = found
		}
	}
	body, err := json.Marshal(struct {
		Results []toolsearch.Result `json:"results"`
	}{results})
	if err != nil {
		writeError(w, s.log, err)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(body)
}

// tokenCounts keeps each catalog version's token counts, counted once.
type tokenCounts struct {
	mu sync.Mutex
	by map[string][]byte
}

// maxTokenCounts bounds the catalog versions whose counts are kept.
const maxTokenCounts = 64

// toolTokens is {"total": N, "tools": {"name": n, ...}} for cat, counted once per
// version.
func (s *Server) toolTokens(cat *toolsearch.Catalog) []byte {
	if s.opt.Tokens == nil {
		return nil
	}
	s.tokens.mu.Lock()
	defer s.tokens.mu.Unlock()
	if b, ok := s.tokens.by[cat.Version()]; ok {
		return b
	}
	per := make(map[string]int, cat.Len())
	for i := 0; i < cat.Len(); i++ {
		t := cat.Tool(i)
		one := cat.AppendNames(nil, []string{t.Name})
		per[t.Name] = s.opt.Tokens.ToolTokens(one[1 : len(one)-1]) // the object, not its array
	}
	b, _ := json.Marshal(struct {
		Total int            `json:"total"`
		Tools map[string]int `json:"tools"`
	}{s.opt.Tokens.CatalogTokens(cat.Render()), per})
	if s.tokens.by == nil || len(s.tokens.by) >= maxTokenCounts {
		s.tokens.by = map[string][]byte{}
	}
	s.tokens.by[cat.Version()] = b
	return b
}
