package gateway

import (
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"html/template"
	"io/fs"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/maskgate/maskgate/gateway/dashboard"
	"github.com/maskgate/maskgate/tenant"
)

// The dashboard and the admin API's views, behind AdminKey like the rest of /admin/:
//
//	GET  /admin/                    the dashboard (gateway/dashboard: embedded HTML, CSS, JS)
//	GET  /admin/?key=KEY            sign in: sets the session cookie, redirects to /admin/
//	POST /admin/login               sign in from the page's form (field key)
//	GET  /admin/logout              drops the cookie
//	GET  /admin/requests?limit=N    the request log, newest first (reqlog.go)
//	GET  /admin/events              live statistics, Server-Sent Events (live.go)
//	GET  /admin/profiles            the profiles, their strategy and catalog version
//	GET  /admin/tools?profile=P     P's catalog as GET /v1/tools serves it, with token counts
//	GET  /admin/tools/search?profile=P&q=TEXT&k=N   GET /v1/tools/search over P's catalog
//	GET  /admin/static/{app.js,app.css}             the page's script and style (open)
//
// Every other admin endpoint takes Authorization: Bearer KEY, or the session cookie a browser
// gets once it has given the key: an EventSource cannot send headers, and a key in a
// URL would stay in the browser's history. The cookie (maskgate_admin: HttpOnly,
// SameSite=Strict, Path=/admin/, Secure over TLS) holds no key: it is an HMAC, under the
// admin key, of the time it was issued, valid for adminSession; a new admin key voids it.

const (
	adminCookie  = "maskgate_admin"
	adminSession = 12 * time.Hour
)

// adminBearer says whether r carries the admin key as a bearer token.
func (s *Server) adminBearer(r *http.Request) bool {
	scheme, got, _ := strings.Cut(r.Header.Get("Authorization"), " ")
	presented, want := tenant.HashOf(strings.TrimSpace(got)), tenant.HashOf(s.opt.AdminKey)
	return strings.EqualFold(scheme, "Bearer") && subtle.ConstantTimeCompare(presented[:], want[:]) == 1
}

// adminToken is the session cookie's value for a session issued at unix.
func (s *Server) adminToken(unix int64) string {
	mac := hmac.New(sha256.New, []byte(s.opt.AdminKey))
	mac.Write([]byte("maskgate dashboard session " + strconv.FormatInt(unix, 10)))
	return strconv.FormatInt(unix, 10) + "." + base64.RawURLEncoding.EncodeToString(mac.Sum(nil))
}

// adminCookieOK says whether r carries a live session cookie.
func (s *Server) adminCookieOK(r *http.Request) bool {
	if s.opt.AdminKey == "" {
		return false
	}
	c, err := r.Cookie(adminCookie)
	if err != nil {
		return false
	}
	at, _, ok := strings.Cut(c.Value, ".")
	unix, err := strconv.ParseInt(at, 10, 64)
	if !ok || err != nil {
		return false
	}
	if age := s.now().Sub(time.Unix(unix, 0)); age < -time.Minute || age > adminSession {
		return false
	}
	want := s.adminToken(unix)
	return subtle.ConstantTimeCompare([]byte(c.Value), []byte(want)) == 1
}

func (s *Server) adminAuthorized(r *http.Request) bool {
	return s.adminBearer(r) || s.adminCookieOK(r)
}

var errAdminKey = &apiError{Status: http.StatusUnauthorized, Type: "authentication_error", Code: "invalid_admin_key",
	Message: "send the admin key as Authorization: Bearer KEY, or sign in at /admin/"}

// adminPages serves the dashboard and the admin views above; false when r is for
// another admin path (the threads API).
func (s *Server) adminPages(w http.ResponseWriter, r *http.Request) bool {
	path := r.URL.Path
	var h http.HandlerFunc
	switch path {
	case "/admin/login":
		s.adminLogin(w, r)
		return true
	case "/admin/logout":
		s.setAdminCookie(w, r, "", -1)
		http.Redirect(w, r, "/admin/", http.StatusSeeOther)
		return true
	case "/admin/":
		s.dashboardPage(w, r)
		return true
	case "/admin/requests":
		h = s.requests
	case "/admin/events":
		h = s.events
	case "/admin/profiles":
		h = s.adminProfiles
	case "/admin/tools":
		h = s.adminTools(listTools(s.planner, s.log))
	case "/admin/tools/search":
		h = s.adminTools(searchTools(s.planner, s.log))
	default:
		if !strings.HasPrefix(path, "/admin/static/") {
			return false
		}
		// The page's script and style sheet, the same in every gateway (they are in its
		// source), are open: the sign-in form needs the style sheet.
		s.staticAsset(w, r)
		return true
	}
	if !s.adminAuthorized(r) {
		writeError(w, s.log, errAdminKey)
		return true
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", http.MethodGet)
		writeError(w, s.log, &apiError{Status: http.StatusMethodNotAllowed, Type: "invalid_request_error",
			Message: r.Method + " is not allowed on " + path + "; use GET"})
		return true
	}
	h(w, r)
	return true
}

// setAdminCookie sets the session cookie to value for maxAge seconds (negative: drop it).
func (s *Server) setAdminCookie(w http.ResponseWriter, r *http.Request, value string, maxAge int) {
	http.SetCookie(w, &http.Cookie{Name: adminCookie, Value: value, Path: "/admin/", MaxAge: maxAge,
		HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil})
}

