package gateway_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/maskgate/maskgate/backends/openaicompat"
	"github.com/maskgate/maskgate/gateway"
	"github.com/maskgate/maskgate/gateway/store"
	"github.com/maskgate/maskgate/internal/redistest"
)

// recordsGateway is a gateway with keys in front of up (an upstream serving m1) that
// keeps stored responses in rec.
func recordsGateway(t *testing.T, up *httptest.Server, rec store.Records) *httptest.Server {
	t.Helper()
	be, err := openaicompat.New(openaicompat.Options{Name: "up", BaseURL: up.URL + "/v1"})
	if err != nil {
		t.Fatal(err)
	}
	gw := gateway.New(gateway.Options{Upstreams: []gateway.Upstream{{Name: "up", Models: []string{"m1"}, Backend: be}}, Keys: testKeys()})
	gw.SetResponseRecords(rec, 0)
	srv := httptest.NewServer(gw)
	t.Cleanup(srv.Close)
	return srv
}

// redisRecords is a Redis record store on url. Its dial and read timeouts, 30 s, are
// limits no passing call reaches (a call to a local server takes milliseconds, under a
// second even under -race at a load of 18): with the server down the refused dial or
// the reset connection fails a call at once, not a timeout.
func redisRecords(t *testing.T, url string) *store.Redis {
	t.Helper()
	rec, err := store.NewRedis(store.RedisOptions{URL: url, DialTimeout: 30 * time.Second, ReadTimeout: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rec.Close() })
	return rec
}

// conversation drives a Responses conversation turn by turn, each turn continuing the
// last by previous_response_id, and checks that the upstream sees each turn's messages
// extend the previous turn's exactly: the same bytes, then the answer, then the new
// input.
type conversation struct {
	t    *testing.T
	sc   *scripted
	last string // the last response's id
	seen int    // upstream requests checked
	prev []json.RawMessage
}

func (c *conversation) reply(i int) string { return fmt.Sprintf("Answer %d.", i) }

// post runs turn i on gw over HTTP (streamed or not).
func (c *conversation) post(gw *httptest.Server, i int, stream bool) {
	c.t.Helper()
	body := fmt.Sprintf(`{"model":"m1","input":"question %d","stream":%v`, i, stream)
	if c.last != "" {
		body += `,"previous_response_id":"` + c.last + `"`
	}
	status, _, out := call(c.t, gw, "POST", "/v1/responses", aliceKey, body+"}")
	if status != 200 {
		c.t.Fatalf("turn %d: %d %s", i, status, out)
	}
	if stream {
		c.last = streamedID(c.t, out)
	} else {
		c.last = idOf(c.t, out)
	}
	c.check(i)
}

// socket runs turn i on an open socket of gw.
func (c *conversation) socket(conn *websocket.Conn, i int) {
	c.t.Helper()
	ev := fmt.Sprintf(`{"type":"response.create","model":"m1","input":"question %d","previous_response_id":%q}`, i, c.last)
	if err := conn.WriteMessage(websocket.TextMessage, []byte(ev)); err != nil {
		c.t.Fatal(err)
	}
	id, err := socketCompleted(conn)
	if err != nil {
		c.t.Fatalf("turn %d over the socket: %v", i, err)
	}
	c.last = id
	c.check(i)
}

func (c *conversation) check(i int) {
	c.t.Helper()
	c.sc.mu.Lock()
	bodies := c.sc.bodies
	c.sc.mu.Unlock()
	if len(bodies) != c.seen+1 {
		c.t.Fatalf("turn %d: the upstream got %d requests, want %d", i, len(bodies), c.seen+1)
	}
	msgs := messagesOf(c.t, bodies[c.seen]["messages"])
	c.seen++
	if len(msgs) != len(c.prev)+2 && !(i == 1 && len(msgs) == 1) {
		c.t.Fatalf("turn %d: %d messages upstream after %d", i, len(msgs), len(c.prev))
	}
	for j, m := range c.prev {
		if !bytes.Equal(msgs[j], m) {
			c.t.Fatalf("turn %d: message %d changed:\n%s\nwas\n%s", i, j, msgs[j], m)
		}
	}
	if i > 1 && !strings.Contains(string(msgs[len(c.prev)]), c.reply(i-1)) {
		c.t.Errorf("turn %d: the previous answer is not next: %s", i, msgs[len(c.prev)])
	}
	if last := string(msgs[len(msgs)-1]); !strings.Contains(last, fmt.Sprintf("question %d", i)) {
		c.t.Errorf("turn %d: the new input is not last: %s", i, last)
	}
	c.prev = msgs
}

