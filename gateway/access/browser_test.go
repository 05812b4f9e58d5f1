package access

import (
	"net/http"
	"testing"
)

func TestLoopbackHost(t *testing.T) {
	for host, want := range map[string]bool{
		"127.0.0.1:4000": true, "127.8.9.10": true, "localhost": true, "LOCALHOST:4000": true, "localhost.:4000": true,
		"api.localhost:4000": true, "[::1]:4000": true, "::1": true,
		"evil.example:4000": false, "localhost.evil.example": false, "192.168.1.20:4000": false, "0.0.0.0:4000": false,
		"[::ffff:7f00:1]:4000": true, "": false, "127.0.0.1.nip.io": false,
	} {
		if got := loopbackHost(host); got != want {
			t.Errorf("loopbackHost(%q) = %v, want %v", host, got, want)
		}
	}
}

// Whatever a client puts in Host, Origin, Sec-Fetch-Site and Content-Type, the check
// answers without panicking, and a refusal always names its code.
func FuzzBrowserRefusal(f *testing.F) {
	f.Add("127.0.0.1:4000", "http://127.0.0.1:4000", "same-origin", "application/json; charset=utf-8", false)
	f.Add("evil.example:4000", "null", "cross-site", "text/plain", true)
	f.Add("[::1", "http://[::1", "", "multipart/form-data; boundary=", false)
	f.Fuzz(func(t *testing.T, host, origin, site, ct string, anyHost bool) {
		r := &http.Request{Method: http.MethodPost, Host: host, Header: http.Header{}}
		r.Header.Set("Origin", origin)
		r.Header.Set("Sec-Fetch-Site", site)
		r.Header.Set("Content-Type", ct)
		code, msg := browserRefusal(r, anyHost)
		if (code == "") != (msg == "") {
			t.Fatalf("code %q with message %q", code, msg)
		}
		if !anyHost && !loopbackHost(host) && code != "host_not_allowed" {
			t.Fatalf("Host %q served or refused as %q", host, code)
		}
	})
}
