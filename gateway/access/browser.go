package access

import (
	"mime"
	"net"
	"net/http"
	"net/url"
	"strings"

	"github.com/maskgate/maskgate/backends"
)

// A gateway without keys trusts whoever reaches it, which on loopback is meant to be the
// local user's programs. A web page that user opens reaches loopback too: a form or a
// fetch with a text/plain body is a "simple" cross-site request, sent without a CORS
// preflight (it spends the operator's upstream keys and runs gateway-executed tools,
// though the page cannot read the answer), and DNS rebinding gives a page a name of its
// own that resolves to 127.0.0.1, so that its requests are same-origin to the browser
// and their answers readable. keylessBrowser refuses both shapes; programs (SDKs, curl,
// agents) send neither a cross-site Origin nor a Sec-Fetch-Site, and name the host they
// dialled.

// browserRefusal says why a keyless gateway refuses r, or "" to serve it. anyHost is
// auth: none, where the operator serves beyond loopback on purpose and any Host is
// theirs to allow.
func browserRefusal(r *http.Request, anyHost bool) (code, message string) {
	if !anyHost && !loopbackHost(r.Host) {
		return "host_not_allowed", "this gateway has no client keys and answers only requests to a loopback name (localhost, 127.0.0.1, [::1]); Host " +
			quoteShort(r.Host) + " is not one (a DNS-rebinding page names its own). Use a loopback address, or configure keys:"
	}
	switch site := r.Header.Get("Sec-Fetch-Site"); site {
	case "", "same-origin", "none":
	default:
		return "cross_site_request", "this gateway has no client keys and refuses requests a browser marks Sec-Fetch-Site: " + quoteShort(site) +
			" (a web page driving it); configure keys: to serve browsers"
	}
	if o := r.Header.Get("Origin"); o != "" && !sameOrigin(o, r.Host) {
		return "cross_site_request", "this gateway has no client keys and refuses requests from another origin (Origin " + quoteShort(o) +
			"); configure keys: to serve browsers"
	}
	if r.Method == http.MethodPost {
		if ct := r.Header.Get("Content-Type"); ct != "" && !jsonType(ct) {
			return "unsupported_content_type", "this gateway has no client keys and takes POST bodies only as JSON: send Content-Type: application/json (got " +
				quoteShort(ct) + ", which a web page can send without asking)"
		}
	}
	return "", ""
}

// keylessBrowser wraps h with browserRefusal: a refusal is 403 in the client's envelope.
func (g *Guard) keylessBrowser(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if code, msg := browserRefusal(r, g.AnyHost); code != "" {
			g.reject(Anonymous, "browser")
			g.refuse(w, r, &backends.Error{Status: http.StatusForbidden, Type: "permission_error", Code: code, Message: msg})
			return
		}
		h(w, r)
	}
}

// loopbackHost says whether a Host header names this machine's loopback: localhost (or
// a name under .localhost, which resolvers must answer with loopback, RFC 6761), an
// address in 127.0.0.0/8, or ::1; with or without a port.
func loopbackHost(host string) bool {
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	host = strings.ToLower(strings.TrimSuffix(host, "."))
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// sameOrigin says whether origin (scheme://host[:port]) names the host the request was
// sent to.
func sameOrigin(origin, host string) bool {
	u, err := url.Parse(origin)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return false // "null" (a sandboxed page, a file) among them
	}
	return strings.EqualFold(u.Host, host) || strings.EqualFold(withDefaultPort(u.Host, u.Scheme), withDefaultPort(host, u.Scheme))
}

func withDefaultPort(host, scheme string) string {
	if _, _, err := net.SplitHostPort(host); err == nil {
		return host
	}
	if scheme == "https" {
		return host + ":443"
	}
	return host + ":80"
}

// jsonType says whether a Content-Type is JSON: application/json, or a +json type.
func jsonType(ct string) bool {
	mt, _, err := mime.ParseMediaType(ct)
	return err == nil && (mt == "application/json" || strings.HasSuffix(mt, "+json"))
}

// quoteShort quotes a client's header for a message, cut to 100 bytes.
func quoteShort(s string) string {
	if len(s) > 100 {
		s = s[:100] + "…"
	}
	return `"` + strings.ToValidUTF8(s, "�") + `"`
}
