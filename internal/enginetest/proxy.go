package enginetest

import "net/http"

// ProxyTransport is the transport a test's own proxy in front of llama-server sends with:
// a new connection for every request. llama-server (cpp-httplib) closes a kept-alive
// connection after 5 s idle, and a request written on it in that instant fails ("use of
// closed network connection", a reset, EOF) without an answer. The gateway's
// backends.Upstream sends such a request again; a plain http.Transport does not for a
// POST, and the test's proxy answered the gateway a 502 (TestImages_TextOnlyLlamaServer,
// in a full run). On loopback a connection a request costs nothing worth keeping.
func ProxyTransport() *http.Transport {
	return &http.Transport{DisableKeepAlives: true}
}
