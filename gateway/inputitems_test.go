package gateway_test

import (
	"encoding/json"
	"strings"
	"testing"
)

// itemPage is one page of GET /v1/responses/{id}/input_items.
type itemPage struct {
	Object  string            `json:"object"`
	Data    []json.RawMessage `json:"data"`
	FirstID *string           `json:"first_id"`
	LastID  *string           `json:"last_id"`
	HasMore bool              `json:"has_more"`
}

// GET /v1/responses/{id}/input_items lists a stored response's input items as OpenAI
// does: newest first by default, paged by limit and after, each with an id (its own or
// one the gateway gives, the same on every read), messages with their status and
// content parts, references resolved; the key's own responses only.
func TestDoors_ResponsesInputItems(t *testing.T) {
	sc := &scripted{replies: []string{textReply("First.", 10, 0), textReply("Second.", 10, 0)}}
	gw := doorsWith(t, sc, nil)
	status, _, out := call(t, gw, "POST", "/v1/responses", aliceKey, `{"model":"m1","input":"hello"}`)
	if status != 200 {
		t.Fatalf("first: %d %s", status, out)
	}
	first := idOf(t, out)
	msg := outputIDs(t, out)["message"]
	input := `[{"role":"user","content":"hello"},{"type":"item_reference","id":"` + msg + `"},` +
		`{"type":"message","role":"user","content":[{"type":"input_text","text":"and"}],"id":"msg_mine"},{"role":"developer","content":"be brief"}]`
	status, _, out = call(t, gw, "POST", "/v1/responses", aliceKey, `{"model":"m1","input":`+input+`}`)
	if status != 200 {
		t.Fatalf("second: %d %s", status, out)
	}
	second := idOf(t, out)

	page := func(id, query string) itemPage {
		t.Helper()
		status, _, out := call(t, gw, "GET", "/v1/responses/"+id+"/input_items"+query, aliceKey, "")
		var p itemPage
		if status != 200 || json.Unmarshal([]byte(out), &p) != nil || p.Object != "list" {
			t.Fatalf("GET %s%s: %d %s", id, query, status, out)
		}
		return p
	}
	type item struct {
		ID, Type, Role, Status string
		Content                []struct{ Type, Text string }
	}
	read := func(raw json.RawMessage) item {
		var it item
		if err := json.Unmarshal(raw, &it); err != nil {
			t.Fatalf("%v: %s", err, raw)
		}
		return it
	}

	// The first response's one item: the string input as a user message.
	p := page(first, "")
	if len(p.Data) != 1 || p.HasMore {
		t.Fatalf("first's items: %+v", p)
	}
	if it := read(p.Data[0]); it.Type != "message" || it.Role != "user" || it.Status != "completed" || !strings.HasPrefix(it.ID, "msg_") ||
		len(it.Content) != 1 || it.Content[0].Type != "input_text" || it.Content[0].Text != "hello" || *p.FirstID != it.ID || *p.LastID != it.ID {
		t.Errorf("first's item %s (%+v)", p.Data[0], p)
	}

	// The second's four, newest first, then ascending in pages of two.
	all := page(second, "")
	if len(all.Data) != 4 || all.HasMore {
		t.Fatalf("second's items: %+v", all)
	}
	var desc []item
	for _, raw := range all.Data {
		desc = append(desc, read(raw))
	}
	if desc[0].Role != "developer" || desc[1].ID != "msg_mine" || desc[2].ID != msg || desc[2].Role != "assistant" ||
		desc[2].Content[0].Type != "output_text" || desc[2].Content[0].Text != "First." || desc[3].Content[0].Text != "hello" {
		t.Errorf("newest first: %+v", desc)
	}
	p1 := page(second, "?order=asc&limit=2")
	p2 := page(second, "?order=asc&limit=2&after="+*p1.LastID)
	if len(p1.Data) != 2 || !p1.HasMore || len(p2.Data) != 2 || p2.HasMore || read(p1.Data[0]).ID != desc[3].ID || read(p2.Data[1]).ID != desc[0].ID {
		t.Errorf("ascending pages: %+v then %+v", p1, p2)
	}
	if again := page(second, ""); string(again.Data[0]) != string(all.Data[0]) {
		t.Errorf("ids differ between reads: %s then %s", all.Data[0], again.Data[0])
	}
	if p := page(second, "?after="+desc[3].ID); len(p.Data) != 0 || p.FirstID != nil || p.HasMore {
		t.Errorf("after the last: %+v", p)
	}

	// Refusals.
	for _, c := range []struct {
		key, path string
		status    int
		want      string
	}{
		{bobKey, "/v1/responses/" + second + "/input_items", 404, `"code":"response_not_found"`},
		{aliceKey, "/v1/responses/resp_000000000000000000000000/input_items", 404, `"code":"response_not_found"`},
		{aliceKey, "/v1/responses/" + second + "/input_items?limit=0", 400, `"param":"limit"`},
		{aliceKey, "/v1/responses/" + second + "/input_items?limit=101", 400, `"param":"limit"`},
		{aliceKey, "/v1/responses/" + second + "/input_items?order=sideways", 400, `"param":"order"`},
		{aliceKey, "/v1/responses/" + second + "/input_items?after=msg_none", 400, `"param":"after"`},
	} {
		status, _, out := call(t, gw, "GET", c.path, c.key, "")
		if status != c.status || !strings.Contains(out, c.want) {
			t.Errorf("GET %s: %d %s", c.path, status, out)
		}
	}
	if status, _, out := call(t, gw, "DELETE", "/v1/responses/"+second+"/input_items", aliceKey, ""); status != 405 {
		t.Errorf("DELETE input_items: %d %s", status, out)
	}
}
