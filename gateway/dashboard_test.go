package gateway_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/maskgate/maskgate/backends/openaicompat"
	"github.com/maskgate/maskgate/gateway"
	"github.com/maskgate/maskgate/gateway/observe"
	"github.com/maskgate/maskgate/tenant"
	"github.com/maskgate/maskgate/toolsearch/tokens"
)

// noRedirect is a client that shows redirects instead of following them.
var noRedirect = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

func fetch(t *testing.T, method, u string, header http.Header, body io.Reader) (*http.Response, string) {
	t.Helper()
	req, _ := http.NewRequest(method, u, body)
	for k, v := range header {
		req.Header[k] = v
	}
	resp, err := noRedirect.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

// TestDashboard_SignInAndSession: the page and the admin API take the bearer key or the
// session cookie the page sets once the form has been given the key (a key in the URL
// is refused); the cookie is HttpOnly, SameSite=Strict, scoped to /admin/, expires,
// cannot be forged and ends with a sign-out;
// the page's script and style are open, nothing else is.
func TestDashboard_SignInAndSession(t *testing.T) {
	var mu sync.Mutex
	now := time.Now()
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	e := newFakeEngine(t)
	g := newOpsGateway(t, e, func(o *gateway.Options, _ *openaicompat.Options) { o.Now = clock })

	resp, body := fetch(t, "GET", g.URL+"/admin/", nil, nil)
	if resp.StatusCode != 401 || !strings.Contains(body, `action="/admin/login"`) || strings.Contains(body, "not the admin key") {
		t.Fatalf("no key: %d %s", resp.StatusCode, body)
	}
	if csp := resp.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'none'") || !strings.Contains(csp, "frame-ancestors 'none'") {
		t.Errorf("CSP %q", csp)
	}
	// A key in the URL is never read, right or wrong: it would stay in histories and logs.
	for _, key := range []string{"wrong", testAdminKey} {
		if resp, body := fetch(t, "GET", g.URL+"/admin/?key="+url.QueryEscape(key), nil, nil); resp.StatusCode != 400 || !strings.Contains(body, `action="/admin/login"`) || resp.Header.Get("Set-Cookie") != "" {
			t.Errorf("?key=%s: %d %v", key, resp.StatusCode, resp.Header)
		}
	}
	form := http.Header{"Content-Type": {"application/x-www-form-urlencoded"}}
	resp, _ = fetch(t, "POST", g.URL+"/admin/login", form, strings.NewReader("key="+url.QueryEscape(testAdminKey)))
	if resp.StatusCode != 303 || resp.Header.Get("Location") != "/admin/" {
		t.Fatalf("the form: %d %v", resp.StatusCode, resp.Header)
	}
	cookies := resp.Cookies()
	if len(cookies) != 1 || cookies[0].Name != "maskgate_admin" || !cookies[0].HttpOnly || cookies[0].SameSite != http.SameSiteStrictMode ||
		cookies[0].Path != "/admin/" || cookies[0].MaxAge != 12*3600 || strings.Contains(cookies[0].Value, testAdminKey) {
		t.Fatalf("cookie %+v", cookies)
	}
	withCookie := http.Header{"Cookie": {cookies[0].Name + "=" + cookies[0].Value}}

	resp, body = fetch(t, "GET", g.URL+"/admin/", withCookie, nil)
	if resp.StatusCode != 200 || !strings.Contains(body, `id="hit-chart"`) || resp.Header.Get("Cache-Control") != "no-store" {
		t.Errorf("the page with the cookie: %d", resp.StatusCode)
	}
	for _, path := range []string{"/admin/requests", "/admin/profiles", "/admin/tools", "/admin/threads"} {
		if resp, body := fetch(t, "GET", g.URL+path, withCookie, nil); resp.StatusCode != 200 {
			t.Errorf("GET %s with the cookie: %d %s", path, resp.StatusCode, body)
		}
		if resp, _ := fetch(t, "GET", g.URL+path, nil, nil); resp.StatusCode != 401 {
			t.Errorf("GET %s without: %d", path, resp.StatusCode)
		}
	}
	if resp, body := fetch(t, "DELETE", g.URL+"/admin/threads", withCookie, nil); resp.StatusCode != 200 || !strings.Contains(body, "cleared") {
		t.Errorf("DELETE /admin/threads with the cookie: %d %s", resp.StatusCode, body)
	}
	forged := http.Header{"Cookie": {cookies[0].Name + "=" + strings.Replace(cookies[0].Value, ".", "0.", 1)}}
	if resp, _ := fetch(t, "GET", g.URL+"/admin/requests", forged, nil); resp.StatusCode != 401 {
		t.Errorf("a forged cookie: %d", resp.StatusCode)
	}
	if resp, _ := fetch(t, "GET", g.URL+"/admin/requests", http.Header{"Authorization": {"Bearer " + testAdminKey}}, nil); resp.StatusCode != 200 {
		t.Errorf("the bearer key: %d", resp.StatusCode)
	}

	// A wrong key at the form does not sign in.
	if resp, _ := fetch(t, "POST", g.URL+"/admin/login", form, strings.NewReader("key=nope")); resp.StatusCode != 401 || len(resp.Cookies()) != 0 {
		t.Errorf("form, wrong key: %d", resp.StatusCode)
	}
	if resp, _ := fetch(t, "POST", g.URL+"/admin/login", form, strings.NewReader("key="+url.QueryEscape(testAdminKey))); resp.StatusCode != 303 || len(resp.Cookies()) != 1 {
		t.Errorf("form: %d %v", resp.StatusCode, resp.Header)
	}
	if resp, _ := fetch(t, "GET", g.URL+"/admin/logout", withCookie, nil); resp.StatusCode != 303 || len(resp.Cookies()) != 1 || resp.Cookies()[0].MaxAge >= 0 {
		t.Errorf("logout: %d %v", resp.StatusCode, resp.Header)
	}
	// Signing out ends the session everywhere: the cookie sent again is refused.
	if resp, _ := fetch(t, "GET", g.URL+"/admin/requests", withCookie, nil); resp.StatusCode != 401 {
		t.Errorf("the cookie after a sign-out: %d, want 401", resp.StatusCode)
	}

	// Open: the script and the style sheet, nothing more.
	if resp, body := fetch(t, "GET", g.URL+"/admin/static/app.js", nil, nil); resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/javascript") || !strings.Contains(body, "EventSource") {
		t.Errorf("app.js: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	if resp, _ := fetch(t, "GET", g.URL+"/admin/static/embed.go", nil, nil); resp.StatusCode != 404 {
		t.Errorf("another file: %d", resp.StatusCode)
	}

	// A session lasts 12 hours.
	mu.Lock()
	now = now.Add(12*time.Hour + time.Minute)
	mu.Unlock()
	if resp, _ := fetch(t, "GET", g.URL+"/admin/requests", withCookie, nil); resp.StatusCode != 401 {
		t.Errorf("an expired cookie: %d", resp.StatusCode)
	}
}

