package gateway_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
)

// outputIDs are the ids of a response object's output items, by type.
func outputIDs(t *testing.T, body string) map[string]string {
	t.Helper()
	var r struct {
		Output []struct {
			ID   string `json:"id"`
			Type string `json:"type"`
		} `json:"output"`
	}
	if err := json.Unmarshal([]byte(body), &r); err != nil {
		t.Fatalf("%v in %s", err, body)
	}
	ids := map[string]string{}
	for _, it := range r.Output {
		ids[it.Type] = it.ID
	}
	return ids
}

// An item_reference (what the Vercel AI SDK sends for its earlier output when store is
// true) is the caller's stored item, sent on as if whole: a call and a message of two
// responses reach the engine in their places. Another key's ids are as unknown as ids
// never made: the same 400, naming the id, and nothing reaches the engine; so is an
// item of a response not stored. On a socket the last response's items resolve,
// stored or not.
func TestDoors_ItemReferences(t *testing.T) {
	sc := &scripted{replies: []string{
		callReply("call_1", "weather", `{"city":"Oslo"}`),
		textReply("It is sunny in Oslo.", 10, 0),
		textReply("You are welcome.", 30, 0),
		textReply("Not stored.", 10, 0),
		textReply("On the socket.", 10, 0),
		textReply("Referenced on the socket.", 10, 0),
	}}
	gw := doorsWith(t, sc, nil)
	tools := `"tools":[{"type":"function","name":"weather","parameters":{"type":"object","properties":{"city":{"type":"string"}}}}]`
	status, _, body := call(t, gw, "POST", "/v1/responses", aliceKey, `{"model":"m1","input":"weather in Oslo?",`+tools+`}`)
	if status != 200 {
		t.Fatalf("turn 1: %d %s", status, body)
	}
	fc := outputIDs(t, body)["function_call"]
	status, _, body = call(t, gw, "POST", "/v1/responses", aliceKey, `{"model":"m1",`+tools+`,"input":[{"role":"user","content":"weather in Oslo?"},`+
		`{"type":"item_reference","id":"`+fc+`"},{"type":"function_call_output","call_id":"call_1","output":"sunny"}]}`)
	if status != 200 {
		t.Fatalf("turn 2: %d %s", status, body)
	}
	msg := outputIDs(t, body)["message"]
	if fc == "" || msg == "" {
		t.Fatalf("items %q %q", fc, msg)
	}
	// Turn 3 references both, the type left out of one as the openai SDKs do.
	turn3 := `{"model":"m1",` + tools + `,"input":[{"role":"user","content":"weather in Oslo?"},{"type":"item_reference","id":"` + fc + `"},` +
		`{"type":"function_call_output","call_id":"call_1","output":"sunny"},{"id":"` + msg + `"},{"role":"user","content":"thanks"}]}`
	status, _, body = call(t, gw, "POST", "/v1/responses", aliceKey, turn3)
	if status != 200 {
		t.Fatalf("turn 3: %d %s", status, body)
	}
	var msgs []map[string]any
	if err := json.Unmarshal(sc.bodies[2]["messages"], &msgs); err != nil || len(msgs) != 5 {
		t.Fatalf("turn 3's messages: %s", sc.bodies[2]["messages"])
	}
	calls, _ := msgs[1]["tool_calls"].([]any)
	if msgs[1]["role"] != "assistant" || len(calls) != 1 || !strings.Contains(string(sc.bodies[2]["messages"]), `"arguments":"{\"city\":\"Oslo\"}"`) ||
		msgs[2]["role"] != "tool" || msgs[3]["role"] != "assistant" || msgs[3]["content"] != "It is sunny in Oslo." || msgs[4]["content"] != "thanks" {
		t.Errorf("turn 3's messages: %s", sc.bodies[2]["messages"])
	}
	status, _, out := call(t, gw, "POST", "/v1/responses/input_tokens", aliceKey, turn3)
	if status != 200 || !strings.Contains(out, `"input_tokens":`) {
		t.Errorf("input_tokens with references: %d %s", status, out)
	}

	// Bob, an id never made, and an item of a response alice did not store: one answer.
	status, _, body = call(t, gw, "POST", "/v1/responses", aliceKey, `{"model":"m1","input":"hi","store":false}`)
	if status != 200 {
		t.Fatalf("unstored: %d %s", status, body)
	}
	unstored := outputIDs(t, body)["message"]
	n := len(sc.bodies)
	never := "msg_" + strings.Repeat("0", 48)
	var answers []string
	for _, probe := range []struct{ key, id string }{{bobKey, msg}, {bobKey, fc}, {aliceKey, never}, {aliceKey, unstored}, {aliceKey, "msg_1"}} {
		status, _, out := call(t, gw, "POST", "/v1/responses", probe.key, `{"model":"m1","input":[{"role":"user","content":"go on"},{"type":"item_reference","id":"`+probe.id+`"}]}`)
		if status != 400 || !strings.Contains(out, `"code":"item_not_found"`) || !strings.Contains(out, `"param":"input[1].id"`) ||
			!strings.Contains(out, "'"+probe.id+"'") || strings.Contains(out, "sunny") {
			t.Errorf("reference %s: %d %s", probe.id, status, out)
		}
		answers = append(answers, strings.ReplaceAll(out, probe.id, "ID"))
	}
	for _, a := range answers[1:] {
		if a != answers[0] {
			t.Errorf("answers differ:\n%s\n%s", answers[0], a)
		}
	}
	if len(sc.bodies) != n {
		t.Errorf("%d refused requests reached the engine", len(sc.bodies)-n)
	}

	// The socket's last response, stored or not.
	url := "ws" + strings.TrimPrefix(gw.URL, "http") + "/v1/responses"
	conn, _, err := websocket.DefaultDialer.Dial(url, http.Header{"Authorization": {"Bearer " + aliceKey}})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	done := func() string {
		t.Helper()
		for {
			_ = conn.SetReadDeadline(time.Now().Add(30 * time.Second))
			_, m, err := conn.ReadMessage()
			if err != nil {
				t.Fatal(err)
			}
			var ev struct {
				Type     string          `json:"type"`
				Response json.RawMessage `json:"response"`
			}
			_ = json.Unmarshal(m, &ev)
			switch ev.Type {
			case "response.completed":
				return string(ev.Response)
			case "error", "response.failed":
				t.Fatalf("socket: %s", m)
			}
		}
	}
	_ = conn.WriteMessage(websocket.TextMessage, []byte(`{"type":"response.create","model":"m1","store":false,"input":"hello"}`))
	sockMsg := outputIDs(t, done())["message"]
	_ = conn.WriteMessage(websocket.TextMessage, []byte(`{"type":"response.create","model":"m1","store":false,"input":[{"role":"user","content":"hello"},`+
		`{"type":"item_reference","id":"`+sockMsg+`"},{"role":"user","content":"again"}]}`))
	done()
	if last := string(sc.bodies[len(sc.bodies)-1]["messages"]); !strings.Contains(last, `"content":"On the socket."`) {
		t.Errorf("the socket's reference: %s", last)
	}
}
