package gateway_test

import (
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/maskgate/maskgate/backends/openaicompat"
	"github.com/maskgate/maskgate/backends/vllm"
	"github.com/maskgate/maskgate/gateway"
	"github.com/maskgate/maskgate/tenant"
	"github.com/maskgate/maskgate/toolsearch/state"
)

// plantAs sends one "plant" turn as key (none when empty) with extra headers and returns
// the response headers and the upstream calls it caused.
func plantAs(t *testing.T, p *planter, gw *httptest.Server, key string, headers map[string]string, msgs []string, secret, tool string) (http.Header, []upstreamCall) {
	t.Helper()
	h := map[string]string{}
	if key != "" {
		h["Authorization"] = "Bearer " + key
	}
	for k, v := range headers {
		h[k] = v
	}
	before := p.n()
	status, rh, body := send(t, "POST", gw.URL+"/v1/chat/completions", h, chatBody(append(slices.Clone(msgs), userMsg("plant "+secret+" "+tool)), ""))
	if status != 200 {
		t.Fatalf("status %d: %s", status, body)
	}
	return rh, p.since(before)
}

// count is how many of ss are s.
func count(ss []string, s string) int {
	n := 0
	for _, x := range ss {
		if x == s {
			n++
		}
	}
	return n
}

func secretsIn(calls []upstreamCall) []string {
	var out []string
	for _, c := range calls {
		out = append(out, c.secrets...)
	}
	return out
}

// Probe: two clients sending the same "Authorization: Bearer unused" and X-Thread-Id t1
// shared one thread: the second's prompt held the first's hidden exchange. Now the
// thread is the authenticated identity's: two keys, two threads, whatever the id; one
// key shared by two clients is one identity, and shares, as documented.
func TestIsolation_SameThreadIdIsSharedOnlyWithinOneKey(t *testing.T) {
	p := newPlanter(t)
	gw := tenantGateway(t, p, testKeys(), false)
	msgs := []string{userMsg("hi")}
	t1 := map[string]string{"X-Thread-Id": "t1"}
	plantAs(t, p, gw, aliceKey, t1, msgs, "SECRET-alice-1", "alice_tool_01")

	_, calls := plantAs(t, p, gw, bobKey, t1, msgs, "SECRET-bob-2", "bob_tool_02")
	if got := secretsIn(calls); slices.Contains(got, "SECRET-alice-1") {
		t.Errorf("bob's prompt, same X-Thread-Id, other key, holds alice's secret: %v", got)
	}
	if slices.Contains(calls[0].tools, "alice_tool_01") {
		t.Errorf("bob's prompt has alice's loaded tool: %v", calls[0].tools)
	}
	// A second client with alice's key is alice: it carries on her conversation, and her
	// hidden exchange comes back after the message it followed (a hidden exchange is
	// anchored to that message and left out where it is gone), so her secret is in the
	// prompt more often than her own history holds it.
	carryOn := append(slices.Clone(msgs), userMsg("plant SECRET-alice-1 alice_tool_01"))
	_, calls = plantAs(t, p, gw, aliceKey, t1, carryOn, "SECRET-alice-3", "alice_tool_03")
	if got := secretsIn(calls[:1]); count(got, "SECRET-alice-1") < 2 || slices.Contains(got, "SECRET-bob-2") {
		t.Errorf("alice's second client: secrets %v, want alice's hidden exchange and not bob's", got)
	}
	if !slices.Contains(calls[0].tools, "alice_tool_01") {
		t.Errorf("alice's thread lost its loaded tool: %v", calls[0].tools)
	}
}

