package responses

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/maskgate/maskgate/gateway/door"
	"github.com/maskgate/maskgate/masking/lark"
)

const builtinRequest = `{"model":"m","input":"hi","tools":[{"type":"shell","environment":{"type":"local"}},{"type":"local_shell"},{"type":"apply_patch"}]`

// TestBuiltins_Declared: shell, local_shell and apply_patch become chat functions of
// their names (none dropped), apply_patch's diff under the V4A grammar, which
// masking/lark translates; a tool_choice of a built-in forces its function.
func TestBuiltins_Declared(t *testing.T) {
	r := mustDecode(t, builtinRequest+`,"tool_choice":{"type":"apply_patch"}}`, Options{Hosted: "refuse"})
	var tools []struct {
		Type     string
		Function struct {
			Name       string
			Parameters json.RawMessage
		}
	}
	if err := json.Unmarshal(r.Tools, &tools); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range tools {
		names = append(names, tl.Function.Name)
	}
	if strings.Join(names, ",") != "shell,local_shell,apply_patch" || len(r.Dropped) != 0 {
		t.Fatalf("tools %s, dropped %v", r.Tools, r.Dropped)
	}
	for _, n := range names {
		if r.Names[n].Kind != n {
			t.Errorf("Names[%s] = %+v", n, r.Names[n])
		}
	}
	var params struct {
		Properties struct {
			Diff struct {
				Grammar struct{ Syntax, Definition string } `json:"x-grammar"`
			}
		}
	}
	if err := json.Unmarshal(tools[2].Function.Parameters, &params); err != nil || params.Properties.Diff.Grammar.Syntax != "lark" {
		t.Fatalf("apply_patch parameters %s (%v)", tools[2].Function.Parameters, err)
	}
	g, err := lark.Parse(params.Properties.Diff.Grammar.Definition)
	if err != nil {
		t.Fatalf("the diff grammar: %v", err)
	}
	if _, _, err := g.JSONStringGBNF("d-"); err != nil {
		t.Errorf("the diff grammar does not translate to GBNF: %v", err)
	}
	if got := string(r.ToolChoice); got != `{"type":"function","function":{"name":"apply_patch"}}` {
		t.Errorf("tool_choice %s", got)
	}
	r = mustDecode(t, builtinRequest+`,"tool_choice":{"type":"allowed_tools","mode":"required","tools":[{"type":"shell"}]}}`, Options{})
	if got := string(r.ToolChoice); got != `{"type":"allowed_tools","allowed_tools":{"mode":"required","tools":[{"type":"function","function":{"name":"shell"}}]}}` {
		t.Errorf("allowed_tools %s", got)
	}
}

// TestBuiltins_History: each built-in's call item becomes the chat call of its function
// with the action or operation as arguments, and its output item a tool message.
func TestBuiltins_History(t *testing.T) {
	input := `[{"role":"user","content":"go"},
{"type":"shell_call","id":"sh_1","call_id":"c1","status":"completed","action":{"commands":["ls","pwd"],"timeout_ms":null,"max_output_length":null}},
{"type":"shell_call_output","call_id":"c1","output":[{"stdout":"a.txt\n","stderr":"","outcome":{"type":"exit","exit_code":0}},{"stdout":"","stderr":"boom","outcome":{"type":"exit","exit_code":2}},{"stdout":"","stderr":"","outcome":{"type":"timeout"}}]},
{"type":"local_shell_call","id":"lsh_1","call_id":"c2","status":"completed","action":{"type":"exec","command":["cat","a.txt"],"env":{},"working_directory":"/w"}},
{"type":"local_shell_call_output","id":"c2","output":"hello"},
{"type":"apply_patch_call","id":"apc_1","call_id":"c3","status":"completed","operation":{"type":"create_file","path":"b.txt","diff":"+hi\n"}},
{"type":"apply_patch_call_output","call_id":"c3","status":"failed","output":"exists"}]`
	r := mustDecode(t, `{"model":"m","input":`+input+`}`, Options{Hosted: "refuse"})
	want := `[{"role":"user","content":"go"},` +
		`{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"shell","arguments":"{\"commands\":[\"ls\",\"pwd\"],\"timeout_ms\":null,\"max_output_length\":null}"}}]},` +
		`{"role":"tool","tool_call_id":"c1","content":"a.txt\n\n[stderr]\nboom\n[exit code 2]\n\n[timed out]\n"},` +
		`{"role":"assistant","content":null,"tool_calls":[{"id":"c2","type":"function","function":{"name":"local_shell","arguments":"{\"command\":[\"cat\",\"a.txt\"],\"working_directory\":\"/w\"}"}}]},` +
		`{"role":"tool","tool_call_id":"c2","content":"hello"},` +
		`{"role":"assistant","content":null,"tool_calls":[{"id":"c3","type":"function","function":{"name":"apply_patch","arguments":"{\"type\":\"create_file\",\"path\":\"b.txt\",\"diff\":\"+hi\\n\"}"}}]},` +
		`{"role":"tool","tool_call_id":"c3","content":"failed: exists"}]`
	if got := joinMsgs(r.Messages); got != want {
		t.Errorf("messages\n got %s\nwant %s", got, want)
	}
	for _, c := range []struct{ item, param string }{
		{`{"type":"shell_call","call_id":"c"}`, "input[0].action"},
		{`{"type":"shell_call_output","call_id":"c","output":[1]}`, "input[0].output"},
		{`{"type":"apply_patch_call_output","call_id":"c"}`, "input[0].status"},
		{`{"type":"local_shell_call_output","output":"x"}`, "input[0].call_id"},
	} {
		_, e := Decode([]byte(`{"model":"m","input":[`+c.item+`]}`), Options{})
		if e == nil || e.Param != c.param {
			t.Errorf("%s: error %+v, want one naming %s", c.item, e, c.param)
		}
	}
}

