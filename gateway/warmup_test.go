package gateway_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/maskgate/maskgate/gateway"
	"github.com/maskgate/maskgate/tenant"
	"github.com/maskgate/maskgate/toolsearch/tokens"
)

// warmSocket is a Responses WebSocket on gw as the caller with key.
func warmSocket(t *testing.T, gw *httptest.Server, key string) *websocket.Conn {
	t.Helper()
	url := "ws" + strings.TrimPrefix(gw.URL, "http") + "/v1/responses"
	conn, _, err := websocket.DefaultDialer.Dial(url, http.Header{"Authorization": {"Bearer " + key}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

// warmEvent is what a socket answered one response.create with: the terminal event's
// type, the response's id, and an error event's code.
type warmEvent struct {
	typ, id, code, message string
	status                 int
}

// warmUp sends one response.create on conn and reads to its terminal event.
func warmUp(t *testing.T, conn *websocket.Conn, msg string) warmEvent {
	t.Helper()
	if err := conn.WriteMessage(websocket.TextMessage, []byte(msg)); err != nil {
		t.Fatal(err)
	}
	_ = conn.SetReadDeadline(time.Now().Add(30 * time.Second))
	for {
		_, b, err := conn.ReadMessage()
		if err != nil {
			t.Fatal(err)
		}
		var ev struct {
			Type     string `json:"type"`
			Status   int    `json:"status"`
			Response struct {
				ID string `json:"id"`
			} `json:"response"`
			Error struct {
				Code    string `json:"code"`
				Message string `json:"message"`
			} `json:"error"`
		}
		if err := json.Unmarshal(b, &ev); err != nil {
			t.Fatalf("%v: %.200s", err, b)
		}
		switch ev.Type {
		case "response.completed", "response.failed", "response.incomplete":
			return warmEvent{typ: ev.Type, id: ev.Response.ID}
		case "error":
			return warmEvent{typ: ev.Type, code: ev.Error.Code, message: ev.Error.Message, status: ev.Status}
		}
	}
}

// liveHeap is the heap in use after a collection.
func liveHeap() uint64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// warmUpMessage is a stored warm-up of about size bytes continuing prev ("" for none).
func warmUpMessage(model, prev string, size int) string {
	var b strings.Builder
	b.WriteString(`{"type":"response.create","generate":false,"store":true,"model":"` + model + `"`)
	if prev != "" {
		b.WriteString(`,"previous_response_id":"` + prev + `"`)
	}
	b.WriteString(`,"input":"`)
	b.WriteString(strings.Repeat("instructions ", size/13))
	b.WriteString(`"}`)
	return b.String()
}

// The attack of issue 39: warm-ups (generate: false) chained by previous_response_id,
// each ~1 MiB, on one socket. Each used to be kept whole (the socket's history and the
// store), none refused: 60 of them grew the live heap after a collection by 60 MiB (61
// measured before the fix), and 600 would have by 600. Now a chain holds at most
// doors.history_bytes (16 MiB here): past it a warm-up is refused with the socket's
// error event, and the live heap grows by less than 40 MiB over the 60.
func TestWarmUps_ChainIsBounded(t *testing.T) {
	gw := doorsWith(t, &scripted{}, func(o *gateway.Options) { o.HistoryBytes = 16 << 20 })
	conn := warmSocket(t, gw, aliceKey)
	before := liveHeap()
	prev, refused, accepted := "", 0, 0
	for i := range 60 {
		ev := warmUp(t, conn, warmUpMessage("m1", prev, 1<<20))
		switch ev.typ {
		case "response.completed":
			prev = ev.id
			accepted++
		case "error":
			if ev.code != "history_too_large" || ev.status != 400 || !strings.Contains(ev.message, "history_bytes") {
				t.Fatalf("warm-up %d refused as %+v; want 400 history_too_large naming doors.history_bytes", i, ev)
			}
			refused++
		default:
			t.Fatalf("warm-up %d: %+v", i, ev)
		}
	}
	grown := int64(liveHeap()) - int64(before)
	t.Logf("60 chained 1 MiB warm-ups: %d accepted, %d refused, live heap grew %.1f MiB", accepted, refused, float64(grown)/(1<<20))
	if refused == 0 {
		t.Errorf("no warm-up of a 60 MiB chain was refused")
	}
	if accepted < 12 || accepted > 16 {
		t.Errorf("%d warm-ups accepted; a 16 MiB bound holds about 15 of 1 MiB", accepted)
	}
	if grown > 40<<20 {
		t.Errorf("the live heap grew %d MiB; want under 40", grown>>20)
	}
	runtime.KeepAlive(conn)
}

// A warm-up goes through the guards of any request: a model outside the key's allowlist
// is refused 403 (and names no other key's models), a key over its requests per minute
// gets 429, and a backend's context window refuses a warm-up that would not fit it.
func TestWarmUps_AreGuarded(t *testing.T) {
	counter, err := tokens.New(tokens.Options{})
	if err != nil {
		t.Fatal(err)
	}
	gw := doorsWith(t, &scripted{}, func(o *gateway.Options) {
		o.Tokens = counter
		o.Keys = testKeys(func(k *tenant.Key) {
			if k.Name == "bob" {
				k.Models = []string{"m2"}
			}
			if k.Name == "carol" {
				k.Limits.RequestsPerMinute = 2
			}
		})
		o.Upstreams[0].ContextWindow = 1000
	})
	bob := warmSocket(t, gw, bobKey)
	if ev := warmUp(t, bob, warmUpMessage("m1", "", 100)); ev.typ != "error" || ev.status != 403 || ev.code != "model_not_allowed" {
		t.Errorf("bob's warm-up of m1, outside his models: %+v; want 403 model_not_allowed", ev)
	}
	carol := warmSocket(t, gw, carolKey)
	for i := range 3 {
		ev := warmUp(t, carol, warmUpMessage("m1", "", 100))
		if i < 2 && ev.typ != "response.completed" {
			t.Errorf("carol's warm-up %d within her limit: %+v", i, ev)
		}
		if i == 2 && (ev.typ != "error" || ev.status != 429) {
			t.Errorf("carol's third warm-up in a minute, over her 2: %+v; want 429", ev)
		}
	}
	alice := warmSocket(t, gw, aliceKey)
	if ev := warmUp(t, alice, warmUpMessage("m1", "", 20000)); ev.typ != "error" || ev.status != 400 || ev.code != "context_length_exceeded" {
		t.Errorf("a warm-up of ~5000 tokens for a 1000-token window: %+v; want 400 context_length_exceeded", ev)
	}
	if ev := warmUp(t, alice, warmUpMessage("m1", "", 100)); ev.typ != "response.completed" {
		t.Errorf("a small warm-up: %+v", ev)
	}
}
