package gateway

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
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

// modelsAPI is GET /v1/models.
type modelsAPI struct {
	router       *router
	probeTimeout time.Duration
	log          *slog.Logger
}

// ServeHTTP lists the configured model names, plus what each wildcard backend says it has
// (asked concurrently, each within ProbeTimeout; one that does not answer is left out),
// less what the caller's key may not use.
func (a modelsAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
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
	writeJSON(w, http.StatusOK, map[string]any{"object": "list", "data": data})
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
