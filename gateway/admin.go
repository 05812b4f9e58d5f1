package gateway

import (
	"context"
	"crypto/subtle"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/maskgate/maskgate/gateway/planner"
	"github.com/maskgate/maskgate/tenant"
	"github.com/maskgate/maskgate/toolsearch/state"
)

// HeaderThread names, on managed requests that have a thread, the thread the gateway
// filed the request under: an opaque id (an HMAC, under the process's thread secret, of
// the caller's identity and thread id: it shows nothing of either, nor of any key) that
// the admin API accepts.
const HeaderThread = "X-Maskgate-Thread"

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
func (s *Server) admin(w http.ResponseWriter, r *http.Request) {
	if s.opt.AdminKey == "" {
		writeError(w, s.log, &apiError{Status: http.StatusNotFound, Type: "invalid_request_error", Code: "admin_disabled",
			Message: "the admin API is off; set admin_key_env in the config to the name of a variable holding the admin key"})
		return
	}
	if s.adminPages(w, r) { // the dashboard, the request log, live events, catalogs (dashboard.go)
		return
	}
	// Bearer only (never x-api-key), compared as hashes so that the time taken says
	// nothing of the key's length either; or the dashboard's session cookie.
	scheme, got, _ := strings.Cut(r.Header.Get("Authorization"), " ")
	presented, want := tenant.HashOf(strings.TrimSpace(got)), tenant.HashOf(s.opt.AdminKey)
	if (!strings.EqualFold(scheme, "Bearer") || subtle.ConstantTimeCompare(presented[:], want[:]) != 1) && !s.adminCookieOK(r) {
		writeError(w, s.log, &apiError{Status: http.StatusUnauthorized, Type: "authentication_error", Code: "invalid_admin_key",
			Message: "send the admin key as Authorization: Bearer KEY"})
		return
	}
	if s.store == nil {
		writeError(w, s.log, &apiError{Status: http.StatusNotFound, Type: "invalid_request_error", Message: "tool state is not kept by this gateway"})
		return
	}
	path := strings.TrimPrefix(r.URL.Path, "/admin/threads")
	ctx := r.Context()
	var out any
	var err error
	switch {
	case path == "" && r.Method == http.MethodGet:
		var st state.Stats
		if st, err = s.store.Stats(ctx); err == nil {
			var oldest *string
			if !st.OldestAccess.IsZero() {
				t := st.OldestAccess.UTC().Format(time.RFC3339)
				oldest = &t
			}
			out = map[string]any{"threads": st.Threads, "bytes": st.Bytes, "oldest_access": oldest}
		}
	case path == "" && r.Method == http.MethodDelete:
		var n int
		n, err = s.store.Clear(ctx)
		out = map[string]int{"cleared": n}
	case path == "/cleanup" && r.Method == http.MethodPost:
		var n int
		n, err = s.store.Cleanup(ctx)
		out = map[string]int{"removed": n}
	case strings.HasPrefix(path, "/") && len(path) > 1 && r.Method == http.MethodDelete:
		var ok bool
		ok, err = s.deleteThread(ctx, path[1:], r.URL.Query())
		out = map[string]bool{"deleted": ok}
	default:
		writeError(w, s.log, &apiError{Status: http.StatusNotFound, Type: "invalid_request_error", Code: "unknown_url",
			Message: r.Method + " " + r.URL.Path + " is not an admin endpoint; see GET /admin/threads"})
		return
	}
	if err != nil {
		writeError(w, s.log, planner.StateUnavailable(err))
		return
	}
	writeJSON(w, http.StatusOK, out)
}

// threadIdentity is what a thread is filed within: the caller's identity, and its
// profile unless the default (one key's threads under two profiles are two threads:
// their catalogs differ).
func threadIdentity(key, profile string) string {
	if profile == "" || profile == DefaultProfile {
		return key
	}
	return key + "\x00profile " + profile
}

// deleteThread clears the thread id names: the gateway's own id, else the id a client
// sent, filed within the key and profile q names.
func (s *Server) deleteThread(ctx context.Context, id string, q url.Values) (bool, error) {
	if q.Get("key") == "" && q.Get("profile") == "" {
		if ok, err := s.store.Delete(ctx, id); ok || err != nil {
			return ok, err
		}
	}
	in := state.ThreadInput{Header: id, Identity: threadIdentity(q.Get("key"), q.Get("profile"))}
	return s.store.Delete(ctx, s.threads.Thread(in))
}
