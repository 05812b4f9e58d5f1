package observe

import (
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"
	"time"
)

const signInTestKey = "admin-key-for-signin-tests-0123"

func signInView(now *time.Time, proxies ...netip.Prefix) (*View, *http.ServeMux) {
	v := New(Options{AdminKey: signInTestKey, Now: func() time.Time { return *now }, TrustedProxies: proxies})
	mux := http.NewServeMux()
	v.Register(mux)
	return v, mux
}

func post(mux *http.ServeMux, from, key string, header http.Header) *httptest.ResponseRecorder {
	r := httptest.NewRequest(http.MethodPost, "/admin/login", strings.NewReader("key="+key))
	r.RemoteAddr = from
	r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	for k, v := range header {
		r.Header[k] = v
	}
	w := httptest.NewRecorder()
	mux.ServeHTTP(w, r)
	return w
}

// TestSignIn_GuessesThrottledPerAddress: wrong admin keys were tried without limit at the
// form and as bearers. Now an address's tenth wrong key in a minute makes it wait
// (429, Retry-After) for the rest of the minute, even with the right key; another
// address is not affected; a minute later it may try again.
func TestSignIn_GuessesThrottledPerAddress(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	_, mux := signInView(&now)
	const guesser, other = "203.0.113.7:5000", "203.0.113.8:5000"
	for i := range signInFailures / 2 {
		if w := post(mux, guesser, "wrong", nil); w.Code != 401 {
			t.Fatalf("wrong key %d at the form: %d", i, w.Code)
		}
		r := httptest.NewRequest(http.MethodGet, "/admin/requests", nil)
		r.RemoteAddr = guesser
		r.Header.Set("Authorization", "Bearer wrong")
		w := httptest.NewRecorder()
		mux.ServeHTTP(w, r)
		if w.Code != 401 {
			t.Fatalf("wrong bearer %d: %d", i, w.Code)
		}
	}
	now = now.Add(10 * time.Second)
	w := post(mux, guesser, signInTestKey, nil)
	if w.Code != 429 || w.Header().Get("Retry-After") != "50" {
		t.Fatalf("the right key after %d wrong ones: %d, Retry-After %q; want 429 and 50", signInFailures, w.Code, w.Header().Get("Retry-After"))
	}
	if w := post(mux, other, signInTestKey, nil); w.Code != 303 {
		t.Errorf("another address: %d, want 303", w.Code)
	}
	now = now.Add(50 * time.Second)
	if w := post(mux, guesser, signInTestKey, nil); w.Code != 303 {
		t.Errorf("a minute after the first wrong key: %d, want 303", w.Code)
	}
}

// TestSignIn_SecureCookieBehindATrustedProxy: behind a TLS-terminating proxy the cookie
// went out without Secure (the gateway saw plain HTTP). Now a configured proxy's
// X-Forwarded-Proto: https makes it Secure; the same header from any other address does
// not count.
func TestSignIn_SecureCookieBehindATrustedProxy(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	_, mux := signInView(&now, netip.MustParsePrefix("10.0.0.0/8"))
	https := http.Header{"X-Forwarded-Proto": {"https"}}
	for _, c := range []struct {
		from   string
		header http.Header
		secure bool
	}{
		{"10.1.2.3:4000", https, true},
		{"10.1.2.3:4000", nil, false},
		{"192.0.2.9:4000", https, false},
	} {
		w := post(mux, c.from, signInTestKey, c.header)
		cookies := w.Result().Cookies()
		if w.Code != 303 || len(cookies) != 1 || cookies[0].Secure != c.secure {
			t.Errorf("from %s, header %v: %d %v, want a cookie with Secure %v", c.from, c.header, w.Code, cookies, c.secure)
		}
	}
}
