package gateway_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// TestChat_CustomToolsMappedBothWays: a Chat Completions custom tool (a free string,
// here held to a lark grammar) reached the engine as an unknown tool type, its grammar
// unenforced, and a call came back as a function call. Now the engine gets a function
// taking {"input"} whose input carries the grammar under x-grammar (which the engines'
// grammars enforce), tool_choice and the history's custom calls mapped alike; the
// answer's call goes back as {"type":"custom","custom":{"name","input"}}, whole and
// streamed; a grammar outside the subset is a 400 naming it.
func TestChat_CustomToolsMappedBothWays(t *testing.T) {
	const grammar = `start: \"add \" NUMBER \" \" NUMBER\n%import common.NUMBER`
	tools := `[{"type":"function","function":{"name":"now","parameters":{"type":"object"}}},` +
		`{"type":"custom","custom":{"name":"calc","description":"Adds two numbers.","format":{"type":"grammar","grammar":{"syntax":"lark","definition":"` + grammar + `"}}}}]`
	history := `[{"role":"user","content":"2+2?"},` +
		`{"role":"assistant","content":null,"tool_calls":[{"id":"c0","type":"custom","custom":{"name":"calc","input":"add 2 2"}}]},` +
		`{"role":"tool","tool_call_id":"c0","content":"4"},{"role":"user","content":"and 3+4?"}]`
	whole := `{"id":"r","object":"chat.completion","created":1,"model":"m1","choices":[{"index":0,"message":{"role":"assistant","content":null,` +
		`"tool_calls":[{"id":"c1","type":"function","function":{"name":"calc","arguments":"{\"input\":\"add 3 4\"}"}}]},"finish_reason":"tool_calls"}]}`
	streamed := []string{
		`{"id":"r","object":"chat.completion.chunk","created":1,"model":"m1","choices":[{"index":0,"delta":{"role":"assistant","tool_calls":[{"index":0,"id":"c1","type":"function","function":{"name":"calc","arguments":""}}]},"finish_reason":null}]}`,
		`{"id":"r","object":"chat.completion.chunk","created":1,"model":"m1","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"input\":\"add 3 4\"}"}}]},"finish_reason":null}]}`,
		`{"id":"r","object":"chat.completion.chunk","created":1,"model":"m1","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`,
	}
	for _, stream := range []bool{false, true} {
		reply := replyJSON(200, whole)
		if stream {
			reply = replySSE(streamed, true)
		}
		up := newUpstream(t, reply)
		gw := gatewayFor(t, up)
		body := `{"model":"m1","stream":` + map[bool]string{false: "false", true: "true"}[stream] + `,"messages":` + history + `,"tools":` + tools +
			`,"tool_choice":{"type":"custom","custom":{"name":"calc"}}}`
		status, _, out := send(t, "POST", gw.URL+"/v1/chat/completions", map[string]string{"Content-Type": "application/json"}, body)
		if status != 200 {
			t.Fatalf("stream %v: %d %s", stream, status, out)
		}

		// What the engine got.
		var sent struct {
			Tools      []json.RawMessage `json:"tools"`
			ToolChoice json.RawMessage   `json:"tool_choice"`
			Messages   []json.RawMessage `json:"messages"`
		}
		if err := json.Unmarshal(up.lastBody(), &sent); err != nil {
			t.Fatal(err)
		}
		wantTool := `{"type":"function","function":{"name":"calc","description":"Adds two numbers.","parameters":{"type":"object","properties":{"input":{"type":"string","x-grammar":{"type":"grammar","syntax":"lark","definition":"start: \"add \" NUMBER \" \" NUMBER\n%import common.NUMBER"}}},"required":["input"],"additionalProperties":false}}}`
		if len(sent.Tools) != 2 || string(sent.Tools[1]) != wantTool || !strings.Contains(string(sent.Tools[0]), `"name":"now"`) {
			t.Errorf("stream %v: tools sent %s\nwant the function first, then %s", stream, sent.Tools, wantTool)
		}
		if string(sent.ToolChoice) != `{"type":"function","function":{"name":"calc"}}` {
			t.Errorf("stream %v: tool_choice sent %s", stream, sent.ToolChoice)
		}
		if len(sent.Messages) != 4 || !strings.Contains(string(sent.Messages[1]), `{"id":"c0","type":"function","function":{"name":"calc","arguments":"{\"input\":\"add 2 2\"}"}}`) {
			t.Errorf("stream %v: history sent %s", stream, sent.Messages)
		}

		// What the client got.
		wantCall := `{"index":0,"id":"c1","type":"custom","custom":{"name":"calc","input":"add 3 4"}}`
		if !stream {
			var r struct {
				Choices []struct {
					Message struct {
						ToolCalls []json.RawMessage `json:"tool_calls"`
					} `json:"message"`
				} `json:"choices"`
			}
			if err := json.Unmarshal(out, &r); err != nil || len(r.Choices) != 1 || len(r.Choices[0].Message.ToolCalls) != 1 ||
				string(r.Choices[0].Message.ToolCalls[0]) != `{"id":"c1","type":"custom","custom":{"name":"calc","input":"add 3 4"}}` {
				t.Errorf("whole answer %s", out)
			}
			continue
		}
		if !strings.Contains(string(out), `"tool_calls":[`+wantCall+`]`) || strings.Contains(string(out), `"type":"function"`) {
			t.Errorf("streamed answer %s\nwant a delta with %s and no function call", out, wantCall)
		}
	}

	// The grammar reaches the engine in the client's own bytes: an escape stays an escape.
	{
		up := newUpstream(t, replyJSON(200, whole))
		gw := gatewayFor(t, up)
		def := `"start: \"\u003c\" NUMBER\n%import common.NUMBER"`
		status, _, out := send(t, "POST", gw.URL+"/v1/chat/completions", map[string]string{"Content-Type": "application/json"},
			`{"model":"m1","messages":[{"role":"user","content":"hi"}],"tools":[{"type":"custom","custom":{"name":"calc","format":{"type":"grammar","grammar":{"syntax":"lark","definition":`+def+`}}}}]}`)
		if status != 200 || !strings.Contains(string(up.lastBody()), `"x-grammar":{"type":"grammar","syntax":"lark","definition":`+def+`}`) {
			t.Errorf("%d %s: the engine got %s, want the definition as sent, %s", status, out, up.lastBody(), def)
		}
	}

	// A grammar outside the subset, and a custom tool without a name.
	up := newUpstream(t, replyJSON(200, whole))
	gw := gatewayFor(t, up)
	for _, c := range []struct{ tools, param string }{
		{`[{"type":"custom","custom":{"name":"c","format":{"type":"grammar","grammar":{"syntax":"lark","definition":"start: WS\n%ignore WS\n%import common.WS"}}}}]`, "tools[0].custom.format.grammar.definition"},
		{`[{"type":"custom","custom":{"description":"x"}}]`, "tools[0].custom.name"},
	} {
		status, _, out := send(t, "POST", gw.URL+"/v1/chat/completions", map[string]string{"Content-Type": "application/json"},
			`{"model":"m1","messages":[{"role":"user","content":"hi"}],"tools":`+c.tools+`}`)
		if status != http.StatusBadRequest || !strings.Contains(string(out), `"param":"`+c.param+`"`) {
			t.Errorf("%s: %d %s, want a 400 naming %s", c.tools, status, out, c.param)
		}
	}
	if len(up.bodies) != 0 {
		t.Errorf("a refused request reached the engine")
	}
}
