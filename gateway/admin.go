package gateway

import (
	"crypto/subtle"
	"net/http"
	"strings"
	"time"
)

// HeaderThread names, on managed requests, the thread the gateway filed the request
// under: an opaque id (a hash of the client's key and thread id) that the admin API
// accepts.
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
	got := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
	if subtle.ConstantTimeCompare([]byte(got), []byte(s.opt.AdminKey)) != 1 {
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
