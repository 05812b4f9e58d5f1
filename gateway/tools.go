package gateway

import (
	"encoding/json"
	"log/slog"
	"net/http"
	"strconv"
	"strings"

	"github.com/maskgate/maskgate/backends/oai"
	"github.com/maskgate/maskgate/gateway/planner"
	"github.com/maskgate/maskgate/toolsearch"
)

// maxSearchK caps k on GET /v1/tools/search.
const maxSearchK = 100

// listTools serves the caller's profile's catalog exactly as it is rendered into
// prompts, with its version, so operators can see what the engine sees and diff it
// across deployments. A key that may choose profiles names one with X-Maskgate-Profile.
func listTools(pl *planner.Planner, log *slog.Logger) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		p, _, err := pl.ProfileFor(r.Header, callerOf(r.Context()).key, "")
		if err != nil {
			writeError(w, log, err)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		ix := p.Index()
		if ix == nil {
			_, _ = w.Write([]byte(`{"object":"list","version":"","data":[]}`))
			return
		}
		cat := ix.Catalog()
		if r.URL.Query().Get("view") == "index" {
			// Strategy index's view: the compact index load_tool's description ends with.
			text, id := cat.IndexText(false)
			buf := append([]byte(`{"object":"tool_index","version":`), strconv.Quote(cat.Version())...)
			buf = append(append(buf, `,"index_id":`...), strconv.Quote(id)...)
			buf = append(oai.AppendString(append(buf, `,"text":`...), text), '}')
			_, _ = w.Write(buf)
			return
		}
		buf := make([]byte, 0, 64+len(cat.Version()))
		buf = append(buf, `{"object":"list","version":`...)
		buf = strconv.AppendQuote(buf, cat.Version())
		if counts := pl.ToolTokens(cat); counts != nil {
			buf = append(buf, `,"tokens":`...)
			buf = append(buf, counts...)
		}
		buf = append(buf, `,"data":`...)
		_, _ = w.Write(buf)
		_, _ = cat.WriteTo(w)
		_, _ = w.Write([]byte("}"))
	}
}

// searchTools answers GET /v1/tools/search?q=TEXT&k=N over the caller's profile's
// catalog.
func searchTools(pl *planner.Planner, log *slog.Logger) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		p, _, err := pl.ProfileFor(r.Header, callerOf(r.Context()).key, "")
		if err != nil {
			writeError(w, log, err)
			return
		}
		q := strings.TrimSpace(r.URL.Query().Get("q"))
		if q == "" {
			writeError(w, log, badRequest("missing query: pass ?q=TEXT (words, a tool name, or a namespace such as git.*)", "q"))
			return
		}
		k := p.SearchTopK
		if raw := r.URL.Query().Get("k"); raw != "" {
			n, err := strconv.Atoi(raw)
			if err != nil || n < 1 || n > maxSearchK {
				writeError(w, log, badRequest("k must be an integer from 1 to "+strconv.Itoa(maxSearchK), "k"))
				return
			}
			k = n
		}
		results := []toolsearch.Result{}
		opts := toolsearch.SearchOptions{TopK: k, MinScore: p.SearchMinScore}
		if ix := p.Index(); ix != nil {
			removed := p.Catalog.Removed()
			opts.Filter = func(t *toolsearch.Tool) bool { return !removed[t.Name] }
			if h := p.HybridFor(ix); h != nil {
				found, err := h.Search(r.Context(), q, opts)
				if err != nil {
					log.Warn("embeddings failed; lexical results only", "request_id", requestID(r.Context()), "error", err)
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
			writeError(w, log, err)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(body)
	}
}
