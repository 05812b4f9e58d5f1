package gateway_test

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/maskgate/maskgate/backends/openaicompat"
	"github.com/maskgate/maskgate/gateway"
)

// TestSockets_CappedPerKey: a socket is no request in flight, so one key could hold
// every connection the server accepts (one cap of 4096 for everyone). Now a key's
// sockets past its cap are refused with a 429 before the upgrade, another key's are
// not, and a closed socket gives its place back.
func TestSockets_CappedPerKey(t *testing.T) {
	up := newUpstream(t, replyJSON(200, completionJSON))
	gw := gatewayFor(t, up, withKeys(testKeys()), func(o *gateway.Options, _ *openaicompat.Options) { o.SocketsPerKey = 2 })
	url := "ws" + strings.TrimPrefix(gw.URL, "http") + "/v1/responses"
	dial := func(key string) (*websocket.Conn, *http.Response, error) {
		return websocket.DefaultDialer.Dial(url, http.Header{"Authorization": {"Bearer " + key}})
	}
	var open []*websocket.Conn
	for i := range 2 {
		c, _, err := dial(aliceKey)
		if err != nil {
			t.Fatalf("alice's socket %d: %v", i, err)
		}
		open = append(open, c)
	}
	_, resp, err := dial(aliceKey)
	if err == nil || resp == nil || resp.StatusCode != 429 {
		t.Fatalf("alice's third socket: %v, %v; want a 429", resp, err)
	}
	body, _ := io.ReadAll(resp.Body)
	if typ, code, msg := envelopeOf(t, body); typ != "rate_limit_error" || code != "rate_limit_exceeded" || !strings.Contains(msg, "2 WebSockets") {
		t.Errorf("envelope %s/%s %q", typ, code, msg)
	}
	b, _, err := dial(bobKey)
	if err != nil {
		t.Fatalf("bob's socket while alice holds hers: %v", err)
	}
	b.Close()
	open[0].Close()
	// The server sees the close when its reader does; give it the time a loaded machine
	// takes, then alice may open one again.
	deadline := time.Now().Add(20 * time.Second)
	for {
		c, _, err := dial(aliceKey)
		if err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("alice after closing a socket: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	open[1].Close()
}
