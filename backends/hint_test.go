package backends

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
)

// TestHintTransport_SetsTheContextsHeaderOnACopy: a request made under WithRoutingHint
// reaches the server with the header; one made without it carries none; the caller's
// request is not modified (a RoundTripper must not).
func TestHintTransport_SetsTheContextsHeaderOnACopy(t *testing.T) {
	got := make(chan http.Header, 2)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { got <- r.Header.Clone() }))
	defer srv.Close()
	c := &http.Client{Transport: HintTransport(srv.Client().Transport)}

	ctx := WithRoutingHint(context.Background(), "x-session-id", "t-1")
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL, nil)
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if h := <-got; h.Get("X-Session-Id") != "t-1" {
		t.Errorf("hinted request: X-Session-Id %q, want t-1", h.Get("X-Session-Id"))
	}
	if v := req.Header.Get("X-Session-Id"); v != "" {
		t.Errorf("the caller's request was modified: X-Session-Id %q", v)
	}

	req, _ = http.NewRequestWithContext(context.Background(), http.MethodGet, srv.URL, nil)
	if resp, err = c.Do(req); err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if h := <-got; h.Get("X-Session-Id") != "" {
		t.Errorf("request without a hint: X-Session-Id %q, want none", h.Get("X-Session-Id"))
	}
}

func TestWithRoutingHint_EmptyNameOrValueIsNone(t *testing.T) {
	for _, nv := range [][2]string{{"", "v"}, {"x-session-id", ""}} {
		if _, _, ok := RoutingHint(WithRoutingHint(context.Background(), nv[0], nv[1])); ok {
			t.Errorf("WithRoutingHint(%q, %q) carries a hint", nv[0], nv[1])
		}
	}
}
