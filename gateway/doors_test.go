package gateway_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/maskgate/maskgate/gateway"
	"github.com/maskgate/maskgate/toolsearch/state"
)

// doorsWith is a gateway with keys in front of a scripted upstream; edit sets options.
func doorsWith(t *testing.T, sc *scripted, edit func(*gateway.Options)) *httptest.Server {
	return scriptedGateway(t, sc, func(o *gateway.Options) {
		o.Keys = testKeys()
		if edit != nil {
			edit(o)
		}
	})
}

// call sends method path with body (none when ""), as the caller with key.
func call(t *testing.T, srv *httptest.Server, method, path, key, body string, header ...string) (int, http.Header, string) {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, _ := http.NewRequest(method, srv.URL+path, rd)
	req.Header.Set("Content-Type", "application/json")
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, string(b)
}

func idOf(t *testing.T, body string) string {
	t.Helper()
	var r struct {
		ID string `json:"id"`
	}
	if err := json.Unmarshal([]byte(body), &r); err != nil || r.ID == "" {
		t.Fatalf("no id in %s", body)
	}
	return r.ID
}

// A stored response is its caller's: another key can neither read, delete nor continue
// it, over HTTP or a socket, and learns nothing from trying (404 and 400 as for an id
// never made).
func TestDoors_StoredResponsesAreTheCallersOwn(t *testing.T) {
	sc := &scripted{replies: []string{textReply("Alice's secret plan.", 10, 0), textReply("More.", 20, 10)}}
	gw := doorsWith(t, sc, nil)
	status, _, body := call(t, gw, "POST", "/v1/responses", aliceKey, `{"model":"m1","input":"my plan"}`)
	if status != 200 {
		t.Fatalf("alice: %d %s", status, body)
	}
	id := idOf(t, body)
	never := "resp_000000000000000000000000"
	for _, probe := range []string{id, never} {
		status, _, out := call(t, gw, "GET", "/v1/responses/"+probe, bobKey, "")
		if status != 404 || !strings.Contains(out, `"code":"response_not_found"`) || strings.Contains(out, "secret") {
			t.Errorf("bob GET %s: %d %s", probe, status, out)
		}
		status, _, out = call(t, gw, "DELETE", "/v1/responses/"+probe, bobKey, "")
		if status != 404 {
			t.Errorf("bob DELETE %s: %d %s", probe, status, out)
		}
		status, _, out = call(t, gw, "POST", "/v1/responses", bobKey, `{"model":"m1","input":"go on","previous_response_id":"`+probe+`"}`)
		if status != 400 || !strings.Contains(out, `"code":"previous_response_not_found"`) {
			t.Errorf("bob continuing %s: %d %s", probe, status, out)
		}
	}
	// Over a socket too, after authenticating as bob.
	url := "ws" + strings.TrimPrefix(gw.URL, "http") + "/v1/responses"
	if _, resp, err := websocket.DefaultDialer.Dial(url, nil); err == nil || resp == nil || resp.StatusCode != 401 {
		t.Errorf("upgrade without a key: %v, %v", resp, err)
	}
	conn, _, err := websocket.DefaultDialer.Dial(url, http.Header{"Authorization": {"Bearer " + bobKey}})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.WriteMessage(websocket.TextMessage, []byte(`{"type":"response.create","model":"m1","input":"go on","previous_response_id":"`+id+`"}`))
	_ = conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	_, msg, err := conn.ReadMessage()
	if err != nil || !strings.Contains(string(msg), `"type":"error"`) || !strings.Contains(string(msg), "previous_response_not_found") {
		t.Errorf("bob's socket continuing alice's response: %s %v", msg, err)
	}
	if len(sc.bodies) != 1 {
		t.Errorf("the upstream got %d requests; bob's must not reach it", len(sc.bodies))
	}
	// Alice still has it, reads it, continues it, deletes it.
	if status, _, out := call(t, gw, "GET", "/v1/responses/"+id, aliceKey, ""); status != 200 || idOf(t, out) != id {
		t.Errorf("alice GET: %d %s", status, out)
	}
	if status, _, out := call(t, gw, "POST", "/v1/responses", aliceKey, `{"model":"m1","input":"go on","previous_response_id":"`+id+`"}`); status != 200 {
		t.Errorf("alice continuing: %d %s", status, out)
	}
	if !strings.Contains(string(sc.bodies[1]["messages"]), "Alice's secret plan.") {
		t.Errorf("the continuation lost the history: %s", sc.bodies[1]["messages"])
	}
	if status, _, out := call(t, gw, "DELETE", "/v1/responses/"+id, aliceKey, ""); status != 200 || !strings.Contains(out, `"deleted":true`) {
		t.Errorf("alice DELETE: %d %s", status, out)
	}
	if status, _, _ := call(t, gw, "GET", "/v1/responses/"+id, aliceKey, ""); status != 404 {
		t.Errorf("alice GET after delete: %d", status)
	}
}

