package responses

import (
	"encoding/json"
	"sort"
	"testing"

	"github.com/maskgate/maskgate/backends/oai"
	"github.com/maskgate/maskgate/gateway/door"
)

var fuzzSeeds = []string{
	`{"model":"m","input":"hi"}`,
	`{"model":"m","instructions":"s","input":[{"role":"user","content":[{"type":"input_text","text":"a"},{"type":"input_image","image_url":"u"}]}]}`,
	writerRequest,
	`{"model":"m","stream":true,"input":[{"type":"function_call","call_id":"c","name":"f","arguments":"{}"},{"type":"function_call_output","call_id":"c","output":[{"type":"input_text","text":"x"}]}]}`,
	`{"model":"m","input":[{"type":"reasoning","summary":[],"content":[{"type":"reasoning_text","text":"r"}]},{"type":"custom_tool_call","call_id":"c","name":"p","input":"i"},{"type":"custom_tool_call_output","call_id":"c","output":"o"}]}`,
	`{"model":"m","tools":[{"type":"tool_search","execution":"client"}],"input":[{"type":"tool_search_call","call_id":"t","arguments":{"q":1}},{"type":"tool_search_output","call_id":"t","tools":[{"type":"namespace","name":"n","tools":[{"type":"custom","name":"c","format":{"type":"text"}}]}]}]}`,
	`{"model":"m","tools":[{"type":"function","name":"f","parameters":{"type":"object"}},{"type":"web_search"}],"tool_choice":{"type":"allowed_tools","mode":"auto","tools":[{"type":"function","name":"f"},{"type":"web_search"}]}}`,
	`{"model":"m","text":{"format":{"type":"json_schema","name":"x","schema":{"type":"object"}}},"reasoning":{"effort":"low"},"max_output_tokens":9,"temperature":0,"metadata":{}}`,
	`{"model":"m","input":[{"type":"web_search_call","id":"w"},{"type":"item_reference","id":"i"}]}`,
	`{"model":"m","input":[{"type":"additional_tools","tools":[{"type":"function","name":"late"}]}],"tool_choice":{"type":"function","name":"late"}}`,
	`{"model":"m","input":[{"role":"user","content":"q"},{"id":"j"},{"type":"function_call_output","call_id":"c","output":"o"},{"type":"item_reference","id":"x"}]}`,
}

// fuzzReferences resolves the fuzz bodies' item_references: "i" a message, "j" a call.
func fuzzReferences(id string) (json.RawMessage, *door.Error) {
	switch id {
	case "i":
		return json.RawMessage(`{"id":"i","type":"message","status":"completed","role":"assistant","content":[{"type":"output_text","annotations":[],"text":"a"}]}`), nil
	case "j":
		return json.RawMessage(`{"id":"j","type":"function_call","status":"completed","call_id":"c","name":"f","arguments":"{}"}`), nil
	}
	return nil, nil
}

// FuzzDecode: Decode never panics; what it accepts makes a valid chat body, and a
// Writer answering it writes valid JSON whose output decodes again as input.
func FuzzDecode(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add([]byte(s), false)
	}
	f.Fuzz(func(t *testing.T, body []byte, refuse bool) {
		opt := Options{Reference: fuzzReferences}
		if refuse {
			opt.Hosted = "refuse"
		}
		r, derr := Decode(body, opt)
		if derr != nil {
			if derr.Status != 400 || derr.Type != "invalid_request_error" || derr.Message == "" {
				t.Fatalf("error %+v", *derr)
			}
			return
		}
		for _, history := range [][]json.RawMessage{nil, {json.RawMessage(`{"role":"user","content":"h"}`)}} {
			chat := r.ChatBody(history)
			if !json.Valid(chat) {
				t.Fatalf("chat body is not JSON: %s", chat)
			}
			if len(history)+len(r.Messages) > 0 {
				env, err := oai.ParseEnvelope(chat)
				if err != nil {
					t.Fatalf("chat body %s: %v", chat, err)
				}
				if env.Tools != nil {
					if _, err := oai.ToolSchemas(env.Tools); err != nil {
						t.Fatalf("tools %s: %v", env.Tools, err)
					}
				}
			}
		}
		for _, m := range r.Messages {
			if !json.Valid(m) {
				t.Fatalf("message %s", m)
			}
		}

		// Answer with text, reasoning and a call of every declared tool.
		w := NewWriter(nil, false, "resp_f", r)
		_ = w.Begin(door.Head{Model: r.Model, Created: 1})
		_ = w.Reasoning("r\u2028")
		_ = w.Text("t\x00<")
		names := make([]string, 0, len(r.Names))
		for n := range r.Names {
			names = append(names, n)
		}
		sort.Strings(names)
		for i, n := range names {
			_ = w.ToolCall(oai.ToolCall{ID: "c" + string(rune('a'+i%26)), Function: oai.FunctionCall{Name: n, Arguments: `{"input":"x"}`}})
		}
		_ = w.End("stop", &oai.Usage{PromptTokens: 1})
		if !json.Valid(w.Body()) {
			t.Fatalf("body is not JSON: %s", w.Body())
		}
		for _, m := range w.Messages() {
			if !json.Valid(m) {
				t.Fatalf("history message %s", m)
			}
		}
		again, derr := Decode([]byte(`{"model":"m","input":`+string(rawArray(w.Output()))+`}`), Options{})
		if derr != nil {
			t.Fatalf("the output does not decode as input: %+v\n%s", *derr, rawArray(w.Output()))
		}
		if joinMsgs(again.InputMessages) != joinMsgs(w.Messages()) {
			t.Fatalf("output as input:\n%s\nMessages:\n%s", joinMsgs(again.InputMessages), joinMsgs(w.Messages()))
		}
	})
}

func FuzzDecodeCompaction(f *testing.F) {
	f.Add(EncodeCompaction("a summary"))
	f.Add("mgc1.xx.00")
	f.Fuzz(func(t *testing.T, s string) {
		if sum, ok := DecodeCompaction(s); ok && EncodeCompaction(sum) != s {
			t.Fatalf("%q decodes as %q, which encodes as %q", s, sum, EncodeCompaction(sum))
		}
	})
}

// FuzzInputItem: a stored input item, listed, is still a JSON object with a string id.
func FuzzInputItem(f *testing.F) {
	for _, s := range []string{`{"role":"user","content":"hi"}`, `{"type":"message","role":"assistant","content":"a","id":"msg_1"}`,
		`{"type":"function_call_output","call_id":"c","output":"o"}`, `{"type":null,"role":"developer","content":[{"type":"input_text","text":"x"}],"status":null}`,
		`{"id":5,"type":"reasoning","summary":[]}`, `{}`} {
		f.Add([]byte(s), 3)
	}
	f.Fuzz(func(t *testing.T, item []byte, i int) {
		if _, err := oai.ParseObject(item); err != nil {
			return // the decoder keeps objects only
		}
		out := InputItem("resp_0123456789abcdef01234567", i, item)
		var v struct {
			ID string `json:"id"`
		}
		if err := json.Unmarshal(out, &v); err != nil {
			t.Fatalf("%s listed as %s: %v", item, out, err)
		}
		if ItemID(out) == "" {
			t.Fatalf("%s listed without an id: %s", item, out)
		}
	})
}
