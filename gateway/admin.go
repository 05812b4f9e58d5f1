package gateway

import (
	"crypto/subtle"
	"net/http"
	"strings"
	"time"

	"github.com/maskgate/maskgate/tenant"
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
//	DELETE /admin/threads/{id}      clear one (id from X-Maskgate-Thread): {"deleted": bool}
//	POST   /admin/threads/cleanup   drop threads idle past the TTL now: {"removed": N}
func (s *Server) admin(w http.ResponseWriter, r *http.Request) {
	if s.opt.AdminKey == "" {
		writeError(w, s.log, &apiError{Status: http.StatusNotFound, Type: "invalid_request_error", Code: "admin_disabled",
			Message: "the admin API is off; set admin_key_env in the config to the name of a variable holding the admin key"})
		return
	}
	// Bearer only (never x-api-key), compared as hashes so that the time taken says
	// nothing of the key's length either.
	scheme, got, _ := strings.Cut(r.Header.Get("Authorization"), " ")
	presented, want := tenant.HashOf(strings.TrimSpace(got)), tenant.HashOf(s.opt.AdminKey)
	if !strings.EqualFold(scheme, "Bearer") || subtle.ConstantTimeCompare(presented[:], want[:]) != 1 {
		writeError(w, s.log, &apiError{Status: http.StatusUnauthorized, Type: "authentication_error", Code: "invalid_admin_key",
			Message: "send the admin key as Authorization: Bearer KEY"})
		return
	}
	if s.opt.State == nil {
		writeError(w, s.log, &apiError{Status: http.StatusNotFound, Type: "invalid_request_error", Message: "tool state is not kept by this gateway"})
		return
	}
	path := strings.TrimPrefix(r.URL.Path, "/admin/threads")
	switch {
	case path == "" && r.Method == http.MethodGet:
		st := s.opt.State.Stats()
		var oldest *string
		if !st.OldestAccess.IsZero() {
			t := st.OldestAccess.UTC().Format(time.RFC3339)
			oldest = &t
		}
		writeJSON(w, http.StatusOK, map[string]any{"threads": st.Threads, "bytes": st.Bytes, "oldest_access": oldest})
	case path == "" && r.Method == http.MethodDelete:
		writeJSON(w, http.StatusOK, map[string]int{"cleared": s.opt.State.Clear()})
	case path == "/cleanup" && r.Method == http.MethodPost:
		writeJSON(w, http.StatusOK, map[string]int{"removed": s.opt.State.Cleanup()})
	case strings.HasPrefix(path, "/") && len(path) > 1 && r.Method == http.MethodDelete:
		writeJSON(w, http.StatusOK, map[string]bool{"deleted": s.opt.State.Delete(path[1:])})
	default:
		writeError(w, s.log, &apiError{Status: http.StatusNotFound, Type: "invalid_request_error", Code: "unknown_url",
			Message: r.Method + " " + r.URL.Path + " is not an admin endpoint; see GET /admin/threads"})
	}
}
