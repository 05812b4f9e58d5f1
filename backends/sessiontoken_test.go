package backends

import (
	"context"
	"encoding/base64"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// llmdRouter is a stand-in for llm-d's session-affinity scorer (strategy
// encoded_endpoint_header): a request whose x-session-token decodes to one of its pods
// goes there; any other goes to the next pod in turn; every answer names its pod in
// x-session-token, base64 of namespace/name. It records, per request, the token it was
// sent and the pod that served.
type llmdRouter struct {
	pods []string
	mu   sync.Mutex
	next int
	sent []string
	pod  []string
}

func (l *llmdRouter) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	l.mu.Lock()
	defer l.mu.Unlock()
	tok := r.Header.Get("X-Session-Token")
	pod := ""
	if b, err := base64.StdEncoding.DecodeString(tok); err == nil {
		for _, p := range l.pods {
			if "default/"+p == string(b) {
				pod = p
			}
		}
	}
	if pod == "" {
		pod = l.pods[l.next%len(l.pods)]
		l.next++
	}
	l.sent = append(l.sent, tok)
	l.pod = append(l.pod, pod)
	w.Header().Set("X-Session-Token", base64.StdEncoding.EncodeToString([]byte("default/"+pod)))
}

// TestHintTransport_EchoesTheRoutersSessionToken: a conversation's first request goes
// without a token, each later one carries the token the router answered its previous
// one with, so every turn stays on the pod of its first; two conversations get two pods
// and never each other's token.
func TestHintTransport_EchoesTheRoutersSessionToken(t *testing.T) {
	router := &llmdRouter{pods: []string{"pod-a", "pod-b"}}
	srv := httptest.NewServer(router)
	defer srv.Close()
	c := &http.Client{Transport: HintTransport(srv.Client().Transport)}
	store := &SessionTokens{}
	send := func(session string) {
		t.Helper()
		ctx := WithSessionToken(context.Background(), "x-session-token", session, store)
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL, strings.NewReader("{}"))
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	for range 3 {
		send("alpha")
		send("beta")
	}
	tokA := base64.StdEncoding.EncodeToString([]byte("default/pod-a"))
	tokB := base64.StdEncoding.EncodeToString([]byte("default/pod-b"))
	wantSent := []string{"", "", tokA, tokB, tokA, tokB}
	wantPod := []string{"pod-a", "pod-b", "pod-a", "pod-b", "pod-a", "pod-b"}
	for i := range wantSent {
		if router.sent[i] != wantSent[i] || router.pod[i] != wantPod[i] {
			t.Errorf("request %d: sent token %q to %s, want %q to %s", i, router.sent[i], router.pod[i], wantSent[i], wantPod[i])
		}
	}
	// Without a session the router's answer is not remembered.
	ctx := WithSessionToken(context.Background(), "x-session-token", "", store)
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL, nil)
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if n := store.Len(); n != 2 {
		t.Errorf("%d conversations remembered, want 2", n)
	}
}

// TestSessionTokens_BoundedAndForgotten: past Max the least recently used conversation
// goes; a token unused past TTL is forgotten; a token that could not go back as a header
// unchanged is not remembered, nor does it replace the one remembered.
func TestSessionTokens_BoundedAndForgotten(t *testing.T) {
	now := time.Unix(1000, 0)
	s := &SessionTokens{Max: 2, TTL: time.Minute, Now: func() time.Time { return now }}
	s.Put("a", "ta")
	s.Put("b", "tb")
	s.Get("a") // a is now the most recent
	s.Put("c", "tc")
	if s.Get("b") != "" || s.Get("a") != "ta" || s.Get("c") != "tc" {
		t.Errorf("after a third conversation: a %q, b %q, c %q; want ta, none, tc", s.Get("a"), s.Get("b"), s.Get("c"))
	}
	for _, bad := range []string{"", "two words", "tab\tinside", "caf\u00e9", strings.Repeat("x", MaxSessionToken+1)} {
		s.Put("a", bad)
		if got := s.Get("a"); got != "ta" {
			t.Errorf("after Put(%q): %q, want ta kept", bad, got)
		}
	}
	now = now.Add(time.Minute + time.Second)
	if got := s.Get("c"); got != "" {
		t.Errorf("a token unused past the TTL: %q, want forgotten", got)
	}
}

// FuzzSessionToken: whatever a router answers with, a token remembered is one that
// goes back as a valid header value, at most MaxSessionToken bytes, and exactly as it
// came; anything else is not remembered.
func FuzzSessionToken(f *testing.F) {
	for _, s := range []string{"ZGVmYXVsdC9wb2QtYQ==", "", " lead", "trail ", "a\r\nX-Evil: 1", "\x00", "\x7f", "é", strings.Repeat("A", MaxSessionToken)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, tok string) {
		s := &SessionTokens{}
		s.Put("conv", tok)
		got := s.Get("conv")
		if ValidSessionToken(tok) != (got != "") {
			t.Fatalf("ValidSessionToken(%q) = %v, remembered %q", tok, ValidSessionToken(tok), got)
		}
		if got == "" {
			return
		}
		if got != tok || len(got) > MaxSessionToken || !fieldValue(got) {
			t.Fatalf("remembered %q for %q: not a header value that goes back unchanged", got, tok)
		}
	})
}

// fieldValue is RFC 9110's field-value: no control byte but HTAB, none of them DEL, and
// no whitespace at either end (a parser would trim it, so it would not come back as sent).
func fieldValue(v string) bool {
	for i := 0; i < len(v); i++ {
		if b := v[i]; b == 0x7f || (b < 0x20 && b != '\t') {
			return false
		}
	}
	return strings.Trim(v, " \t") == v
}
