package gateway_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/maskgate/maskgate/backends/openaicompat"
	"github.com/maskgate/maskgate/gateway"
	"github.com/maskgate/maskgate/tenant"
	"github.com/maskgate/maskgate/toolsearch/state"
)

// Client keys of the tests; random-looking, as the README asks.
const (
	aliceKey = "sk-alice-6b1f0c9e2d7a4b38"
	bobKey   = "sk-bob-93c2e8f1a0d54b7c"
	carolKey = "sk-carol-0e4d7b9a1c2f3e58"
)

func testKeys(edit ...func(*tenant.Key)) *tenant.Keyring {
	keys := []tenant.Key{
		{Name: "alice", Hash: tenant.HashOf(aliceKey)},
		{Name: "bob", Hash: tenant.HashOf(bobKey)},
		{Name: "carol", Hash: tenant.HashOf(carolKey)},
	}
	for i := range keys {
		for _, e := range edit {
			e(&keys[i])
		}
	}
	ring, err := tenant.NewKeyring(keys)
	if err != nil {
		panic(err)
	}
	return ring
}

func withKeys(ring *tenant.Keyring) func(*gateway.Options, *openaicompat.Options) {
	return func(o *gateway.Options, _ *openaicompat.Options) { o.Keys = ring }
}

// send makes one request with the given headers and returns status, headers and body.
func send(t testing.TB, method, url string, headers map[string]string, body string) (int, http.Header, []byte) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, _ := http.NewRequestWithContext(ctx, method, url, rd)
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, out
}

func bearer(key string) map[string]string { return map[string]string{"Authorization": "Bearer " + key} }

// envelopeOf reads an OpenAI error envelope, failing the test if the body is not one.
func envelopeOf(t testing.TB, body []byte) (typ, code, msg string) {
	t.Helper()
	var env struct {
		Error *struct {
			Message string  `json:"message"`
			Type    string  `json:"type"`
			Code    *string `json:"code"`
		} `json:"error"`
	}
	if err := json.Unmarshal(body, &env); err != nil || env.Error == nil {
		t.Fatalf("not an error envelope: %s", body)
	}
	if env.Error.Code != nil {
		code = *env.Error.Code
	}
	return env.Error.Type, code, env.Error.Message
}

const hello = `{"model":"m1","messages":[{"role":"user","content":"hi"}]}`

func TestAuth_MissingOrWrongKeyIs401InTheEnvelope(t *testing.T) {
	up := newUpstream(t, replyJSON(200, completionJSON))
	gw := gatewayFor(t, up, withKeys(testKeys()))
	for _, tt := range []struct {
		name    string
		headers map[string]string
		msg     string
	}{
		{"none", nil, "missing API key"},
		{"wrong", bearer("sk-alice-6b1f0c9e2d7a4b3"), "invalid API key"},
		{"the hash instead of the key", bearer(tenant.HashKey(aliceKey)), "invalid API key"},
		{"basic scheme", map[string]string{"Authorization": "Basic " + aliceKey}, "malformed Authorization"},
		{"two different keys", map[string]string{"Authorization": "Bearer " + aliceKey, "x-api-key": bobKey}, "two different keys"},
		{"wrong x-api-key", map[string]string{"x-api-key": "nope"}, "invalid API key"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			status, h, body := send(t, "POST", gw.URL+"/v1/chat/completions", tt.headers, hello)
			if status != 401 {
				t.Fatalf("status %d, want 401: %s", status, body)
			}
			typ, code, msg := envelopeOf(t, body)
			if typ != "authentication_error" || code != "invalid_api_key" || !strings.Contains(msg, tt.msg) {
				t.Errorf("envelope %s/%s %q, want authentication_error/invalid_api_key with %q", typ, code, msg, tt.msg)
			}
			if h.Get("WWW-Authenticate") == "" {
				t.Error("no WWW-Authenticate")
			}
			if strings.Contains(msg, aliceKey) || strings.Contains(msg, bobKey) {
				t.Errorf("the message echoes a key: %s", msg)
			}
		})
	}
	for _, path := range []string{"/v1/models", "/v1/tools", "/v1/tools/search?q=x"} {
		if status, _, _ := send(t, "GET", gw.URL+path, nil, ""); status != 401 {
			t.Errorf("GET %s without a key: %d, want 401", path, status)
		}
	}
	for _, path := range []string{"/healthz", "/metrics"} {
		if status, _, _ := send(t, "GET", gw.URL+path, nil, ""); status != 200 {
			t.Errorf("GET %s without a key: %d, want 200 (probes and scrapers carry no key)", path, status)
		}
	}
	if len(up.bodies) != 0 {
		t.Errorf("the upstream got %d requests from unauthenticated clients", len(up.bodies))
	}
	if got := metricValue(t, gw, "maskgate_rejected_requests_total", map[string]string{"key": "none", "reason": "unauthenticated"}); got != 9 {
		t.Errorf("rejected{none,unauthenticated} = %v, want 9", got)
	}
}