// TestDashboard_CatalogViews: /admin/profiles, /admin/tools and /admin/tools/search show
// every profile's catalog, with token counts, whatever client keys the gateway requires.
func TestDashboard_CatalogViews(t *testing.T) {
	e := newFakeEngine(t)
	counter, err := tokens.New(tokens.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ring, err := tenant.NewKeyring([]tenant.Key{{Name: "team-a", Hash: tenant.HashOf("sk-team-a-0123456789abcdef")}})
	if err != nil {
		t.Fatal(err)
	}
	g := newOpsGateway(t, e, func(o *gateway.Options, _ *openaicompat.Options) {
		o.Tokens, o.Keys = counter, ring
		o.Profiles = []*gateway.Profile{{Name: "small"}}
	})
	var profiles struct {
		Profiles []observe.AdminProfile `json:"profiles"`
	}
	g.admin(t, "/admin/profiles", &profiles)
	if len(profiles.Profiles) != 2 || profiles.Profiles[0].Name != "default" || profiles.Profiles[0].Tools != 25 ||
		len(profiles.Profiles[0].Version) != 64 || profiles.Profiles[0].Strategy != "remove" || profiles.Profiles[1].Name != "small" {
		t.Errorf("profiles %+v", profiles)
	}
	var cat struct {
		Version string `json:"version"`
		Tokens  struct {
			Total int            `json:"total"`
			Tools map[string]int `json:"tools"`
		} `json:"tokens"`
		Data []json.RawMessage `json:"data"`
	}
	if code := g.admin(t, "/admin/tools?profile=default", &cat); code != 200 {
		t.Fatalf("tools: %d", code)
	}
	if cat.Version != profiles.Profiles[0].Version || len(cat.Data) != 25 || cat.Tokens.Total == 0 || cat.Tokens.Tools["slack_send_message"] == 0 {
		t.Errorf("catalog: version %s, %d tools, tokens %+v", cat.Version, len(cat.Data), cat.Tokens)
	}
	var search struct {
		Results []struct {
			Name  string  `json:"name"`
			Score float64 `json:"score"`
		} `json:"results"`
	}
	g.admin(t, "/admin/tools/search?profile=default&q=slack+message&k=3", &search)
	if len(search.Results) == 0 || search.Results[0].Name != "slack_send_message" {
		t.Errorf("search %+v", search)
	}
	if code := g.admin(t, "/admin/tools?profile=nope", nil); code != 404 {
		t.Errorf("an unknown profile: %d", code)
	}
	// The client API still wants a client key.
	if resp, _ := fetch(t, "GET", g.URL+"/v1/tools", nil, nil); resp.StatusCode != 401 {
		t.Errorf("/v1/tools without a client key: %d", resp.StatusCode)
	}
}