// Probe: two anonymous clients with the same system prompt and first message got the
// same X-Maskgate-Thread, and one's exchange was spliced into the other's prompt. Now,
// by default, a request that names no thread has none: nothing is kept, nothing shared.
func TestIsolation_AnonymousConversationsThatOpenAlikeShareNothingByDefault(t *testing.T) {
	p := newPlanter(t)
	gw := tenantGateway(t, p, nil, false) // no keys, loopback: one anonymous identity
	msgs := []string{systemMsg("You are helpful."), userMsg("hello")}
	h, _ := plantAs(t, p, gw, "", nil, msgs, "SECRET-first-1", "alice_tool_01")
	if th := h.Get(gateway.HeaderThread); th != "" {
		t.Errorf("a request that names no thread was filed under %s", th)
	}
	h, calls := plantAs(t, p, gw, "", nil, msgs, "SECRET-second-2", "bob_tool_01")
	if got := secretsIn(calls); slices.Contains(got, "SECRET-first-1") {
		t.Errorf("the second anonymous client's prompt holds the first's secret: %v", got)
	}
	if slices.Contains(calls[0].tools, "alice_tool_01") {
		t.Errorf("the second anonymous client sees the first's loaded tool: %v", calls[0].tools)
	}
	if th := h.Get(gateway.HeaderThread); th != "" {
		t.Errorf("thread header %s", th)
	}
}

// With fingerprinting on, conversations that open alike share within one identity (the
// documented cost), never across.
func TestIsolation_FingerprintsAreScopedToTheIdentity(t *testing.T) {
	p := newPlanter(t)
	gw := tenantGateway(t, p, testKeys(), true)
	msgs := []string{systemMsg("You are helpful."), userMsg("hello")}
	ha, _ := plantAs(t, p, gw, aliceKey, nil, msgs, "SECRET-alice-1", "alice_tool_01")
	hb, calls := plantAs(t, p, gw, bobKey, nil, msgs, "SECRET-bob-2", "bob_tool_02")
	if slices.Contains(secretsIn(calls), "SECRET-alice-1") || ha.Get(gateway.HeaderThread) == hb.Get(gateway.HeaderThread) {
		t.Errorf("bob's identical opening joined alice's thread (%s, %s)", ha.Get(gateway.HeaderThread), hb.Get(gateway.HeaderThread))
	}
	// Alice carrying on her conversation: her hidden exchange is back after the message
	// it followed (it is anchored there), so her secret is in the prompt more often than
	// her own history holds it.
	carryOn := append(slices.Clone(msgs), userMsg("plant SECRET-alice-1 alice_tool_01"))
	ha2, calls := plantAs(t, p, gw, aliceKey, nil, carryOn, "SECRET-alice-3", "alice_tool_03")
	if count(secretsIn(calls[:1]), "SECRET-alice-1") < 2 || ha2.Get(gateway.HeaderThread) != ha.Get(gateway.HeaderThread) {
		t.Error("alice's identical opening did not resume her fingerprinted thread")
	}
}

// Probe: X-Maskgate-Thread was the first 32 hex digits of an unsalted SHA-256 of the
// client's key. Now it is an HMAC under the process's secret: nothing of the key or the
// thread id shows, another process gives another id, and the admin API takes it.
func TestThreadHeader_IsSaltedAndShowsNothingOfTheKey(t *testing.T) {
	const admin = "adm-5e0c1b7d9a2f4e63"
	ids := map[string]bool{}
	for _, secret := range []string{"one secret", "another secret"} {
		p := newPlanter(t)
		mem := state.NewMemory(state.Options{})
		be, _ := openaicompat.New(openaicompat.Options{Name: "up", BaseURL: p.URL + "/v1"})
		gw := httptest.NewServer(gateway.New(gateway.Options{
			Upstreams: []gateway.Upstream{{Name: "up", Models: []string{"*"}, Backend: be}},
			Tools:     ownedCatalog(t), State: mem, Strategy: gateway.StrategyRemove,
			Keys: testKeys(), ThreadSecret: []byte(secret), AdminKey: admin,
		}))
		defer gw.Close()
		h, _ := plantAs(t, p, gw, aliceKey, map[string]string{"X-Thread-Id": "t1"}, []string{userMsg("hi")}, "SECRET-alice-1", "alice_tool_01")
		id := h.Get(gateway.HeaderThread)
		if len(id) != 32 || strings.Trim(id, "0123456789abcdef") != "" {
			t.Fatalf("thread id %q: want 32 hex digits", id)
		}
		for _, plain := range []string{aliceKey, "alice", "t1", "unused"} {
			sum := sha256.Sum256([]byte(plain))
			if strings.Contains(id, hex.EncodeToString(sum[:])[:16]) || strings.Contains(id, plain) {
				t.Errorf("thread id %s shows %q or its SHA-256", id, plain)
			}
		}
		ids[id] = true
		status, _, body := send(t, "DELETE", gw.URL+"/admin/threads/"+id, bearer(admin), "")
		if status != 200 || !strings.Contains(string(body), `"deleted":true`) {
			t.Errorf("admin DELETE of %s: %d %s", id, status, body)
		}
	}
	if len(ids) != 2 {
		t.Error("two thread secrets gave one id: the id is not salted")
	}
}

