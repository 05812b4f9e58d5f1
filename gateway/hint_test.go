package gateway_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/maskgate/maskgate/backends"
	"github.com/maskgate/maskgate/backends/openaicompat"
	"github.com/maskgate/maskgate/gateway"
)

// hintGateway is a gateway over one scripted upstream whose routing hint goes in
// X-Session-Id, holding value; it returns the gateway's URL and the hints the upstream
// saw, one per request ("" for none).
func hintGateway(t *testing.T, value string) (string, func() []string) {
	t.Helper()
	var mu sync.Mutex
	var seen []string
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		mu.Lock()
		seen = append(seen, r.Header.Get("X-Session-Id"))
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, completionJSON)
	}))
	t.Cleanup(up.Close)
	be, err := openaicompat.New(openaicompat.Options{Name: "up", BaseURL: up.URL + "/v1",
		Transport: backends.HintTransport(up.Client().Transport)})
	if err != nil {
		t.Fatal(err)
	}
	gw := httptest.NewServer(gateway.New(gateway.Options{ThreadSecret: []byte("salt"), Upstreams: []gateway.Upstream{{
		Name: "up", Kind: "vllm", Models: []string{"*"}, Backend: be, HintHeader: "x-session-id", HintValue: value}}}))
	t.Cleanup(gw.Close)
	return gw.URL, func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), seen...)
	}
}

// chatWith posts one small chat request with the X-Thread-Id thread ("" for none).
func chatWith(t *testing.T, base, thread, body string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, base+"/v1/chat/completions", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	if thread != "" {
		req.Header.Set("X-Thread-Id", thread)
	}
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if b, _ := io.ReadAll(resp.Body); resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d: %s", resp.StatusCode, b)
	}
}

const hintBody = `{"model":"m","messages":[{"role":"user","content":"hi"}]}`

var hex32 = regexp.MustCompile(`^[0-9a-f]{32}$`)

// TestRoutingHint_NamesTheThreadUpstream: under hint_value thread every request of one
// conversation carries one value, two conversations two, a request naming none carries
// no header, and the value is a salted hash, not the client's own id.
func TestRoutingHint_NamesTheThreadUpstream(t *testing.T) {
	base, seen := hintGateway(t, gateway.HintThread)
	chatWith(t, base, "alpha", hintBody)
	chatWith(t, base, "alpha", `{"model":"m","messages":[{"role":"user","content":"hi"},{"role":"assistant","content":"hello"},{"role":"user","content":"more"}]}`)
	chatWith(t, base, "beta", hintBody)
	chatWith(t, base, "", hintBody)
	chatWith(t, base, "", `{"model":"m","user":"alpha","messages":[{"role":"user","content":"hi"}]}`)
	h := seen()
	if len(h) != 5 {
		t.Fatalf("upstream saw %d requests, want 5", len(h))
	}
	if !hex32.MatchString(h[0]) {
		t.Errorf("hint %q: want 32 hex digits (the salted thread id)", h[0])
	}
	if h[1] != h[0] {
		t.Errorf("one conversation, two hints: %q then %q", h[0], h[1])
	}
	if h[2] == h[0] || !hex32.MatchString(h[2]) {
		t.Errorf("thread beta's hint %q; alpha's %q", h[2], h[0])
	}
	if h[3] != "" {
		t.Errorf("a request naming no thread sent hint %q, want none", h[3])
	}
	if !hex32.MatchString(h[4]) || h[4] == h[0] {
		t.Errorf("user alpha's hint %q: want its own thread, not X-Thread-Id alpha's %q", h[4], h[0])
	}
}

// TestRoutingHint_NamesTheCallerUpstream: under hint_value caller one caller's
// conversations, and its requests that name none, carry one value.
func TestRoutingHint_NamesTheCallerUpstream(t *testing.T) {
	base, seen := hintGateway(t, gateway.HintCaller)
	chatWith(t, base, "alpha", hintBody)
	chatWith(t, base, "beta", hintBody)
	chatWith(t, base, "", hintBody)
	h := seen()
	if len(h) != 3 || !hex32.MatchString(h[0]) || h[1] != h[0] || h[2] != h[0] {
		t.Errorf("hints %q: want one 32-hex value for the one caller", h)
	}
}
