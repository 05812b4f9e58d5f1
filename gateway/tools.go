package gateway

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"

	"github.com/maskgate/maskgate/toolsearch"
)

// maxSearchK caps k on GET /v1/tools/search.
const maxSearchK = 100

// tools serves the profile's catalog exactly as it is rendered into prompts, with its
// version, so operators can see what the engine sees and diff it across deployments.
func (s *Server) tools(w http.ResponseWriter, r *http.Request) {
	cat := s.catalog()
	w.Header().Set("Content-Type", "application/json")
	if cat == nil {
		_, _ = w.Write([]byte(`{"object":"list","version":"","data":[]}`))
		return
	}
	buf := make([]byte, 0, 64+len(cat.Version()))
	buf = append(buf, `{"object":"list","version":`...)
	buf = strconv.AppendQuote(buf, cat.Version())
	if counts := s.toolTokens(); counts != nil {
		buf = append(buf, `,"tokens":`...)
		buf = append(buf, counts...)
	}
	buf = append(buf, `,"data":`...)
	_, _ = w.Write(buf)
	_, _ = cat.WriteTo(w)
	_, _ = w.Write([]byte("}"))
}

// toolSearch answers GET /v1/tools/search?q=TEXT&k=N over the profile's catalog.
func (s *Server) toolSearch(w http.ResponseWriter, r *http.Request) {
	q := strings.TrimSpace(r.URL.Query().Get("q"))
	if q == "" {
		writeError(w, s.log, badRequest("missing query: pass ?q=TEXT (words, a tool name, or a namespace such as git.*)", "q"))
		return
	}
	k := s.opt.SearchTopK
	if raw := r.URL.Query().Get("k"); raw != "" {
		n, err := strconv.Atoi(raw)
		if err != nil || n < 1 || n > maxSearchK {
			writeError(w, s.log, badRequest("k must be an integer from 1 to "+strconv.Itoa(maxSearchK), "k"))
			return
		}
		k = n
	}
	results := []toolsearch.Result{}
	opts := toolsearch.SearchOptions{TopK: k, MinScore: s.opt.SearchMinScore}
	switch {
	case s.opt.Hybrid != nil:
		found, err := s.opt.Hybrid.Search(r.Context(), q, opts)
		if err != nil {
			s.log.Warn("embeddings failed; lexical results only", "request_id", requestID(r.Context()), "error", err)
		}
		if found != nil {
			results = found
		}
	case s.opt.Tools != nil:
		if found := s.opt.Tools.Search(q, opts); found != nil {
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

func (s *Server) catalog() *toolsearch.Catalog {
	if s.opt.Tools == nil {
		return nil
	}
	return s.opt.Tools.Catalog()
}

// toolTokens is {"total": N, "tools": {"name": n, ...}} for the profile catalog, counted
// once (the catalog does not change while the gateway runs).
func (s *Server) toolTokens() []byte {
	if s.opt.Tokens == nil || s.opt.Tools == nil {
		return nil
	}
	s.tokensOnce.Do(func() {
		cat := s.opt.Tools.Catalog()
		per := make(map[string]int, cat.Len())
		for i := 0; i < cat.Len(); i++ {
			t := cat.Tool(i)
			one := cat.AppendNames(nil, []string{t.Name})
			per[t.Name] = s.opt.Tokens.ToolTokens(one[1 : len(one)-1]) // the object, not its array
		}
		s.tokensJSON, _ = json.Marshal(struct {
			Total int            `json:"total"`
			Tools map[string]int `json:"tools"`
		}{s.opt.Tokens.CatalogTokens(cat.Render()), per})
	})
	return s.tokensJSON
}