// signIn gives the browser a session and sends it to the dashboard, off any URL that
// held the key.
func (s *Server) signIn(w http.ResponseWriter, r *http.Request) {
	s.setAdminCookie(w, r, s.adminToken(s.now().Unix()), int(adminSession/time.Second))
	w.Header().Set("Referrer-Policy", "no-referrer")
	http.Redirect(w, r, "/admin/", http.StatusSeeOther)
}

// adminLogin checks the key the sign-in form posts.
func (s *Server) adminLogin(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		http.Redirect(w, r, "/admin/", http.StatusSeeOther)
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, 4<<10)
	if err := r.ParseForm(); err == nil && s.keyMatches(r.PostFormValue("key")) {
		s.signIn(w, r)
		return
	}
	s.loginPage(w, http.StatusUnauthorized, true)
}

func (s *Server) keyMatches(key string) bool {
	presented, want := tenant.HashOf(key), tenant.HashOf(s.opt.AdminKey)
	return key != "" && subtle.ConstantTimeCompare(presented[:], want[:]) == 1
}

// pageHeaders are the dashboard's: nothing but its own files, never framed, never
// cached, no referrer.
func pageHeaders(h http.Header) {
	h.Set("Content-Security-Policy", "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Frame-Options", "DENY")
}

var loginTemplate = template.Must(template.ParseFS(dashboard.Files, "login.html"))

func (s *Server) loginPage(w http.ResponseWriter, status int, failed bool) {
	pageHeaders(w.Header())
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	_ = loginTemplate.Execute(w, struct{ Failed bool }{failed})
}

// dashboardPage serves the dashboard to a signed-in browser (or a bearer), signs in one
// that brings ?key=, and shows the sign-in form to others.
func (s *Server) dashboardPage(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", http.MethodGet)
		writeError(w, s.log, &apiError{Status: http.StatusMethodNotAllowed, Type: "invalid_request_error", Message: r.Method + " is not allowed on /admin/; use GET"})
		return
	}
	if key, ok := r.URL.Query()["key"]; ok {
		if len(key) == 1 && s.keyMatches(key[0]) {
			s.signIn(w, r)
			return
		}
		s.loginPage(w, http.StatusUnauthorized, true)
		return
	}
	if !s.adminAuthorized(r) {
		s.loginPage(w, http.StatusUnauthorized, false)
		return
	}
	page, err := fs.ReadFile(dashboard.Files, "index.html")
	if err != nil {
		writeError(w, s.log, err)
		return
	}
	pageHeaders(w.Header())
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	_, _ = w.Write(page)
}

// staticFiles are the dashboard's assets by name, with their types.
var staticFiles = map[string]string{
	"app.js":  "text/javascript; charset=utf-8",
	"app.css": "text/css; charset=utf-8",
}

func (s *Server) staticAsset(w http.ResponseWriter, r *http.Request) {
	name := strings.TrimPrefix(r.URL.Path, "/admin/static/")
	typ, ok := staticFiles[name]
	var b []byte
	var err error
	if ok {
		b, err = fs.ReadFile(dashboard.Files, name)
	}
	if !ok || err != nil {
		writeError(w, s.log, &apiError{Status: http.StatusNotFound, Type: "invalid_request_error", Code: "unknown_url", Message: "no such dashboard file: " + name})
		return
	}
	pageHeaders(w.Header())
	w.Header().Set("Content-Type", typ)
	_, _ = w.Write(b)
}

// AdminProfile is one profile as GET /admin/profiles lists it.
type AdminProfile struct {
	Name     string `json:"name"`
	Strategy string `json:"strategy"`
	ToolMode string `json:"tool_mode"`
	Tools    int    `json:"tools"`
	Version  string `json:"version"`
}

func (s *Server) adminProfiles(w http.ResponseWriter, r *http.Request) {
	profiles := s.planner.Profiles()
	out := make([]AdminProfile, 0, len(profiles))
	for _, p := range profiles {
		ap := AdminProfile{Name: p.Name, Strategy: string(p.Strategy), ToolMode: p.ToolMode}
		if ap.Strategy == "" {
			ap.Strategy = string(StrategyAuto)
		}
		if ix := p.Index(); ix != nil {
			ap.Tools, ap.Version = ix.Catalog().Len(), ix.Catalog().Version()
		}
		out = append(out, ap)
	}
	slices.SortFunc(out, func(a, b AdminProfile) int {
		switch {
		case a.Name == DefaultProfile:
			return -1
		case b.Name == DefaultProfile:
			return 1
		}
		return strings.Compare(a.Name, b.Name)
	})
	writeJSON(w, http.StatusOK, struct {
		Profiles []AdminProfile `json:"profiles"`
	}{out})
}

// adminTools runs a /v1/tools handler for the profile ?profile= names (default: the
// default profile), as a caller that may choose any.
func (s *Server) adminTools(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		r2 := r.Clone(r.Context())
		r2.Header.Del(HeaderProfile)
		if p := r.URL.Query().Get("profile"); p != "" {
			r2.Header.Set(HeaderProfile, p)
		}
		h(w, r2)
	}
}