// Stored responses stay within store_bytes: the oldest go first.
func TestDoors_StoreIsBounded(t *testing.T) {
	var replies []string
	for range 40 {
		replies = append(replies, textReply(strings.Repeat("x", 2000), 10, 0))
	}
	sc := &scripted{replies: replies}
	gw := doorsWith(t, sc, func(o *gateway.Options) { o.StoreBytes = 32 << 10 })
	var ids []string
	for range 40 {
		status, _, body := call(t, gw, "POST", "/v1/responses", aliceKey, `{"model":"m1","input":"go"}`)
		if status != 200 {
			t.Fatalf("%d %s", status, body)
		}
		ids = append(ids, idOf(t, body))
	}
	kept := 0
	for _, id := range ids {
		if status, _, _ := call(t, gw, "GET", "/v1/responses/"+id, aliceKey, ""); status == 200 {
			kept++
		}
	}
	// Each keeps its ~2 KB answer twice (the object and the history) and its input: ~5
	// KB, so 32 KiB holds a handful, and the newest.
	if kept == 0 || kept > 10 {
		t.Errorf("%d of 40 responses kept in 32 KiB", kept)
	}
	if status, _, _ := call(t, gw, "GET", "/v1/responses/"+ids[39], aliceKey, ""); status != 200 {
		t.Errorf("the newest response was evicted")
	}
	if status, _, _ := call(t, gw, "GET", "/v1/responses/"+ids[0], aliceKey, ""); status != 404 {
		t.Errorf("the oldest response is still kept")
	}
}

// Hosted tools are dropped and named in a header, or refused, as configured; never
// silently.
func TestDoors_HostedTools(t *testing.T) {
	body := `{"model":"m1","input":"news?","tools":[{"type":"web_search"},{"type":"function","name":"f","parameters":{"type":"object"}}]}`
	sc := &scripted{replies: []string{textReply("ok", 5, 0)}}
	gw := doorsWith(t, sc, nil)
	status, h, out := call(t, gw, "POST", "/v1/responses", aliceKey, body)
	if status != 200 || h.Get(gateway.HeaderDroppedTools) != "web_search" {
		t.Errorf("drop: %d, header %q: %s", status, h.Get(gateway.HeaderDroppedTools), out)
	}
	if strings.Contains(string(sc.bodies[0]["tools"]), "web_search") {
		t.Errorf("the engine got the hosted tool: %s", sc.bodies[0]["tools"])
	}
	// The body says it too, where a client reads it: the response's (the message's)
	// "maskgate" member, whole and in the stream's first event.
	const notice = `"maskgate":{"dropped_tools":["web_search"]}`
	if !strings.HasSuffix(out, notice+"}") {
		t.Errorf("drop, Responses body: %s", out)
	}
	anthropic := `{"model":"m1","max_tokens":9,"messages":[{"role":"user","content":"x"}],"tools":[{"type":"web_search_20250305","name":"web_search"}]}`
	const anthropicNotice = `"maskgate":{"dropped_tools":["web_search_20250305"]}`
	sc = &scripted{replies: []string{textReply("ok", 5, 0), textReply("ok", 5, 0), textReply("ok", 5, 0)}}
	gw = doorsWith(t, sc, nil)
	if status, _, out := call(t, gw, "POST", "/v1/messages", "", anthropic, "x-api-key", aliceKey); status != 200 || !strings.HasSuffix(out, anthropicNotice+"}") {
		t.Errorf("drop, Messages body: %d %s", status, out)
	}
	streamed := strings.Replace(anthropic, `"max_tokens":9`, `"max_tokens":9,"stream":true`, 1)
	if status, _, out := call(t, gw, "POST", "/v1/messages", "", streamed, "x-api-key", aliceKey); status != 200 ||
		!strings.Contains(out, anthropicNotice+"}}\n\nevent: ping") {
		t.Errorf("drop, Messages stream: the notice is not in message_start: %d %s", status, out)
	}
	streamed = strings.Replace(body, `"input"`, `"stream":true,"input"`, 1)
	if status, _, out := call(t, gw, "POST", "/v1/responses", aliceKey, streamed); status != 200 ||
		!strings.HasPrefix(out, "event: response.created\n") || !strings.Contains(out[:strings.Index(out, "\n\n")], notice+"}}") {
		t.Errorf("drop, Responses stream: the notice is not in response.created: %d %s", status, out)
	}
	gw = doorsWith(t, &scripted{}, func(o *gateway.Options) { o.HostedTools = "refuse" })
	if status, _, out := call(t, gw, "POST", "/v1/responses", aliceKey, body); status != 400 || !strings.Contains(out, "web_search") {
		t.Errorf("refuse, Responses: %d %s", status, out)
	}
	status, _, out = call(t, gw, "POST", "/v1/messages", "", anthropic, "x-api-key", aliceKey)
	if status != 400 || !strings.Contains(out, `"type":"error"`) || !strings.Contains(out, `"invalid_request_error"`) {
		t.Errorf("refuse, Messages: %d %s", status, out)
	}
}

