package gateway_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/maskgate/maskgate/backends"
	"github.com/maskgate/maskgate/backends/oai"
	"github.com/maskgate/maskgate/backends/openaicompat"
	"github.com/maskgate/maskgate/gateway"
)

// seenRequest is what a fake router saw of one request: its headers and body.
type seenRequest struct {
	header http.Header
	body   []byte
}

// routerGateway is a gateway whose one upstream, kind vllm, is handler behind the
// transport the gateway is built with (backends.HintTransport); up sets the upstream's
// routing fields. It returns the gateway's URL and what the upstream saw.
func routerGateway(t *testing.T, up gateway.Upstream, handler func(w http.ResponseWriter, r *http.Request)) (string, func() []seenRequest) {
	t.Helper()
	var mu sync.Mutex
	var seen []seenRequest
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		seen = append(seen, seenRequest{r.Header.Clone(), b})
		mu.Unlock()
		handler(w, r)
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, completionJSON)
	}))
	t.Cleanup(srv.Close)
	be, err := openaicompat.New(openaicompat.Options{Name: "up", BaseURL: srv.URL + "/v1",
		Transport: backends.HintTransport(srv.Client().Transport)})
	if err != nil {
		t.Fatal(err)
	}
	up.Name, up.Kind, up.Models, up.Backend = "up", "vllm", []string{"*"}, be
	gw := httptest.NewServer(gateway.New(gateway.Options{ThreadSecret: []byte("salt"), Upstreams: []gateway.Upstream{up}}))
	t.Cleanup(gw.Close)
	return gw.URL, func() []seenRequest {
		mu.Lock()
		defer mu.Unlock()
		return append([]seenRequest(nil), seen...)
	}
}

// postThread sends one chat request in thread ("" for none) and returns the response's headers.
func postThread(t *testing.T, base, thread, body string) http.Header {
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
	return resp.Header
}

// TestRoutingHint_SessionTokenGoesBackPerConversation: before an upstream that answers
// as llm-d's session-affinity scorer does (x-session-token: base64 of the pod that
// served; a request carrying a pod's token goes to that pod, any other to the next pod in
// turn), each conversation's later turns carry the token its first turn was answered
// with, so each stays on its pod; two conversations hold two pods; a request naming no
// conversation carries none; the client never sees the token.
func TestRoutingHint_SessionTokenGoesBackPerConversation(t *testing.T) {
	pods := []string{"pod-a", "pod-b"}
	var mu sync.Mutex
	next := 0
	var served []string
	base, seen := routerGateway(t, gateway.Upstream{SessionTokenHeader: "x-session-token"}, func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		pod := ""
		if b, err := base64.StdEncoding.DecodeString(r.Header.Get("X-Session-Token")); err == nil {
			for _, p := range pods {
				if string(b) == "default/"+p {
					pod = p
				}
			}
		}
		if pod == "" {
			pod = pods[next%len(pods)]
			next++
		}
		served = append(served, pod)
		w.Header().Set("X-Session-Token", base64.StdEncoding.EncodeToString([]byte("default/"+pod)))
	})
	more := `{"model":"m","messages":[{"role":"user","content":"hi"},{"role":"assistant","content":"hello"},{"role":"user","content":"more"}]}`
	for i := range 3 {
		body := hintBody
		if i > 0 {
			body = more
		}
		for _, thread := range []string{"alpha", "beta"} {
			if h := postThread(t, base, thread, body); h.Get("X-Session-Token") != "" {
				t.Errorf("the client got the router's token %q", h.Get("X-Session-Token"))
			}
		}
	}
	postThread(t, base, "", hintBody)
	s := seen()
	if len(s) != 7 {
		t.Fatalf("upstream saw %d requests, want 7", len(s))
	}
	tok := func(pod string) string { return base64.StdEncoding.EncodeToString([]byte("default/" + pod)) }
	wantSent := []string{"", "", tok("pod-a"), tok("pod-b"), tok("pod-a"), tok("pod-b"), ""}
	wantPod := []string{"pod-a", "pod-b", "pod-a", "pod-b", "pod-a", "pod-b", "pod-a"}
	for i := range s {
		if got := s[i].header.Get("X-Session-Token"); got != wantSent[i] || served[i] != wantPod[i] {
			t.Errorf("request %d: token %q served by %s; want %q served by %s", i, got, served[i], wantSent[i], wantPod[i])
		}
	}
}