// streamedID is the response id in an SSE stream's response.completed.
func streamedID(t *testing.T, stream string) string {
	t.Helper()
	sc := bufio.NewScanner(strings.NewReader(stream))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		if line, ok := strings.CutPrefix(sc.Text(), "data: "); ok && strings.Contains(line, `"response.completed"`) {
			var ev struct {
				Response struct {
					ID string `json:"id"`
				} `json:"response"`
			}
			if json.Unmarshal([]byte(line), &ev) == nil && ev.Response.ID != "" {
				return ev.Response.ID
			}
		}
	}
	t.Fatalf("no response.completed in %s", stream)
	return ""
}

// Two gateways behind a load balancer share one Redis: a conversation whose turns land
// on either continues as on one, over HTTP, streamed or not, and a socket; each
// gateway reads and deletes what the other stored, and no other key sees it.
func TestStoreShared_ConversationAcrossGateways(t *testing.T) {
	srv := redistest.Start(t, false)
	sc := &scripted{}
	for i := 1; i <= 8; i++ {
		sc.replies = append(sc.replies, textReply(fmt.Sprintf("Answer %d.", i), 10*i, 0))
	}
	up := httptest.NewServer(sc.handler(t))
	t.Cleanup(up.Close)
	a := recordsGateway(t, up, redisRecords(t, srv.URL))
	b := recordsGateway(t, up, redisRecords(t, srv.URL))
	c := &conversation{t: t, sc: sc}
	c.post(a, 1, false)
	c.post(b, 2, false)
	c.post(a, 3, true)
	c.post(b, 4, false)
	// A socket on a continues b's stored response; b continues the socket's.
	conn, _, err := websocket.DefaultDialer.Dial("ws"+strings.TrimPrefix(a.URL, "http")+"/v1/responses",
		http.Header{"Authorization": {"Bearer " + aliceKey}})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	c.socket(conn, 5)
	c.socket(conn, 6)
	c.post(b, 7, false)
	c.post(a, 8, true)

	last := c.last
	if status, _, out := call(t, b, "GET", "/v1/responses/"+last, aliceKey, ""); status != 200 || idOf(t, out) != last {
		t.Errorf("GET on b of a's response: %d %s", status, out)
	}
	for _, gw := range []*httptest.Server{a, b} {
		if status, _, _ := call(t, gw, "GET", "/v1/responses/"+last, bobKey, ""); status != 404 {
			t.Errorf("bob GETs alice's response: %d", status)
		}
		status, _, out := call(t, gw, "POST", "/v1/responses", bobKey, `{"model":"m1","input":"x","previous_response_id":"`+last+`"}`)
		if status != 400 || !strings.Contains(out, "previous_response_not_found") {
			t.Errorf("bob continues alice's response: %d %s", status, out)
		}
	}
	if status, _, out := call(t, b, "DELETE", "/v1/responses/"+last, aliceKey, ""); status != 200 || !strings.Contains(out, `"deleted":true`) {
		t.Errorf("DELETE on b: %d %s", status, out)
	}
	if status, _, _ := call(t, a, "GET", "/v1/responses/"+last, aliceKey, ""); status != 404 {
		t.Errorf("GET on a after DELETE on b: %d", status)
	}
}