func TestAuth_BearerAndXAPIKeyBothAuthenticate(t *testing.T) {
	up := newUpstream(t, replyJSON(200, completionJSON))
	gw := gatewayFor(t, up, withKeys(testKeys()))
	for _, h := range []map[string]string{
		bearer(aliceKey),
		{"Authorization": "bearer " + aliceKey}, // the scheme is case-insensitive
		{"x-api-key": bobKey},                   // Anthropic-style clients
		{"Authorization": "Bearer " + carolKey, "x-api-key": carolKey},
	} {
		if status, _, body := send(t, "POST", gw.URL+"/v1/chat/completions", h, hello); status != 200 {
			t.Errorf("%v: status %d: %s", h, status, body)
		}
	}
}

func TestAuth_AModelOrBackendOutsideTheKeysIs403(t *testing.T) {
	up := newUpstream(t, replyJSON(200, completionJSON))
	ring := testKeys(func(k *tenant.Key) {
		switch k.Name {
		case "alice":
			k.Models = []string{"m1"}
		case "bob":
			k.Backends = []string{"elsewhere"}
		}
	})
	gw := gatewayFor(t, up, withKeys(ring))
	for _, tt := range []struct {
		key, model string
		want       int
	}{
		{aliceKey, "m1", 200},
		{aliceKey, "m2", 403}, // routed by "*", not in alice's models
		{bobKey, "m1", 403},   // bob may not reach backend "up"
		{carolKey, "m2", 200},
	} {
		status, _, body := send(t, "POST", gw.URL+"/v1/chat/completions", bearer(tt.key), strings.Replace(hello, "m1", tt.model, 1))
		if status != tt.want {
			t.Errorf("%s asks %s: %d, want %d: %s", tt.key, tt.model, status, tt.want, body)
			continue
		}
		if status == 403 {
			if typ, code, _ := envelopeOf(t, body); typ != "permission_error" || code != "model_not_allowed" {
				t.Errorf("403 envelope %s/%s", typ, code)
			}
		}
	}
	if len(up.bodies) != 2 {
		t.Errorf("the upstream got %d requests, want the 2 allowed", len(up.bodies))
	}
	// /v1/models lists what the key may use.
	_, _, body := send(t, "GET", gw.URL+"/v1/models", bearer(aliceKey), "")
	if !strings.Contains(string(body), `"m1"`) {
		t.Errorf("alice's models lack m1: %s", body)
	}
	_, _, body = send(t, "GET", gw.URL+"/v1/models", bearer(bobKey), "")
	if strings.Contains(string(body), `"m1"`) {
		t.Errorf("bob's models list m1 on a backend he may not reach: %s", body)
	}
}

