package gateway_test

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/gorilla/websocket"

	"github.com/maskgate/maskgate/backends/openaicompat"
	"github.com/maskgate/maskgate/gateway"
)

// A keyless gateway serves the local user's programs, not the web pages that user
// opens: a cross-site simple POST (text/plain, no preflight) and a DNS-rebinding page
// (its own name for 127.0.0.1, so same-origin to the browser) are refused before any
// upstream call, while an SDK's JSON request, with or without a same-origin Origin, is
// served. auth: none (AnyHost) lifts only the Host check.
func TestKeyless_BrowserPagesAreRefused(t *testing.T) {
	up := newUpstream(t, replyJSON(200, completionJSON))
	keyless := gatewayFor(t, up)
	anyHost := gatewayFor(t, up, func(o *gateway.Options, _ *openaicompat.Options) { o.AnyHost = true })
	own := strings.TrimPrefix(keyless.URL, "http://")
	body := `{"model":"m1","messages":[{"role":"user","content":"hi"}]}`
	for _, tc := range []struct {
		name    string
		g       *testGateway
		host    string
		headers map[string]string
		code    string // the refusal's code; "" for served
	}{
		{"an SDK's JSON request", keyless, "", map[string]string{"Content-Type": "application/json"}, ""},
		{"no Content-Type at all", keyless, "", nil, ""},
		{"a same-origin page", keyless, "", map[string]string{"Content-Type": "application/json", "Origin": "http://" + own, "Sec-Fetch-Site": "same-origin"}, ""},
		{"localhost by name", keyless, "localhost:4000", map[string]string{"Content-Type": "application/json"}, ""},
		{"cross-site text/plain POST", keyless, "", map[string]string{"Content-Type": "text/plain;charset=UTF-8", "Origin": "https://evil.example", "Sec-Fetch-Site": "cross-site"}, "cross_site_request"},
		{"cross-site form with only an Origin", keyless, "", map[string]string{"Content-Type": "application/x-www-form-urlencoded", "Origin": "https://evil.example"}, "cross_site_request"},
		{"a sandboxed page's null Origin", keyless, "", map[string]string{"Content-Type": "application/json", "Origin": "null"}, "cross_site_request"},
		{"text/plain with no Origin", keyless, "", map[string]string{"Content-Type": "text/plain"}, "unsupported_content_type"},
		{"a rebinding Host", keyless, "evil.example:4000", map[string]string{"Content-Type": "application/json", "Origin": "http://evil.example:4000", "Sec-Fetch-Site": "same-origin"}, "host_not_allowed"},
		{"a LAN address as Host", keyless, "192.168.1.20:4000", map[string]string{"Content-Type": "application/json"}, "host_not_allowed"},
		{"auth none: any Host", anyHost, "gateway.internal:4000", map[string]string{"Content-Type": "application/json"}, ""},
		{"auth none: still no cross-site POST", anyHost, "gateway.internal:4000", map[string]string{"Content-Type": "text/plain", "Origin": "https://evil.example"}, "cross_site_request"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			up.mu.Lock()
			before := len(up.bodies)
			up.mu.Unlock()
			req, _ := http.NewRequest(http.MethodPost, tc.g.URL+"/v1/chat/completions", strings.NewReader(body))
			if tc.host != "" {
				req.Host = tc.host
			}
			for k, v := range tc.headers {
				req.Header.Set(k, v)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			up.mu.Lock()
			reached := len(up.bodies) > before
			up.mu.Unlock()
			if tc.code == "" {
				if resp.StatusCode != 200 || !reached {
					t.Fatalf("%d %s (upstream reached: %v), want it served", resp.StatusCode, b, reached)
				}
				return
			}
			var env struct {
				Error struct{ Type, Code, Message string }
			}
			if err := json.Unmarshal(b, &env); err != nil || resp.StatusCode != http.StatusForbidden || env.Error.Code != tc.code {
				t.Fatalf("%d %s, want 403 with code %s", resp.StatusCode, b, tc.code)
			}
			if reached {
				t.Error("the refused request reached the upstream")
			}
		})
	}
}

// The WebSocket door's origin check compares Origin with Host, which a rebinding page
// controls both of: the Host check refuses its upgrade first.
func TestKeyless_RebindingWebSocketRefused(t *testing.T) {
	g := gatewayFor(t, newUpstream(t, replyJSON(200, completionJSON)))
	url := "ws" + strings.TrimPrefix(g.URL, "http") + "/v1/responses"
	h := http.Header{"Host": {"evil.example:4000"}, "Origin": {"http://evil.example:4000"}}
	c, resp, err := websocket.DefaultDialer.Dial(url, h)
	if err == nil {
		c.Close()
		t.Fatal("a rebinding page's WebSocket was accepted")
	}
	if resp == nil || resp.StatusCode != http.StatusForbidden {
		t.Fatalf("upgrade answered %v (%v), want 403", resp, err)
	}
	// The same upgrade to the loopback name it dialled is a program's, and accepted.
	c, _, err = websocket.DefaultDialer.Dial(url, nil)
	if err != nil {
		t.Fatalf("a program's WebSocket: %v", err)
	}
	c.Close()
}
