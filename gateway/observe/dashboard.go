package observe

import (
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"html/template"
	"io/fs"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/maskgate/maskgate/backends"
	"github.com/maskgate/maskgate/gateway/dashboard"
	"github.com/maskgate/maskgate/tenant"
)

// The dashboard and the admin API's views, behind AdminKey like the rest of /admin/:
//
//	GET  /admin/                    the dashboard (gateway/dashboard: embedded HTML, CSS, JS)
//	POST /admin/login               sign in from the page's form (field key): sets the session cookie
//	GET  /admin/logout              drops the cookie and ends every session issued so far
//	GET  /admin/requests?limit=N    the request log, newest first (reqlog.go)
//	GET  /admin/events              live statistics, Server-Sent Events (events.go)
//	GET  /admin/profiles            the profiles, their strategy and catalog version
//	GET  /admin/tools?profile=P     P's catalog as GET /v1/tools serves it, with token counts
//	GET  /admin/tools/search?profile=P&q=TEXT&k=N   GET /v1/tools/search over P's catalog
//	GET  /admin/static/{app.js,app.css}             the page's script and style (open)
//
// Every other admin endpoint takes Authorization: Bearer KEY, or the session cookie a browser
// gets once it has given the key: an EventSource cannot send headers, and a key in a
// URL would stay in the browser's history (so /admin/?key= is refused). The cookie
// (maskgate_admin: HttpOnly, SameSite=Strict, Path=/admin/, Secure over TLS, the
// gateway's own or a trusted proxy's) holds no key: it is an HMAC, under the admin key, of
// the time it was issued, valid for adminSession; a new admin key voids it, and so does a
// sign-out (signin.go). Wrong keys are throttled per address (signin.go).

const (
	adminCookie  = "maskgate_admin"
	adminSession = 12 * time.Hour
)

// adminBearer says whether r carries the admin key as a bearer token.
func (v *View) adminBearer(r *http.Request) bool {
	scheme, got, _ := strings.Cut(r.Header.Get("Authorization"), " ")
	presented, want := tenant.HashOf(strings.TrimSpace(got)), tenant.HashOf(v.opt.AdminKey)
	return strings.EqualFold(scheme, "Bearer") && subtle.ConstantTimeCompare(presented[:], want[:]) == 1
}

// adminToken is the session cookie's value for a session issued at unix.
func (v *View) adminToken(unix int64) string {
	mac := hmac.New(sha256.New, []byte(v.opt.AdminKey))
	mac.Write([]byte("maskgate dashboard session " + strconv.FormatInt(unix, 10)))
	return strconv.FormatInt(unix, 10) + "." + base64.RawURLEncoding.EncodeToString(mac.Sum(nil))
}

