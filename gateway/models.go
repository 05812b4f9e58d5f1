package gateway

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/maskgate/maskgate/backends"
)

type modelEntry struct {
	ID      string `json:"id"`
	Object  string `json:"object"`
	Created int64  `json:"created"`
	OwnedBy string `json:"owned_by"`
}

// modelsAPI is GET /v1/models and GET /v1/models/{id}. Both answer in OpenAI's shape, or
// in Anthropic's for a caller that sends an anthropic-version header: the Anthropic SDKs
// send it on every request and OpenAI's never do, and the two APIs share these paths, so
// the header is the only thing that tells an Anthropic client's models.list() from an
// OpenAI client's.
type modelsAPI struct {
	router       *router
	probeTimeout time.Duration
	log          *slog.Logger
}

// anthropicCaller reports whether r comes from an Anthropic client (it sends
// anthropic-version; OpenAI's never do).
func anthropicCaller(r *http.Request) bool { return r.Header.Get("anthropic-version") != "" }

// anthropicModel is a model in Anthropic's shape. The gateway knows no release date, so
// created_at is the Unix epoch, as OpenAI's created is 0.
type anthropicModel struct {
	Type        string `json:"type"`
	ID          string `json:"id"`
	DisplayName string `json:"display_name"`
	CreatedAt   string `json:"created_at"`
}

func anthropicModelOf(m modelEntry) anthropicModel {
	return anthropicModel{Type: "model", ID: m.ID, DisplayName: m.ID,
		CreatedAt: time.Unix(m.Created, 0).UTC().Format(time.RFC3339)}
}

// anthropicPage is Anthropic's list: first_id and last_id are null on an empty page.
type anthropicPage struct {
	Data    []anthropicModel `json:"data"`
	HasMore bool             `json:"has_more"`
	FirstID *string          `json:"first_id"`
	LastID  *string          `json:"last_id"`
}

// ServeHTTP lists the models; Anthropic's shape pages them by limit (1-1000, default
// 20), after_id and before_id as Anthropic does, in the same order as OpenAI's list.
func (a modelsAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	data := a.list(r)
	if !anthropicCaller(r) {
		writeJSON(w, http.StatusOK, map[string]any{"object": "list", "data": data})
		return
	}
	page, err := pageOf(data, r.URL.Query())
	if err != nil {
		writeErrorAs(w, a.log, err, anthropicEnvelope)
		return
	}
	writeJSON(w, http.StatusOK, page)
}

// pageOf is Anthropic's page of data for the query's limit, after_id and before_id.
func pageOf(data []modelEntry, q url.Values) (anthropicPage, error) {
	limit := 20
	if s := q.Get("limit"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > 1000 {
			return anthropicPage{}, badRequest("limit: must be an integer from 1 to 1000, got "+strconv.Quote(s), "limit")
		}
		limit = n
	}
	after, before := q.Get("after_id"), q.Get("before_id")
	if after != "" && before != "" {
		return anthropicPage{}, badRequest("after_id and before_id: give one of them, not both", "after_id")
	}
	index := func(param, id string) (int, error) {
		for i, m := range data {
			if m.ID == id {
				return i, nil
			}
		}
		return 0, badRequest(param+": "+strconv.Quote(id)+" is not a model this key may list", param)
	}
	lo, hi, more := 0, 0, false
	switch {
	case before != "":
		i, err := index("before_id", before)
		if err != nil {
			return anthropicPage{}, err
		}
		lo, hi = max(0, i-limit), i
		more = lo > 0
	default:
		if after != "" {
			i, err := index("after_id", after)
			if err != nil {
				return anthropicPage{}, err
			}
			lo = i + 1
		}
		hi = min(len(data), lo+limit)
		more = hi < len(data)
	}
	page := anthropicPage{Data: []anthropicModel{}, HasMore: more}
	for _, m := range data[lo:hi] {
		page.Data = append(page.Data, anthropicModelOf(m))
	}
	if n := len(page.Data); n > 0 {
		page.FirstID, page.LastID = &page.Data[0].ID, &page.Data[n-1].ID
	}
	return page, nil
}

// retrieve is GET /v1/models/{id}: the model if the list the caller would get names it,
// else a 404 model_not_found (a model the key may not use is as unknown as one nobody
// serves, as on OpenAI). The id is the rest of the path, so names with a slash
// (Qwen/Qwen3-8B, or %2F-escaped as the SDKs send it) work.
func (a modelsAPI) retrieve(w http.ResponseWriter, r *http.Request) {
	id := strings.TrimPrefix(r.URL.Path, "/v1/models/")
	for _, m := range a.list(r) {
		if m.ID == id {
			if anthropicCaller(r) {
				writeJSON(w, http.StatusOK, anthropicModelOf(m))
			} else {
				writeJSON(w, http.StatusOK, m)
			}
			return
		}
	}
	writeErrorAs(w, a.log, &apiError{Status: http.StatusNotFound, Type: "invalid_request_error", Param: "model", Code: "model_not_found",
		Message: "the model " + strconv.Quote(id) + " does not exist on this gateway; GET /v1/models lists the models it routes"}, envelopeFor(r))
}

// list is the configured model names, plus what each wildcard backend says it has
// (asked concurrently, each within ProbeTimeout; one that does not answer is left out),
// less what the caller's key may not use.
func (a modelsAPI) list(r *http.Request) []modelEntry {
	key := callerOf(r.Context()).key
	seen := map[string]bool{}
	var data []modelEntry
	add := func(id, owner string) {
		if key != nil && (!key.AllowsModel(id) || !key.AllowsBackend(owner)) {
			return
		}
		if !seen[id] {
			seen[id] = true
			data = append(data, modelEntry{ID: id, Object: "model", OwnedBy: owner})
		}
	}
	for _, id := range a.router.names() {
		rt, _ := a.router.lookup(id)
		add(id, rt.up.Name)
	}

	type listed struct {
		owner string
		ids   []string
	}
	results := make([]listed, len(a.router.ups))
	var wg sync.WaitGroup
	for i, u := range a.router.ups {
		l, ok := u.Backend.(backends.ModelLister)
		if !ok || !servesAny(u) || (key != nil && !key.AllowsBackend(u.Name)) {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(r.Context(), a.probeTimeout)
			defer cancel()
			ids, err := l.ListModels(ctx)
			if err != nil {
				a.log.Info("listing models failed", "request_id", requestID(r.Context()), "backend", u.Name, "error", err)
				return
			}
			results[i] = listed{owner: u.Name, ids: ids}
		}()
	}
	wg.Wait()
	for _, l := range results {
		for _, id := range l.ids {
			add(id, l.owner)
		}
	}
	if data == nil {
		data = []modelEntry{}
	}
	return data
}

func servesAny(u *Upstream) bool {
	for _, m := range u.Models {
		if m == "*" {
			return true
		}
	}
	return false
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	body, err := json.Marshal(v)
	if err != nil {
		status, body = http.StatusInternalServerError, []byte(`{"error":{"message":"encoding failed","type":"server_error","param":null,"code":null}}`)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(body)
}