// nvextOf is the nvext member of a body the upstream saw.
func nvextOf(t *testing.T, body []byte) (ext struct {
	ExtraFields    []string        `json:"extra_fields"`
	AgentHints     map[string]any  `json:"agent_hints"`
	SessionControl json.RawMessage `json:"session_control"`
}) {
	t.Helper()
	raw, ok := oai.Get(body, "nvext")
	if !ok {
		t.Fatalf("no nvext in %s", body)
	}
	if err := json.Unmarshal(raw, &ext); err != nil {
		t.Fatal(err)
	}
	return ext
}

// TestRoutingHint_NVExtNamesTheConversation: with nvext configured, every Chat
// Completions body upstream carries agent_hints and a session_control whose session_id
// is the conversation's salted value (one per conversation, 32 hex digits, not the
// client's id); a client's own nvext keeps its members and the values it set; the rest
// of the body is the client's bytes.
func TestRoutingHint_NVExtNamesTheConversation(t *testing.T) {
	base, seen := routerGateway(t, gateway.Upstream{NVExt: backends.NVExt{SessionControl: true, SessionAction: "bind",
		Priority: ptrInt(5), SpeculativePrefill: true}}, func(http.ResponseWriter, *http.Request) {})
	messages := `[{"role":"user","content":"hi"}]`
	postThread(t, base, "alpha", `{"model":"m","messages":`+messages+`}`)
	postThread(t, base, "alpha", `{"model":"m","messages":`+messages+`,"nvext":{"extra_fields":["timing"],"agent_hints":{"priority":1}}}`)
	postThread(t, base, "beta", `{"model":"m","messages":`+messages+`}`)
	postThread(t, base, "", `{"model":"m","messages":`+messages+`}`)
	s := seen()
	if len(s) != 4 {
		t.Fatalf("upstream saw %d requests, want 4", len(s))
	}
	var ids []string
	for i, r := range s {
		if got, _ := oai.Get(r.body, "messages"); string(got) != messages {
			t.Errorf("request %d: messages %s, want the client's %s", i, got, messages)
		}
		ext := nvextOf(t, r.body)
		if ext.AgentHints["speculative_prefill"] != true {
			t.Errorf("request %d: agent_hints %v, want speculative_prefill true", i, ext.AgentHints)
		}
		var sc struct {
			SessionID string `json:"session_id"`
			Action    string `json:"action"`
		}
		if ext.SessionControl != nil {
			if err := json.Unmarshal(ext.SessionControl, &sc); err != nil || sc.Action != "bind" {
				t.Errorf("request %d: session_control %s, want action bind", i, ext.SessionControl)
			}
		}
		ids = append(ids, sc.SessionID)
	}
	if !hex32.MatchString(ids[0]) || ids[1] != ids[0] {
		t.Errorf("alpha's session ids %q, %q: want one 32-hex value", ids[0], ids[1])
	}
	if !hex32.MatchString(ids[2]) || ids[2] == ids[0] {
		t.Errorf("beta's session id %q, alpha's %q: want its own", ids[2], ids[0])
	}
	if ids[3] != "" {
		t.Errorf("a request naming no conversation has session id %q, want no session_control", ids[3])
	}
	if p := nvextOf(t, s[0].body).AgentHints["priority"]; p != 5.0 {
		t.Errorf("configured priority went as %v, want 5", p)
	}
	own := nvextOf(t, s[1].body)
	if own.AgentHints["priority"] != 1.0 || len(own.ExtraFields) != 1 || own.ExtraFields[0] != "timing" {
		t.Errorf("the client's nvext became extra_fields %v, agent_hints %v; want its timing and priority 1 kept", own.ExtraFields, own.AgentHints)
	}
}

// TestRoutingHint_NVExtNamesTheCaller: under hint_value caller one caller's
// conversations share one session_id.
func TestRoutingHint_NVExtNamesTheCaller(t *testing.T) {
	base, seen := routerGateway(t, gateway.Upstream{HintValue: gateway.HintCaller, NVExt: backends.NVExt{SessionControl: true}},
		func(http.ResponseWriter, *http.Request) {})
	postThread(t, base, "alpha", hintBody)
	postThread(t, base, "beta", hintBody)
	s := seen()
	a, b := nvextOf(t, s[0].body).SessionControl, nvextOf(t, s[1].body).SessionControl
	if a == nil || string(a) != string(b) {
		t.Errorf("session_control %s and %s: want one for the one caller", a, b)
	}
}

func ptrInt(n int) *int { return &n }