// A gateway with a File store keeps its responses across a restart: a new process on
// the same folder continues the conversation where the old one left it.
func TestStoreShared_FileOutlivesTheGateway(t *testing.T) {
	dir := t.TempDir()
	sc := &scripted{}
	for i := 1; i <= 4; i++ {
		sc.replies = append(sc.replies, textReply(fmt.Sprintf("Answer %d.", i), 10*i, 0))
	}
	up := httptest.NewServer(sc.handler(t))
	t.Cleanup(up.Close)
	open := func() *store.File {
		f, err := store.NewFile(dir, 64<<20, nil)
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	first := open()
	a := recordsGateway(t, up, first)
	c := &conversation{t: t, sc: sc}
	c.post(a, 1, false)
	c.post(a, 2, true)
	a.Close()
	first.Close()

	second := open()
	defer second.Close()
	b := recordsGateway(t, up, second)
	c.post(b, 3, false)
	c.post(b, 4, false)
}

// While Redis is down, what needs a stored response is a 503 (state_unavailable) in the
// door's envelope, and what does not is answered; once it is back, the conversation goes
// on where it was.
func TestStoreShared_RedisDown(t *testing.T) {
	srv := redistest.Start(t, true)
	sc := &scripted{}
	for i := 1; i <= 4; i++ {
		sc.replies = append(sc.replies, textReply(fmt.Sprintf("Answer %d.", i), 10*i, 0))
	}
	up := httptest.NewServer(sc.handler(t))
	t.Cleanup(up.Close)
	gw := recordsGateway(t, up, redisRecords(t, srv.URL))
	c := &conversation{t: t, sc: sc}
	c.post(gw, 1, false)
	srv.Kill()

	start := time.Now()
	for _, q := range []struct{ method, path, body string }{
		{"POST", "/v1/responses", `{"model":"m1","input":"go on","previous_response_id":"` + c.last + `"}`},
		{"GET", "/v1/responses/" + c.last, ""},
		{"DELETE", "/v1/responses/" + c.last, ""},
	} {
		status, h, out := call(t, gw, q.method, q.path, aliceKey, q.body)
		if status != 503 || !strings.Contains(out, `"code":"state_unavailable"`) || !strings.Contains(out, `"type":"server_error"`) || h.Get("Retry-After") == "" {
			t.Errorf("%s %s with Redis down: %d %v %s", q.method, q.path, status, h, out)
		}
	}
	// A bound on a hang, not a timing: each request fails on the refused dial at once;
	// one that waited out the 30 s timeouts instead would pass it.
	if took := time.Since(start); took > 10*time.Second {
		t.Errorf("three requests with Redis down took %v", took)
	}
	// A new conversation needs nothing stored: it is answered (and not kept).
	status, _, out := call(t, gw, "POST", "/v1/responses", aliceKey, `{"model":"m1","input":"hello"}`)
	if status != 200 {
		t.Errorf("a new response with Redis down: %d %s", status, out)
	}
	var unsaved struct {
		ID string `json:"id"`
	}
	if err := json.Unmarshal([]byte(out), &unsaved); err != nil || !strings.HasPrefix(unsaved.ID, "resp_") {
		t.Fatalf("the answer's id: %q %v", unsaved.ID, err)
	}
	c.seen++ // that request reached the upstream
	srv.Restart()
	deadline := time.Now().Add(10 * time.Second)
	for {
		status, _, _ := call(t, gw, "GET", "/v1/responses/"+c.last, aliceKey, "")
		if status == 200 {
			break
		}
		if status != 503 || time.Now().After(deadline) {
			t.Fatalf("GET after Redis came back: %d", status)
		}
		time.Sleep(50 * time.Millisecond)
	}
	// The answer that went out while Redis was down was never kept (only logged): once
	// the store is back its id is unknown, as an id never made — GET 404, continuing it
	// 400 previous_response_not_found — and the client starts a new chain.
	if status, _, out := call(t, gw, "GET", "/v1/responses/"+unsaved.ID, aliceKey, ""); status != 404 {
		t.Errorf("GET of the response not saved: %d %s", status, out)
	}
	status, _, out = call(t, gw, "POST", "/v1/responses", aliceKey,
		`{"model":"m1","input":"go on","previous_response_id":"`+unsaved.ID+`"}`)
	if status != 400 || !strings.Contains(out, `"code":"previous_response_not_found"`) || !strings.Contains(out, `"param":"previous_response_id"`) {
		t.Errorf("continuing the response not saved: %d %s", status, out)
	}
	c.post(gw, 2, false) // the upstream answers "Answer 3.": "hello" had the second
}
