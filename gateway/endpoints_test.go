package gateway_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/maskgate/maskgate/backends/openaicompat"
	"github.com/maskgate/maskgate/gateway"
)

func get(t *testing.T, url string) (*http.Response, []byte) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp, body
}

func TestModels_ListsConfiguredAndWildcardUpstreamModels(t *testing.T) {
	up := newUpstream(t, replyJSON(200, `{"object":"list","data":[{"id":"llama-3"},{"id":"m1"}]}`))
	be, _ := openaicompat.New(openaicompat.Options{Name: "up", BaseURL: up.URL + "/v1"})
	srv := newGateway(t, gateway.Upstream{Name: "up", Models: []string{"m1", "*"}, Backend: be})
	resp, body := get(t, srv.URL+"/v1/models")
	if resp.StatusCode != 200 {
		t.Fatalf("status %d", resp.StatusCode)
	}
	var raw struct {
		Object string                       `json:"object"`
		Data   []map[string]json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal(body, &raw); err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, m := range raw.Data {
		var id string
		_ = json.Unmarshal(m["id"], &id)
		ids = append(ids, id)
		if string(m["object"]) != `"model"` || string(m["owned_by"]) != `"up"` {
			t.Errorf("entry %s", body)
		}
	}
	if diff := cmp.Diff([]string{"m1", "llama-3"}, ids); raw.Object != "list" || diff != "" {
		t.Errorf("models (-want +got):\n%s\n%s", diff, body)
	}
}

func TestReadyz_ReportsEachBackend(t *testing.T) {
	up := newUpstream(t, replyJSON(200, `{"object":"list","data":[]}`))
	good, _ := openaicompat.New(openaicompat.Options{Name: "good", BaseURL: up.URL + "/v1"})
	bad, _ := openaicompat.New(openaicompat.Options{Name: "bad", BaseURL: "http://127.0.0.1:1/v1"})
	srv := newGateway(t, gateway.Upstream{Name: "good", Kind: "vllm", Models: []string{"a"}, Backend: good},
		gateway.Upstream{Name: "bad", Kind: "vllm", Models: []string{"b"}, Backend: bad})
	resp, body := get(t, srv.URL+"/readyz")
	var got struct {
		Ready    bool `json:"ready"`
		Backends []struct {
			Name  string `json:"name"`
			Ready bool   `json:"ready"`
			Error string `json:"error"`
		} `json:"backends"`
	}
	if err := json.Unmarshal(body, &got); err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 200 || !got.Ready || len(got.Backends) != 2 ||
		!got.Backends[0].Ready || got.Backends[1].Ready || got.Backends[1].Error == "" {
		t.Errorf("status %d body %s", resp.StatusCode, body)
	}

	none := newGateway(t, gateway.Upstream{Name: "bad", Models: []string{"b"}, Backend: bad})
	if resp, body := get(t, none.URL+"/readyz"); resp.StatusCode != 503 {
		t.Errorf("no ready backend: status %d %s", resp.StatusCode, body)
	}
	if resp, _ := get(t, none.URL+"/healthz"); resp.StatusCode != 200 {
		t.Errorf("healthz status %d", resp.StatusCode)
	}
}

func TestRouting_WrongMethodAndUnknownPathAreEnvelopes(t *testing.T) {
	srv := newGateway(t)
	resp, body := get(t, srv.URL+"/v1/chat/completions")
	if resp.StatusCode != 405 || resp.Header.Get("Allow") != "POST" {
		t.Errorf("GET chat: status %d allow %q", resp.StatusCode, resp.Header.Get("Allow"))
	}
	assertEnvelope(t, body, "", "")
	resp, body = get(t, srv.URL+"/v2/nothing")
	if resp.StatusCode != 404 {
		t.Errorf("unknown path: status %d", resp.StatusCode)
	}
	assertEnvelope(t, body, "", "unknown_url")
}

// TestReadyz_OneRoundOfProbesPerTTLAndNoErrorText: /readyz needs no key, and each call
// probed every backend with the operator's credentials and echoed the probe's error
// (an upstream's address, its answer). Now one round of probes answers every call for
// five seconds of the gateway's clock, and a failed probe says only "unreachable".
func TestReadyz_OneRoundOfProbesPerTTLAndNoErrorText(t *testing.T) {
	clock := &manualClock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	var mu sync.Mutex
	probes := 0
	up := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		probes++
		mu.Unlock()
		replyJSON(500, `{"error":{"message":"organization org-secret-4417 is over quota","type":"server_error"}}`)(w, r)
	})
	gw := gatewayFor(t, up, withClock(clock))
	count := func() int {
		mu.Lock()
		defer mu.Unlock()
		return probes
	}
	for i := range 20 {
		resp, body := get(t, gw.URL+"/readyz")
		if resp.StatusCode != 503 || bytes.Contains(body, []byte("org-secret")) || bytes.Contains(body, []byte("127.0.0.1")) ||
			!bytes.Contains(body, []byte(`"error":"unreachable"`)) {
			t.Fatalf("call %d: %d %s, want 503 saying unreachable and nothing of the upstream's answer or address", i, resp.StatusCode, body)
		}
	}
	if n := count(); n != 1 {
		t.Errorf("20 calls within the TTL probed the upstream %d times, want 1", n)
	}
	clock.advance(4 * time.Second)
	get(t, gw.URL+"/readyz")
	if n := count(); n != 1 {
		t.Errorf("4 s later: %d probes, want still 1", n)
	}
	clock.advance(time.Second)
	get(t, gw.URL+"/readyz")
	if n := count(); n != 2 {
		t.Errorf("5 s later: %d probes, want 2", n)
	}
}