// The Messages door answers in Anthropic's envelope even before a request is read: a
// bad key, an unknown model, a wrong method.
func TestDoors_MessagesErrorsInAnthropicsEnvelope(t *testing.T) {
	gw := doorsWith(t, &scripted{}, nil)
	for _, c := range []struct {
		method, key, body string
		status            int
		typ               string
	}{
		{"POST", "sk-wrong", `{}`, 401, "authentication_error"},
		{"POST", aliceKey, `{"model":"nope","max_tokens":5,"messages":[{"role":"user","content":"x"}]}`, 404, "not_found_error"},
		{"POST", aliceKey, `{"model":"m1","messages":"x"}`, 400, "invalid_request_error"},
		{"GET", aliceKey, "", 405, "invalid_request_error"},
	} {
		status, _, out := call(t, gw, c.method, "/v1/messages?beta=true", "", c.body, "x-api-key", c.key)
		var env struct {
			Type  string `json:"type"`
			Error struct {
				Type    string `json:"type"`
				Message string `json:"message"`
			} `json:"error"`
		}
		if err := json.Unmarshal([]byte(out), &env); err != nil || status != c.status || env.Type != "error" || env.Error.Type != c.typ || env.Error.Message == "" {
			t.Errorf("%s %s: %d %s, want %d %s in Anthropic's envelope", c.method, c.body, status, out, c.status, c.typ)
		}
	}
}

// The gateway's own tool loop runs behind every door: a meta-tool call is answered
// inside the request and only the answer reaches a Responses or Messages client.
func TestDoors_ManagedToolLoopBehindEachDoor(t *testing.T) {
	for _, door := range []struct{ path, body, want, not string }{
		{"/v1/responses", `{"model":"m1","input":"book the standup"}`, `"output_text"`, "load_tool"},
		{"/v1/messages", `{"model":"m1","max_tokens":50,"messages":[{"role":"user","content":"book the standup"}]}`, `"type":"text"`, "load_tool"},
	} {
		sc := &scripted{replies: []string{callReply("c1", "load_tool", `{"toolName":"calendar_create_event"}`), textReply("Booked.", 50, 40)}}
		gw := doorsWith(t, sc, func(o *gateway.Options) {
			o.Tools, o.State, o.Keys = bigCatalog(t), state.NewMemory(state.Options{}), nil
		})
		status, h, out := call(t, gw, "POST", door.path, "", door.body, "X-Thread-Id", "t1")
		if status != 200 || !strings.Contains(out, door.want) || !strings.Contains(out, "Booked.") || strings.Contains(out, door.not) {
			t.Errorf("%s: %d %s", door.path, status, out)
		}
		if len(sc.bodies) != 2 || !strings.Contains(string(sc.bodies[1]["messages"]), "load_tool") {
			t.Errorf("%s: the loop did not run: %d upstream calls", door.path, len(sc.bodies))
		}
		if h.Get(gateway.HeaderPromptTokens) != "150" {
			t.Errorf("%s: prompt tokens header %q, want both rounds' sum", door.path, h.Get(gateway.HeaderPromptTokens))
		}
	}
}

// A Responses answer's times are the gateway's clock (Options.Now), not the machine's.
func TestDoors_ResponsesTimesAreTheGatewaysClock(t *testing.T) {
	at := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	gw := doorsWith(t, &scripted{replies: []string{textReply("ok", 5, 0)}}, func(o *gateway.Options) {
		o.Keys, o.Now = nil, func() time.Time { return at }
	})
	status, _, out := call(t, gw, "POST", "/v1/responses", "", `{"model":"m1","input":"x"}`)
	var r struct {
		CreatedAt   int64 `json:"created_at"`
		CompletedAt int64 `json:"completed_at"`
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil || status != 200 || r.CreatedAt != at.Unix() || r.CompletedAt != at.Unix() {
		t.Errorf("%d %s: want created_at and completed_at %d", status, out, at.Unix())
	}
}