// adminCookieOK says whether r carries a live session cookie.
func (v *View) adminCookieOK(r *http.Request) bool {
	if v.opt.AdminKey == "" {
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
	if age := v.now().Sub(time.Unix(unix, 0)); age < -time.Minute || age > adminSession || !v.signin.issuedAfterRevocation(unix) {
		return false
	}
	want := v.adminToken(unix)
	return subtle.ConstantTimeCompare([]byte(c.Value), []byte(want)) == 1
}

func (v *View) adminAuthorized(r *http.Request) bool {
	return v.adminBearer(r) || v.adminCookieOK(r)
}

var errTooManyGuesses = &backends.Error{Status: http.StatusTooManyRequests, Type: "rate_limit_error", Code: "rate_limit_exceeded",
	Message: "too many wrong admin keys from this address; retry after the time in Retry-After"}

var errAdminKey = &backends.Error{Status: http.StatusUnauthorized, Type: "authentication_error", Code: "invalid_admin_key",
	Message: "send the admin key as Authorization: Bearer KEY, or sign in at /admin/"}

// adminPages serves the dashboard and the admin views above; false when r is for
// another admin path (the threads API).
func (v *View) adminPages(w http.ResponseWriter, r *http.Request) bool {
	path := r.URL.Path
	var h http.HandlerFunc
	switch path {
	case "/admin/login":
		v.adminLogin(w, r)
		return true
	case "/admin/logout":
		if v.adminCookieOK(r) || v.adminBearer(r) {
			v.signin.revoke(v.now())
		}
		v.setAdminCookie(w, r, "", -1)
		http.Redirect(w, r, "/admin/", http.StatusSeeOther)
		return true
	case "/admin/":
		v.dashboardPage(w, r)
		return true
	case "/admin/requests":
		h = v.requests
	case "/admin/events":
		h = v.events
	case "/admin/profiles":
		h = v.adminProfiles
	case "/admin/tools":
		h = v.opt.Tools
	case "/admin/tools/search":
		h = v.opt.ToolSearch
	default:
		if !strings.HasPrefix(path, "/admin/static/") {
			return false
		}
		// The page's script and style sheet, the same in every gateway (they are in its
		// source), are open: the sign-in form needs the style sheet.
		v.staticAsset(w, r)
		return true
	}
	if !v.adminAuthorized(r) {
		v.opt.WriteError(w, errAdminKey)
		return true
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", http.MethodGet)
		v.opt.WriteError(w, &backends.Error{Status: http.StatusMethodNotAllowed, Type: "invalid_request_error",
			Message: r.Method + " is not allowed on " + path + "; use GET"})
		return true
	}
	if h == nil { // a catalog view the gateway did not give
		v.opt.WriteError(w, &backends.Error{Status: http.StatusNotFound, Type: "invalid_request_error", Code: "unknown_url",
			Message: "this gateway serves no " + path})
		return true
	}
	h(w, r)
	return true
}

// setAdminCookie sets the session cookie to value for maxAge seconds (negative: drop it).
func (v *View) setAdminCookie(w http.ResponseWriter, r *http.Request, value string, maxAge int) {
	http.SetCookie(w, &http.Cookie{Name: adminCookie, Value: value, Path: "/admin/", MaxAge: maxAge,
		HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: v.secure(r)})
}

// signIn gives the browser a session and sends it to the dashboard, off any URL that
// held the key.
func (v *View) signIn(w http.ResponseWriter, r *http.Request) {
	// A session issued in the second of a sign-out would be void with the ones it ended.
	at := max(v.now().Unix(), v.signin.revokedUnix()+1)
	v.setAdminCookie(w, r, v.adminToken(at), int(adminSession/time.Second))
	w.Header().Set("Referrer-Policy", "no-referrer")
	http.Redirect(w, r, "/admin/", http.StatusSeeOther)
}

// adminLogin checks the key the sign-in form posts.
func (v *View) adminLogin(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		http.Redirect(w, r, "/admin/", http.StatusSeeOther)
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, 4<<10)
	if err := r.ParseForm(); err == nil && v.keyMatches(r.PostFormValue("key")) {
		v.signIn(w, r)
		return
	}
	v.signin.failed(r, v.now())
	v.loginPage(w, http.StatusUnauthorized, true)
}

func (v *View) keyMatches(key string) bool {
	presented, want := tenant.HashOf(key), tenant.HashOf(v.opt.AdminKey)
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

func (v *View) loginPage(w http.ResponseWriter, status int, failed bool) {
	pageHeaders(w.Header())
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	_ = loginTemplate.Execute(w, struct{ Failed bool }{failed})
}

// dashboardPage serves the dashboard to a signed-in browser (or a bearer), signs in one
// and shows the sign-in form to others (to one that brings ?key= too, with a 400).
func (v *View) dashboardPage(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", http.MethodGet)
		v.opt.WriteError(w, &backends.Error{Status: http.StatusMethodNotAllowed, Type: "invalid_request_error", Message: r.Method + " is not allowed on /admin/; use GET"})
		return
	}
	if _, ok := r.URL.Query()["key"]; ok {
		// A key in a URL stays in the browser's history, proxies' logs and Referer
		// headers: it is never read, right or wrong; the form is the way in.
		v.loginPage(w, http.StatusBadRequest, false)
		return
	}
	if !v.adminAuthorized(r) {
		v.loginPage(w, http.StatusUnauthorized, false)
		return
	}
	page, err := fs.ReadFile(dashboard.Files, "index.html")
	if err != nil {
		v.opt.WriteError(w, err)
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

func (v *View) staticAsset(w http.ResponseWriter, r *http.Request) {
	name := strings.TrimPrefix(r.URL.Path, "/admin/static/")
	typ, ok := staticFiles[name]
	var b []byte
	var err error
	if ok {
		b, err = fs.ReadFile(dashboard.Files, name)
	}
	if !ok || err != nil {
		v.opt.WriteError(w, &backends.Error{Status: http.StatusNotFound, Type: "invalid_request_error", Code: "unknown_url", Message: "no such dashboard file: " + name})
		return
	}
	pageHeaders(w.Header())
	w.Header().Set("Content-Type", typ)
	_, _ = w.Write(b)
}

// AdminProfile is one profile as GET /admin/profiles lists it (in Options.Profiles' order:
// the gateway's default profile first, then by name).
type AdminProfile struct {
	Name     string `json:"name"`
	Strategy string `json:"strategy"`
	ToolMode string `json:"tool_mode"`
	Tools    int    `json:"tools"`
	Version  string `json:"version"`
}

func (v *View) adminProfiles(w http.ResponseWriter, r *http.Request) {
	out := []AdminProfile{}
	if v.opt.Profiles != nil {
		out = v.opt.Profiles()
	}
	writeJSON(w, http.StatusOK, struct {
		Profiles []AdminProfile `json:"profiles"`
	}{out})
}
