package observe

import (
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"sync"
	"time"
)

// Guesses of the admin key are throttled per client address: signInFailures wrong keys
// (at the form, or as a bearer on an admin endpoint) in signInWindow, and that address
// is refused with 429 until the window has passed. The admin key is random and long,
// so this costs a guesser everything and an operator who mistypes a few times nothing.
const (
	signInFailures = 10
	signInWindow   = time.Minute
	// signInAddrs bounds the addresses remembered; past it the oldest window is
	// forgotten first, so a flood of addresses cannot grow the map.
	signInAddrs = 4096
)

// signInGuard remembers wrong admin keys per address, and when the sessions issued so far
// were revoked.
type signInGuard struct {
	mu       sync.Mutex
	failures map[netip.Addr]*failureWindow
	// revoked: a session cookie issued before it is void (a sign-out ends every
	// session, as there is one admin).
	revoked time.Time
}

type failureWindow struct {
	start time.Time
	n     int
}

// clientAddr is the address r came from: the connection's peer.
func clientAddr(r *http.Request) netip.Addr {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	a, _ := netip.ParseAddr(host)
	return a.Unmap()
}

// throttled says how long r's address must wait before another try, 0 when it may try.
func (g *signInGuard) throttled(r *http.Request, now time.Time) time.Duration {
	g.mu.Lock()
	defer g.mu.Unlock()
	f := g.failures[clientAddr(r)]
	if f == nil || f.n < signInFailures || now.Sub(f.start) >= signInWindow {
		return 0
	}
	return signInWindow - now.Sub(f.start)
}

// failed counts a wrong key from r's address.
func (g *signInGuard) failed(r *http.Request, now time.Time) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.failures == nil {
		g.failures = map[netip.Addr]*failureWindow{}
	}
	a := clientAddr(r)
	f := g.failures[a]
	if f == nil || now.Sub(f.start) >= signInWindow {
		if f == nil && len(g.failures) >= signInAddrs {
			g.forgetOldest()
		}
		f = &failureWindow{start: now}
		g.failures[a] = f
	}
	f.n++
}

func (g *signInGuard) forgetOldest() {
	var oldest netip.Addr
	var at time.Time
	for a, f := range g.failures {
		if at.IsZero() || f.start.Before(at) {
			oldest, at = a, f.start
		}
	}
	delete(g.failures, oldest)
}

// revoke voids every session issued up to now.
func (g *signInGuard) revoke(now time.Time) {
	g.mu.Lock()
	g.revoked = now
	g.mu.Unlock()
}

// revokedUnix is the last revocation in unix seconds, 0 when none.
func (g *signInGuard) revokedUnix() int64 {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.revoked.IsZero() {
		return 0
	}
	return g.revoked.Unix()
}

// issuedAfterRevocation says whether a session issued at unix (seconds) outlives the
// last revocation.
func (g *signInGuard) issuedAfterRevocation(unix int64) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.revoked.IsZero() || unix > g.revoked.Unix()
}

// tooManyGuesses is the answer to an address past its wrong keys.
func (v *View) tooManyGuesses(w http.ResponseWriter, wait time.Duration) {
	w.Header().Set("Retry-After", strconv.Itoa(int((wait+time.Second-1)/time.Second)))
	v.opt.WriteError(w, errTooManyGuesses)
}

// secure says whether the browser reached the gateway over TLS: its own, or a
// TLS-terminating proxy among Options.TrustedProxies that says X-Forwarded-Proto: https.
func (v *View) secure(r *http.Request) bool {
	if r.TLS != nil {
		return true
	}
	if r.Header.Get("X-Forwarded-Proto") != "https" {
		return false
	}
	a := clientAddr(r)
	for _, p := range v.opt.TrustedProxies {
		if p.Contains(a) {
			return true
		}
	}
	return false
}