// isolate_cache: each isolated identity's requests carry a cache_salt of its own
// (replacing any the client sent), derived from the thread secret, showing nothing of
// the key; a key without it sends the client's bytes as they were.
func TestIsolation_IsolatedKeysGetACacheSaltOfTheirOwn(t *testing.T) {
	p := newPlanter(t)
	be, err := vllm.New(openaicompat.Options{Name: "gpu", BaseURL: p.URL + "/v1"})
	if err != nil {
		t.Fatal(err)
	}
	ring := testKeys(func(k *tenant.Key) { k.IsolateCache = k.Name != "carol" })
	gw := httptest.NewServer(gateway.New(gateway.Options{
		Upstreams: []gateway.Upstream{{Name: "gpu", Models: []string{"*"}, Backend: be}},
		Keys:      ring, ThreadSecret: []byte("s"),
	}))
	defer gw.Close()
	salts := map[string]string{}
	for _, who := range []string{"alice", "bob", "carol", "alice"} {
		before := p.n()
		body := `{"model":"m1","messages":[{"role":"user","content":"hi"}],"cache_salt":"client-chosen"}`
		if status, _, out := send(t, "POST", gw.URL+"/v1/chat/completions", bearer(tenantKeys[who]), body); status != 200 {
			t.Fatalf("%s: %d %s", who, status, out)
		}
		sent := p.since(before)[0].body
		var got struct {
			CacheSalt string `json:"cache_salt"`
		}
		if err := jsonUnmarshal(sent, &got); err != nil {
			t.Fatal(err)
		}
		if who == "carol" {
			if sent != body {
				t.Errorf("carol's request was changed: %s", sent)
			}
			continue
		}
		if got.CacheSalt == "" || got.CacheSalt == "client-chosen" || strings.Contains(got.CacheSalt, who) || strings.Contains(sent, tenantKeys[who]) {
			t.Errorf("%s: cache_salt %q", who, got.CacheSalt)
		}
		if prev, ok := salts[who]; ok && prev != got.CacheSalt {
			t.Errorf("%s's salt changed between requests: %s, %s", who, prev, got.CacheSalt)
		}
		salts[who] = got.CacheSalt
	}
	if salts["alice"] == salts["bob"] {
		t.Error("alice and bob share a cache salt")
	}

	// A backend that cannot salt its cache never gets an isolated caller's prompt.
	plain := newPlanter(t)
	pbe, _ := openaicompat.New(openaicompat.Options{Name: "plain", BaseURL: plain.URL + "/v1"})
	gw2 := httptest.NewServer(gateway.New(gateway.Options{
		Upstreams: []gateway.Upstream{{Name: "plain", Models: []string{"*"}, Backend: pbe}},
		Keys:      ring,
	}))
	defer gw2.Close()
	status, _, out := send(t, "POST", gw2.URL+"/v1/chat/completions", bearer(aliceKey), hello)
	if _, code, _ := envelopeOf(t, out); status != 403 || code != "cache_isolation_unavailable" || plain.n() != 0 {
		t.Errorf("isolated key on a backend without cache_salt: %d %s, upstream calls %d", status, out, plain.n())
	}
}
