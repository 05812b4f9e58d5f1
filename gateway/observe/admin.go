package observe

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/maskgate/maskgate/backends"
	"github.com/maskgate/maskgate/backends/oai"
	"github.com/maskgate/maskgate/gateway/planner"
	"github.com/maskgate/maskgate/tenant"
	"github.com/maskgate/maskgate/toolsearch/state"
)

// admin serves /admin/: thread statistics and clean-up, behind AdminKey.
//
//	GET    /admin/threads           {"threads","bytes","oldest_access"}
//	DELETE /admin/threads           clear all: {"cleared": N}
//	DELETE /admin/threads/{id}      clear one: {"deleted": bool}. id is the gateway's
//	                                (X-Maskgate-Thread), or the one the client sent
//	                                (X-Thread-Id, metadata.thread_id) with ?key=NAME for
//	                                the key that sent it (none: the anonymous caller)
//	                                and ?profile=NAME when not the default profile
//	POST   /admin/threads/cleanup   drop threads idle past the TTL now: {"removed": N}
//
// The dashboard, the request log, live events and catalog views are dashboard.go's;
// every endpoint here also takes the dashboard's session cookie.
func (v *View) admin(w http.ResponseWriter, r *http.Request) {
	if v.opt.AdminKey == "" {
		v.opt.WriteError(w, &backends.Error{Status: http.StatusNotFound, Type: "invalid_request_error", Code: "admin_disabled",
			Message: "the admin API is off; set admin_key_env in the config to the name of a variable holding the admin key"})
		return
	}
	if wait := v.signin.throttled(r, v.now()); wait > 0 {
		v.tooManyGuesses(w, wait)
		return
	}
	if r.Header.Get("Authorization") != "" && !v.adminBearer(r) {
		v.signin.failed(r, v.now()) // a wrong key guessed as a bearer; the handler answers 401
	}
	if v.adminPages(w, r) { // the dashboard, the request log, live events, catalogs (dashboard.go)
		return
	}
	// Bearer only (never x-api-key), compared as hashes so that the time taken says
	// nothing of the key's length either; or the dashboard's session cookie.
	scheme, got, _ := strings.Cut(r.Header.Get("Authorization"), " ")
	presented, want := tenant.HashOf(strings.TrimSpace(got)), tenant.HashOf(v.opt.AdminKey)
	if (!strings.EqualFold(scheme, "Bearer") || subtle.ConstantTimeCompare(presented[:], want[:]) != 1) && !v.adminCookieOK(r) {
		v.opt.WriteError(w, &backends.Error{Status: http.StatusUnauthorized, Type: "authentication_error", Code: "invalid_admin_key",
			Message: "send the admin key as Authorization: Bearer KEY"})
		return
	}
	if v.opt.Store == nil {
		v.opt.WriteError(w, &backends.Error{Status: http.StatusNotFound, Type: "invalid_request_error", Message: "tool state is not kept by this gateway"})
		return
	}
	path := strings.TrimPrefix(r.URL.Path, "/admin/threads")
	ctx := r.Context()
	var out any
	var err error
	switch {
	case path == "" && r.Method == http.MethodGet:
		var st state.Stats
		if st, err = v.opt.Store.Stats(ctx); err == nil {
			var oldest *string
			if !st.OldestAccess.IsZero() {
				t := st.OldestAccess.UTC().Format(time.RFC3339)
				oldest = &t
			}
			out = map[string]any{"threads": st.Threads, "bytes": st.Bytes, "oldest_access": oldest}
		}
	case path == "" && r.Method == http.MethodDelete:
		var n int
		n, err = v.opt.Store.Clear(ctx)
		out = map[string]int{"cleared": n}
	case path == "/cleanup" && r.Method == http.MethodPost:
		var n int
		n, err = v.opt.Store.Cleanup(ctx)
		out = map[string]int{"removed": n}
	case strings.HasPrefix(path, "/") && len(path) > 1 && r.Method == http.MethodDelete:
		var ok bool
		ok, err = v.deleteThread(ctx, path[1:], r.URL.Query())
		out = map[string]bool{"deleted": ok}
	default:
		v.opt.WriteError(w, &backends.Error{Status: http.StatusNotFound, Type: "invalid_request_error", Code: "unknown_url",
			Message: r.Method + " " + r.URL.Path + " is not an admin endpoint; see GET /admin/threads"})
		return
	}
	if err != nil {
		v.opt.WriteError(w, planner.StateUnavailable(err)) // the answer a request gets when its thread state cannot be read
		return
	}
	writeJSON(w, http.StatusOK, out)
}

// deleteThread clears the thread id names: the gateway's own id, else the id a client
// sent, filed within the key and profile q names.
func (v *View) deleteThread(ctx context.Context, id string, q url.Values) (bool, error) {
	if q.Get("key") == "" && q.Get("profile") == "" {
		if ok, err := v.opt.Store.Delete(ctx, id); ok || err != nil {
			return ok, err
		}
	}
	if v.opt.Thread == nil {
		return false, nil
	}
	return v.opt.Store.Delete(ctx, v.opt.Thread(id, q.Get("key"), q.Get("profile")))
}

// writeJSON answers with body as JSON.
func writeJSON(w http.ResponseWriter, status int, body any) {
	b, err := json.Marshal(body)
	if err != nil { // the view's own types: it cannot fail
		status, b = http.StatusInternalServerError, oai.NewErrorBody(http.StatusInternalServerError, "encoding failed", "server_error", "", "").Marshal()
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

// writeEnvelope is Options.WriteError's default: err in the OpenAI envelope.
func writeEnvelope(w http.ResponseWriter, err error) {
	var e *backends.Error
	if !errors.As(err, &e) {
		e = &backends.Error{Status: http.StatusInternalServerError, Type: "server_error", Message: "internal error in the gateway's admin view"}
	}
	if e.RetryAfter != "" {
		w.Header().Set("Retry-After", e.RetryAfter)
	}
	writeJSON(w, e.Status, json.RawMessage(oai.NewErrorBody(e.Status, e.Message, e.Type, e.Param, e.Code).Marshal()))
}