func TestAuth_TheAdminKeyOnlyAsBearerAndNeverAClientKey(t *testing.T) {
	const admin = "adm-5e0c1b7d9a2f4e63"
	up := newUpstream(t, replyJSON(200, completionJSON))
	gw := gatewayFor(t, up, withKeys(testKeys()), func(o *gateway.Options, _ *openaicompat.Options) {
		o.AdminKey = admin
		o.State = state.NewMemory(state.Options{})
	})
	for _, tt := range []struct {
		headers map[string]string
		want    int
	}{
		{bearer(admin), 200},
		{map[string]string{"x-api-key": admin}, 401},
		{map[string]string{"Authorization": admin}, 401}, // no scheme
		{map[string]string{"Authorization": "Basic " + admin}, 401},
		{bearer(aliceKey), 401},
	} {
		if status, _, _ := send(t, "GET", gw.URL+"/admin/threads", tt.headers, ""); status != tt.want {
			t.Errorf("%v: %d, want %d", tt.headers, status, tt.want)
		}
	}
	if status, _, _ := send(t, "POST", gw.URL+"/v1/chat/completions", bearer(admin), hello); status != 401 {
		t.Errorf("the admin key on /v1: %d, want 401", status)
	}
}

// metricValue is the value of the counter or gauge name with exactly these labels; 0
// when it has not been written.
func metricValue(t testing.TB, gw *testGateway, name string, labels map[string]string) float64 {
	t.Helper()
	mfs, err := gw.reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
	next:
		for _, m := range mf.GetMetric() {
			if len(m.GetLabel()) != len(labels) {
				continue
			}
			for _, l := range m.GetLabel() {
				if labels[l.GetName()] != l.GetValue() {
					continue next
				}
			}
			if c := m.GetCounter(); c != nil {
				return c.GetValue()
			}
			return m.GetGauge().GetValue()
		}
	}
	return 0
}

// postStatus posts a chat body without a key and returns status, headers and body.
func (g *testGateway) postStatus(t testing.TB, body string) (int, http.Header, []byte) {
	return send(t, "POST", g.URL+"/v1/chat/completions", nil, body)
}

// FuzzAuthenticate: whatever the Authorization and x-api-key headers hold, the gateway
// answers 401 in the envelope unless one of them carries a configured key, and never
// echoes what was presented.
func FuzzAuthenticate(f *testing.F) {
	f.Add("Bearer "+aliceKey, "")
	f.Add("", aliceKey)
	f.Add("bearer  "+aliceKey+" ", "")
	f.Add("Bearer", aliceKey)
	f.Add("Basic xyz", "")
	f.Add("Bearer "+aliceKey, bobKey)
	f.Add("Bearer \x00", "\xff")
	srv := gateway.New(gateway.Options{Keys: testKeys()})
	f.Fuzz(func(t *testing.T, authorization, apiKey string) {
		req := httptest.NewRequest(http.MethodGet, "/v1/models", nil)
		req.Header["Authorization"] = []string{authorization}
		req.Header["X-Api-Key"] = []string{apiKey}
		rec := httptest.NewRecorder()
		srv.ServeHTTP(rec, req)
		carries := func(s string) bool {
			return strings.Contains(s, aliceKey) || strings.Contains(s, bobKey) || strings.Contains(s, carolKey)
		}
		switch rec.Code {
		case http.StatusOK:
			if !carries(authorization) && !carries(apiKey) {
				t.Fatalf("200 for Authorization %q, x-api-key %q", authorization, apiKey)
			}
		case http.StatusUnauthorized:
			typ, code, msg := envelopeOf(t, rec.Body.Bytes())
			if typ != "authentication_error" || code != "invalid_api_key" {
				t.Fatalf("401 envelope %s/%s", typ, code)
			}
			for _, s := range []string{authorization, apiKey} {
				if len(s) >= 8 && strings.Contains(msg, s) {
					t.Fatalf("the message echoes what was presented: %q", msg)
				}
			}
		default:
			t.Fatalf("status %d", rec.Code)
		}
	})
}
