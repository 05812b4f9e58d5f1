package responses

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/maskgate/maskgate/backends/oai"
	"github.com/maskgate/maskgate/gateway/door"
)

// A response's items name it: every output item's id, whatever its kind, gives back the
// response id, and the response object finds the item by it.
func TestItemResponse(t *testing.T) {
	const id = "resp_0123456789abcdef01234567"
	r, _ := Decode([]byte(`{"model":"m","tools":[{"type":"function","name":"f","parameters":{}}]}`), Options{})
	w := NewWriter(nil, false, id, r)
	_ = w.Reasoning("think")
	_ = w.Text("answer")
	_ = w.ToolCall(oai.ToolCall{ID: "c1", Type: "function", Function: oai.FunctionCall{Name: "f", Arguments: "{}"}})
	_ = w.End(oai.FinishToolCalls, nil)
	var body struct {
		Output []struct {
			ID   string `json:"id"`
			Type string `json:"type"`
		} `json:"output"`
	}
	if err := json.Unmarshal(w.Body(), &body); err != nil || len(body.Output) != 3 {
		t.Fatalf("body %s: %v", w.Body(), err)
	}
	for _, it := range body.Output {
		if got := ItemResponse(it.ID); got != id {
			t.Errorf("%s item %s names response %q, want %q", it.Type, it.ID, got, id)
		}
		item := OutputItem(w.Body(), it.ID)
		if !strings.Contains(string(item), `"id":"`+it.ID+`"`) || !strings.Contains(string(item), `"type":"`+it.Type+`"`) {
			t.Errorf("OutputItem(%s) = %s", it.ID, item)
		}
	}
	for _, bad := range []string{"", "msg_1", "resp_0123456789abcdef01234567", "msg_" + strings.Repeat("G", 48), "xyz_" + strings.Repeat("a", 48),
		"msg_" + strings.Repeat("a", 47)} {
		if got := ItemResponse(bad); got != "" {
			t.Errorf("ItemResponse(%q) = %q, want none", bad, got)
		}
	}
	if item := OutputItem(w.Body(), "msg_"+strings.Repeat("a", 48)); item != nil {
		t.Errorf("an id the response lacks found %s", item)
	}
}

// An item_reference becomes the item it names, as if sent whole: in the chat messages
// and in the input kept for the response. A reference the resolver does not find, one
// that resolves to another reference, and one without a resolver are 400s naming the id;
// the resolver's own error is the answer.
func TestDecodeItemReference(t *testing.T) {
	items := map[string]string{
		"msg_a": `{"id":"msg_a","type":"message","status":"completed","role":"assistant","content":[{"type":"output_text","annotations":[],"logprobs":[],"text":"It is sunny."}]}`,
		"rs_a":  `{"id":"rs_a","type":"reasoning","summary":[],"content":[{"type":"reasoning_text","text":"look outside"}]}`,
		"fc_a":  `{"id":"fc_a","type":"function_call","status":"completed","arguments":"{\"city\":\"Oslo\"}","call_id":"call_1","name":"weather"}`,
		"bad":   `{"type":"item_reference","id":"msg_a"}`,
	}
	var asked []string
	opt := Options{Reference: func(id string) (json.RawMessage, *door.Error) {
		asked = append(asked, id)
		if id == "down" {
			return nil, &door.Error{Status: 503, Type: "server_error", Code: "state_unavailable", Message: "down"}
		}
		if it, ok := items[id]; ok {
			return json.RawMessage(it), nil
		}
		return nil, nil
	}}
	body := `{"model":"m","input":[{"role":"user","content":"weather?"},{"type":"item_reference","id":"rs_a"},{"type":"item_reference","id":"fc_a"},` +
		`{"type":"function_call_output","call_id":"call_1","output":"sunny"},{"type":"item_reference","id":"msg_a"},{"role":"user","content":"thanks"}]}`
	r, e := Decode([]byte(body), opt)
	if e != nil {
		t.Fatalf("decode: %+v", *e)
	}
	want := []string{
		`{"role":"user","content":"weather?"}`,
		`{"role":"assistant","content":null,"reasoning_content":"look outside","tool_calls":[{"id":"call_1","type":"function","function":{"name":"weather","arguments":"{\"city\":\"Oslo\"}"}}]}`,
		`{"role":"tool","tool_call_id":"call_1","content":"sunny"}`,
		`{"role":"assistant","content":"It is sunny."}`,
		`{"role":"user","content":"thanks"}`,
	}
	if got := strings.Join(raws(r.InputMessages), "\n"); got != strings.Join(want, "\n") {
		t.Errorf("chat messages\n%s\nwant\n%s", got, strings.Join(want, "\n"))
	}
	if string(r.Input[1]) != items["rs_a"] || string(r.Input[2]) != items["fc_a"] || string(r.Input[4]) != items["msg_a"] {
		t.Errorf("kept input %s", raws(r.Input))
	}
	if strings.Join(asked, " ") != "rs_a fc_a msg_a" {
		t.Errorf("resolver asked for %v", asked)
	}

	// The type is optional: an item with an id alone is a reference (the openai SDKs send
	// it so).
	if r, e := Decode([]byte(`{"model":"m","input":[{"id":"msg_a"}]}`), opt); e != nil || string(r.InputMessages[0]) != want[3] {
		t.Errorf("a reference without its type: %v %s", e, raws(r.InputMessages))
	}

	for _, c := range []struct {
		name, id string
		opt      Options
		status   int
		code     string
	}{
		{"unknown", "msg_zz", opt, 400, "item_not_found"},
		{"a reference to a reference", "bad", opt, 400, "item_not_found"},
		{"no resolver", "msg_a", Options{}, 400, "item_not_found"},
		{"store down", "down", opt, 503, "state_unavailable"},
	} {
		_, e := Decode([]byte(`{"model":"m","input":[{"role":"user","content":"hi"},{"type":"item_reference","id":"`+c.id+`"}]}`), c.opt)
		if e == nil || e.Status != c.status || e.Code != c.code {
			t.Errorf("%s: error %+v, want %d %s", c.name, e, c.status, c.code)
			continue
		}
		if c.status == 400 && (e.Param != "input[1].id" || !strings.Contains(e.Message, "'"+c.id+"'")) {
			t.Errorf("%s: error %+v does not name input[1].id and the id", c.name, *e)
		}
	}
}

func raws(ms []json.RawMessage) []string {
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = string(m)
	}
	return out
}