// TestBuiltins_Calls: a call of a built-in's function is its item, whole and streamed
// (added in progress, done completed); arguments not of its shape stay a function_call.
func TestBuiltins_Calls(t *testing.T) {
	calls := []struct{ name, args, want string }{
		{"shell", `{"commands":["ls -la"],"timeout_ms":5000}`,
			`{"id":"ID","type":"shell_call","status":"completed","call_id":"c1","action":{"commands":["ls -la"],"timeout_ms":5000},"environment":null}`},
		{"local_shell", `{"command":["cat","a"]}`,
			`{"id":"ID","type":"local_shell_call","status":"completed","call_id":"c2","action":{"type":"exec","command":["cat","a"],"env":{}}}`},
		{"apply_patch", `{"type":"update_file","path":"a.go","diff":"@@ func a\n-x\n+y\n"}`,
			`{"id":"ID","type":"apply_patch_call","status":"completed","call_id":"c3","operation":{"type":"update_file","path":"a.go","diff":"@@ func a\n-x\n+y\n"}}`},
		{"apply_patch", `{"type":"delete_file","path":"a.go"}`,
			`{"id":"ID","type":"apply_patch_call","status":"completed","call_id":"c4","operation":{"type":"delete_file","path":"a.go"}}`},
		{"apply_patch", `{"type":"create_file","path":"a.go"}`,
			`{"id":"ID","type":"function_call","status":"completed","arguments":"{\"type\":\"create_file\",\"path\":\"a.go\"}","call_id":"c5","name":"apply_patch"}`},
		{"shell", `{"commands":"ls"`,
			`{"id":"ID","type":"function_call","status":"completed","arguments":"{\"commands\":\"ls\"","call_id":"c6","name":"shell"}`},
		{"shell", `{"commands":[]}`,
			`{"id":"ID","type":"shell_call","status":"completed","call_id":"c7","action":{"commands":[]},"environment":null}`},
	}
	for _, stream := range []bool{false, true} {
		rec := &recorder{}
		var ev door.Events
		if stream {
			ev = rec
		}
		w := newTestWriter(t, ev, stream, builtinRequest+`}`)
		_ = w.Begin(door.Head{Model: "m", Created: created})
		for i, c := range calls {
			if err := w.ToolCall(call("c"+string(rune('1'+i)), c.name, c.args)); err != nil {
				t.Fatal(err)
			}
		}
		_ = w.End("tool_calls", nil)
		out := w.Output()
		if len(out) != len(calls) {
			t.Fatalf("%d items: %s", len(out), rawArray(out))
		}
		for i, it := range out {
			var v struct{ ID string }
			_ = json.Unmarshal(it, &v)
			if got := strings.Replace(string(it), `"id":"`+v.ID+`"`, `"id":"ID"`, 1); got != calls[i].want {
				t.Errorf("call %d:\n got %s\nwant %s", i, got, calls[i].want)
			}
		}
		if !stream {
			continue
		}
		added := 0
		for i, name := range rec.names {
			if name == "response.output_item.added" && strings.Contains(string(rec.data[i]), `"type":"shell_call","status":"in_progress"`) {
				added++
			}
		}
		if added != 2 {
			t.Errorf("stream: %d shell_call items added in progress, want 2", added)
		}
	}
}

// FuzzBuiltinItem: whatever arguments the model wrote, a built-in's item is valid JSON
// or refused, never a panic.
func FuzzBuiltinItem(f *testing.F) {
	f.Add("shell", `{"commands":["ls"],"timeout_ms":1}`)
	f.Add("local_shell", `{"command":["a"],"working_directory":"/"}`)
	f.Add("apply_patch", `{"type":"create_file","path":"p","diff":"+x\n"}`)
	f.Add("apply_patch", `{"type":"delete_file","path":"p"}`)
	f.Fuzz(func(t *testing.T, kind, args string) {
		if it, ok := builtinItem(kind, "id", "call", "completed", args); ok && !json.Valid(it) {
			t.Fatalf("builtinItem(%q, %q) = %s, not JSON", kind, args, it)
		}
	})
}

// TestBuiltins_ItemsNameTheirResponse: a built-in's call item id names its response, so
// that a client's item_reference to it (the AI SDK's, with store: true) is found.
func TestBuiltins_ItemsNameTheirResponse(t *testing.T) {
	const id = "resp_0123456789abcdef01234567"
	w := NewWriter(nil, false, id, mustDecode(t, builtinRequest+`}`, Options{}))
	_ = w.ToolCall(call("c1", "shell", `{"commands":["ls"]}`))
	_ = w.ToolCall(call("c2", "local_shell", `{"command":["ls"]}`))
	_ = w.ToolCall(call("c3", "apply_patch", `{"type":"delete_file","path":"a"}`))
	_ = w.End("tool_calls", nil)
	var body struct {
		Output []struct{ ID, Type string } `json:"output"`
	}
	if err := json.Unmarshal(w.Body(), &body); err != nil || len(body.Output) != 3 {
		t.Fatalf("body %s: %v", w.Body(), err)
	}
	for i, want := range []string{"shell_call", "local_shell_call", "apply_patch_call"} {
		it := body.Output[i]
		if it.Type != want || ItemResponse(it.ID) != id || OutputItem(w.Body(), it.ID) == nil {
			t.Errorf("item %d: %s %s names response %q", i, it.Type, it.ID, ItemResponse(it.ID))
		}
	}
}
