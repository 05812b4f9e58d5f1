package responses

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/maskgate/maskgate/backends/oai"
)

// joinMsgs renders chat messages as one JSON array, for comparison with expectations.
func joinMsgs(ms []json.RawMessage) string { return string(rawArray(ms)) }

func mustDecode(t *testing.T, body string, opt Options) *Request {
	t.Helper()
	r, err := Decode([]byte(body), opt)
	if err != nil {
		t.Fatalf("Decode(%s): %+v", body, *err)
	}
	return r
}

func TestDecodeStringInput(t *testing.T) {
	r := mustDecode(t, `{"model":"m","instructions":"Be brief.","input":"Hi \u00e9"}`, Options{})
	if r.Model != "m" || r.Stream || !r.Store {
		t.Errorf("model %q stream %v store %v", r.Model, r.Stream, r.Store)
	}
	if got, want := joinMsgs(r.Input), `[{"type":"message","role":"user","content":"Hi \u00e9"}]`; got != want {
		t.Errorf("Input = %s, want %s", got, want)
	}
	if got, want := joinMsgs(r.InputMessages), `[{"role":"user","content":"Hi \u00e9"}]`; got != want {
		t.Errorf("InputMessages = %s, want %s", got, want)
	}
	if got, want := joinMsgs(r.Messages), `[{"role":"system","content":"Be brief."},{"role":"user","content":"Hi \u00e9"}]`; got != want {
		t.Errorf("Messages = %s, want %s", got, want)
	}
	if string(r.Instructions) != `"Be brief."` {
		t.Errorf("Instructions = %s", r.Instructions)
	}
}

func TestDecodeItems(t *testing.T) {
	cases := []struct {
		name, input, want string
		dropped           []string
	}{
		{"easy message without type", `[{"role":"user","content":"hello"}]`,
			`[{"role":"user","content":"hello"}]`, nil},
		{"user parts", `[{"type":"message","role":"user","content":[{"type":"input_text","text":"look"},{"type":"input_image","image_url":"https://x/y.png","detail":"low"},{"type":"input_image","image_url":"data:image/png;base64,AA=="}]}]`,
			`[{"role":"user","content":[{"type":"text","text":"look"},{"type":"image_url","image_url":{"url":"https://x/y.png","detail":"low"}},{"type":"image_url","image_url":{"url":"data:image/png;base64,AA=="}}]}]`, nil},
		{"developer and system become system", `[{"role":"developer","content":"d"},{"type":"message","role":"system","content":[{"type":"input_text","text":"a"},{"type":"input_text","text":"b"}]}]`,
			`[{"role":"system","content":"d"},{"role":"system","content":"ab"}]`, nil},
		{"assistant output_text", `[{"type":"message","role":"assistant","id":"msg_1","status":"completed","content":[{"type":"output_text","text":"Hi <b>","annotations":[]}]}]`,
			`[{"role":"assistant","content":"Hi <b>"}]`, nil},
		{"function call round trip", `[
			{"role":"user","content":"weather?"},
			{"type":"function_call","id":"fc_1","call_id":"call_a","name":"get_weather","arguments":"{\"city\":\"Paris\"}"},
			{"type":"function_call","call_id":"call_b","name":"get_time","arguments":"{}"},
			{"type":"function_call_output","call_id":"call_a","output":"sunny"},
			{"type":"function_call_output","call_id":"call_b","output":[{"type":"input_text","text":"12:"},{"type":"input_text","text":"00"}]}]`,
			`[{"role":"user","content":"weather?"},` +
				`{"role":"assistant","content":null,"tool_calls":[{"id":"call_a","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Paris\"}"}},{"id":"call_b","type":"function","function":{"name":"get_time","arguments":"{}"}}]},` +
				`{"role":"tool","tool_call_id":"call_a","content":"sunny"},` +
				`{"role":"tool","tool_call_id":"call_b","content":"12:00"}]`, nil},
		{"reasoning, text and a call make one assistant message", `[
			{"type":"reasoning","id":"rs_1","summary":[],"content":[{"type":"reasoning_text","text":"think"}],"encrypted_content":"opaque"},
			{"type":"message","role":"assistant","content":"Let me check."},
			{"type":"function_call","call_id":"c1","name":"f","arguments":"{}"},
			{"type":"function_call_output","call_id":"c1","output":"ok"},
			{"type":"reasoning","id":"rs_2","summary":[{"type":"summary_text","text":"s"}]},
			{"type":"message","role":"assistant","content":"Done."}]`,
			`[{"role":"assistant","content":"Let me check.","reasoning_content":"think","tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{}"}}]},` +
				`{"role":"tool","tool_call_id":"c1","content":"ok"},` +
				`{"role":"assistant","content":"Done."}]`, nil},
		{"text after calls starts a new assistant message", `[
			{"type":"function_call","call_id":"c1","name":"f","arguments":"{}"},
			{"type":"message","role":"assistant","content":"more"}]`,
			`[{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{}"}}]},{"role":"assistant","content":"more"}]`, nil},
		{"namespaced call", `[{"type":"function_call","call_id":"c1","namespace":"crm","name":"lookup","arguments":"{\"id\":1}"}]`,
			`[{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"crm.lookup","arguments":"{\"id\":1}"}}]}]`, nil},
		{"custom tool call and output", `[
			{"type":"custom_tool_call","call_id":"c9","name":"apply_patch","input":"*** Begin Patch\n<x> & \"y\""},
			{"type":"custom_tool_call_output","call_id":"c9","output":"applied"}]`,
			`[{"role":"assistant","content":null,"tool_calls":[{"id":"c9","type":"function","function":{"name":"apply_patch","arguments":"{\"input\":\"*** Begin Patch\\n<x> & \\\"y\\\"\"}"}}]},` +
				`{"role":"tool","tool_call_id":"c9","content":"applied"}]`, nil},
		{"tool output with an image stays parts", `[{"type":"function_call_output","call_id":"c1","output":[{"type":"input_text","text":"see"},{"type":"input_image","image_url":"https://i"}]}]`,
			`[{"role":"tool","tool_call_id":"c1","content":[{"type":"text","text":"see"},{"type":"image_url","image_url":{"url":"https://i"}}]}]`, nil},
		{"client tool search", `[
			{"type":"tool_search_call","call_id":"ts1","execution":"client","arguments":{"query":"crm"},"status":"completed"},
			{"type":"tool_search_output","call_id":"ts1","execution":"client","status":"completed","tools":[
				{"type":"function","name":"crm_find","description":"Find.","parameters":{"type":"object"},"defer_loading":true}]}]`,
			`[{"role":"assistant","content":null,"tool_calls":[{"id":"ts1","type":"function","function":{"name":"tool_search","arguments":"{\"query\":\"crm\"}"}}]},` +
				`{"role":"tool","tool_call_id":"ts1","content":"Loaded tools: crm_find."}]`, nil},
		{"hosted items dropped", `[
			{"type":"web_search_call","id":"ws_1","status":"completed","action":{"type":"search","query":"q"}},
			{"type":"tool_search_call","execution":"server","call_id":null,"arguments":{"q":1}},
			{"role":"user","content":"x"}]`,
			`[{"role":"user","content":"x"}]`, []string{"web_search_call", "tool_search_call"}},
		{"reasoning alone", `[{"type":"reasoning","id":"r","summary":[],"content":[{"type":"reasoning_text","text":"a"},{"type":"reasoning_text","text":"b"}]}]`,
			`[{"role":"assistant","content":"","reasoning_content":"ab"}]`, nil},
		{"empty array", `[]`, `[]`, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := mustDecode(t, `{"model":"m","input":`+c.input+`}`, Options{})
			if got := joinMsgs(r.InputMessages); got != c.want {
				t.Errorf("messages:\n got %s\nwant %s", got, c.want)
			}
			if !slices.Equal(r.Dropped, c.dropped) {
				t.Errorf("Dropped = %q, want %q", r.Dropped, c.dropped)
			}
			var items []json.RawMessage
			if err := json.Unmarshal([]byte(c.input), &items); err != nil {
				t.Fatal(err)
			}
			if len(r.Input) != len(items) {
				t.Fatalf("Input has %d items, want %d", len(r.Input), len(items))
			}
			for i := range items {
				if !bytes.Equal(r.Input[i], items[i]) {
					t.Errorf("Input[%d] = %s, want the item as sent %s", i, r.Input[i], items[i])
				}
			}
		})
	}
}

func TestDecodeToolSearchLoadsTools(t *testing.T) {
	r := mustDecode(t, `{"model":"m",
		"tools":[{"type":"tool_search","execution":"client"},{"type":"function","name":"base","parameters":{"type":"object"}}],
		"input":[{"type":"tool_search_call","call_id":"ts1","arguments":{"query":"crm"}},
			{"type":"tool_search_output","call_id":"ts1","tools":[
				{"type":"function","name":"base","parameters":{"type":"object","x":1}},
				{"type":"namespace","name":"crm","description":"CRM","tools":[{"type":"function","name":"find","parameters":{"type":"object"},"defer_loading":true}]}]}]}`, Options{})
	want := `[{"type":"function","function":{"name":"tool_search","description":"` + toolSearchDescription + `","parameters":` + toolSearchParameters + `}},` +
		`{"type":"function","function":{"name":"base","parameters":{"type":"object"}}},` +
		`{"type":"function","function":{"name":"crm.find","parameters":{"type":"object"}}}]`
	if string(r.Tools) != want {
		t.Errorf("Tools:\n got %s\nwant %s", r.Tools, want)
	}
	if got := joinMsgs(r.InputMessages); !strings.Contains(got, `"content":"Loaded tools: base, crm.find."`) {
		t.Errorf("tool message: %s", got)
	}
	if len(r.Loaded) != 2 || !strings.HasPrefix(string(r.Loaded[1]), `{"type":"namespace"`) {
		t.Errorf("Loaded = %s", joinMsgs(r.Loaded))
	}
	if r.Names["crm.find"] != (ToolName{Kind: "function", Namespace: "crm", Name: "find"}) ||
		r.Names["tool_search"].Kind != "tool_search" {
		t.Errorf("Names = %+v", r.Names)
	}

	// A later turn loads what this one found, before what its own input loads.
	next := mustDecode(t, `{"model":"m","tools":[{"type":"function","name":"base"}],"input":[
		{"type":"additional_tools","role":"developer","tools":[{"type":"custom","name":"late"}]}]}`, Options{})
	if err := next.LoadTools(r.Loaded); err != nil {
		t.Fatal(*err)
	}
	var names []string
	for _, s := range mustSchemas(t, next.Tools) {
		names = append(names, s.Name)
	}
	if want := []string{"base", "crm.find", "late"}; !slices.Equal(names, want) {
		t.Errorf("tools after LoadTools: %q, want %q", names, want)
	}
	if next.Names["late"].Kind != "custom" {
		t.Errorf("late: %+v", next.Names["late"])
	}
}

func mustSchemas(t *testing.T, tools []byte) []oai.ToolSchema {
	t.Helper()
	s, err := oai.ToolSchemas(tools)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestDecodeTools(t *testing.T) {
	cases := []struct {
		name, tools, want string
		names             map[string]ToolName
		dropped           []string
	}{
		{"function copied as sent",
			`[{"type":"function","name":"f","description":"D","parameters":{ "type" : "object","properties":{"a":{"type":"string","description":"\u00e9"}} },"strict":true,"defer_loading":false}]`,
			`[{"type":"function","function":{"name":"f","description":"D","parameters":{ "type" : "object","properties":{"a":{"type":"string","description":"\u00e9"}} },"strict":true}}]`,
			map[string]ToolName{"f": {Kind: "function", Name: "f"}}, nil},
		{"function without parameters", `[{"type":"function","name":"g","parameters":null,"strict":null}]`,
			`[{"type":"function","function":{"name":"g"}}]`,
			map[string]ToolName{"g": {Kind: "function", Name: "g"}}, nil},
		{"namespace", `[{"type":"namespace","name":"crm","description":"CRM tools","tools":[
				{"type":"function","name":"lookup","parameters":{"type":"object"}},
				{"type":"custom","name":"query","description":"SQL"}]}]`,
			`[{"type":"function","function":{"name":"crm.lookup","parameters":{"type":"object"}}},` +
				`{"type":"function","function":{"name":"crm.query","description":"SQL","parameters":` + CustomParameters + `}}]`,
			map[string]ToolName{"crm.lookup": {Kind: "function", Namespace: "crm", Name: "lookup"}, "crm.query": {Kind: "custom", Namespace: "crm", Name: "query"}}, nil},
		{"custom with grammar: the input held to the format as sent", `[{"type":"custom","name":"patch","description":"Apply.","format":{ "type":"grammar", "syntax":"lark","definition":"start: /.+/"}}]`,
			`[{"type":"function","function":{"name":"patch","description":"Apply.","parameters":` +
				`{"type":"object","properties":{"input":{"type":"string","x-grammar":{ "type":"grammar", "syntax":"lark","definition":"start: /.+/"}}},"required":["input"],"additionalProperties":false}}}]`,
			map[string]ToolName{"patch": {Kind: "custom", Name: "patch"}}, nil},
		{"custom with text format: free input", `[{"type":"custom","name":"note","format":{"type":"text"}}]`,
			`[{"type":"function","function":{"name":"note","parameters":{"type":"object","properties":{"input":{"type":"string"}},"required":["input"],"additionalProperties":false}}}]`,
			map[string]ToolName{"note": {Kind: "custom", Name: "note"}}, nil},
		{"client tool search with own parameters", `[{"type":"tool_search","execution":"client","description":"Find tools.","parameters":{"type":"object","properties":{"paths":{"type":"array"}}}}]`,
			`[{"type":"function","function":{"name":"tool_search","description":"Find tools.","parameters":{"type":"object","properties":{"paths":{"type":"array"}}}}}]`,
			map[string]ToolName{"tool_search": {Kind: "tool_search", Name: "tool_search"}}, nil},
		{"hosted dropped", `[{"type":"web_search"},{"type":"function","name":"f"},{"type":"file_search","vector_store_ids":["v"]},{"type":"mcp","server_label":"x"},{"type":"tool_search"},{"type":"web_search"}]`,
			`[{"type":"function","function":{"name":"f"}}]`,
			map[string]ToolName{"f": {Kind: "function", Name: "f"}}, []string{"web_search", "file_search", "mcp", "tool_search"}},
		{"only hosted", `[{"type":"code_interpreter","container":{"type":"auto"}}]`, ``, map[string]ToolName{}, []string{"code_interpreter"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := mustDecode(t, `{"model":"m","input":"x","tools":`+c.tools+`}`, Options{})
			if string(r.Tools) != c.want {
				t.Errorf("Tools:\n got %s\nwant %s", r.Tools, c.want)
			}
			if len(r.Names) != len(c.names) {
				t.Errorf("Names = %+v, want %+v", r.Names, c.names)
			}
			for k, v := range c.names {
				if r.Names[k] != v {
					t.Errorf("Names[%q] = %+v, want %+v", k, r.Names[k], v)
				}
			}
			if !slices.Equal(r.Dropped, c.dropped) {
				t.Errorf("Dropped = %q, want %q", r.Dropped, c.dropped)
			}
		})
	}
	r := mustDecode(t, `{"model":"m","tools":[{"type":"custom","name":"patch","format":{"type":"grammar","syntax":"regex","definition":"^a+$"}}]}`, Options{})
	if got := string(r.CustomGrammar["patch"]); got != `{"type":"grammar","syntax":"regex","definition":"^a+$"}` {
		t.Errorf("CustomGrammar = %s", got)
	}
}

// TestDecodeTools_GrammarRefusalNamesConstruct holds that a custom tool's grammar the
// gateway cannot enforce is refused with a message naming what it cannot take.
func TestDecodeTools_GrammarRefusalNamesConstruct(t *testing.T) {
	for def, construct := range map[string]string{
		`start: WS\n%ignore WS\n%import common.WS`: "%ignore",
		`start: /(?<!x)a/`:                         "look-behind",
		`start: start \"a\" | \"a\"`:               "left recursion",
	} {
		_, err := Decode([]byte(`{"model":"m","tools":[{"type":"custom","name":"c","format":{"type":"grammar","syntax":"lark","definition":"`+def+`"}}]}`), Options{})
		if err == nil {
			t.Errorf("%s: accepted", def)
			continue
		}
		if !strings.Contains(err.Message, construct) || !strings.Contains(err.Message, "tools[0].format.definition") {
			t.Errorf("%s: message %q does not name %q and the definition", def, err.Message, construct)
		}
	}
	// The grammars Codex ships are taken.
	for _, f := range []string{"apply_patch", "exec", "js_repl"} {
		def, err := os.ReadFile(filepath.Join("..", "..", "masking", "lark", "testdata", "codex", f+".lark"))
		if err != nil {
			t.Fatal(err)
		}
		q, _ := json.Marshal(string(def))
		mustDecode(t, `{"model":"m","tools":[{"type":"custom","name":"`+f+`","format":{"type":"grammar","syntax":"lark","definition":`+string(q)+`}}]}`, Options{})
	}
}

func TestDecodeToolChoice(t *testing.T) {
	tools := `[{"type":"function","name":"f"},{"type":"custom","name":"c"},{"type":"namespace","name":"crm","tools":[{"type":"function","name":"lookup"}]},{"type":"web_search"}]`
	cases := []struct{ choice, want string }{
		{`"auto"`, `"auto"`},
		{`"none"`, `"none"`},
		{`"required"`, `"required"`},
		{`{"type":"function","name":"f"}`, `{"type":"function","function":{"name":"f"}}`},
		{`{"type":"custom","name":"c"}`, `{"type":"function","function":{"name":"c"}}`},
		{`{"type":"function","name":"lookup"}`, `{"type":"function","function":{"name":"crm.lookup"}}`},
		{`{"type":"function","name":"crm.lookup"}`, `{"type":"function","function":{"name":"crm.lookup"}}`},
		{`{"type":"allowed_tools","mode":"required","tools":[{"type":"function","name":"f"},{"type":"web_search"},{"type":"custom","name":"c"}]}`,
			`{"type":"allowed_tools","allowed_tools":{"mode":"required","tools":[{"type":"function","function":{"name":"f"}},{"type":"function","function":{"name":"c"}}]}}`},
		{`{"type":"allowed_tools","mode":"auto","tools":[{"type":"image_generation"}]}`, `"none"`},
	}
	for _, c := range cases {
		r := mustDecode(t, `{"model":"m","input":"x","tools":`+tools+`,"tool_choice":`+c.choice+`}`, Options{})
		if string(r.ToolChoice) != c.want {
			t.Errorf("tool_choice %s → %s, want %s", c.choice, r.ToolChoice, c.want)
		}
	}
	if r := mustDecode(t, `{"model":"m","tool_choice":null}`, Options{}); r.ToolChoice != nil {
		t.Errorf("null tool_choice → %s", r.ToolChoice)
	}
}

func TestDecodeErrors(t *testing.T) {
	cases := []struct {
		name, body, param, code string
		opt                     Options
	}{
		{"bad JSON", `{"model":`, "", "invalid_json", Options{}},
		{"not an object", `[1]`, "", "invalid_type", Options{}},
		{"no model", `{"input":"x"}`, "model", "missing_required_parameter", Options{}},
		{"model not a string", `{"model":3}`, "model", "invalid_type", Options{}},
		{"stream not a bool", `{"model":"m","stream":"yes"}`, "stream", "invalid_type", Options{}},
		{"input a number", `{"model":"m","input":42}`, "input", "invalid_type", Options{}},
		{"input an object", `{"model":"m","input":{"role":"user"}}`, "input", "invalid_type", Options{}},
		{"item not an object", `{"model":"m","input":["hi"]}`, "input[0]", "invalid_type", Options{}},
		{"item without type or role", `{"model":"m","input":[{"content":"x"}]}`, "input[0]", "invalid_value", Options{}},
		{"unknown item type", `{"model":"m","input":[{"role":"user","content":"a"},{"type":"telepathy"}]}`, "input[1].type", "invalid_value", Options{}},
		{"bad role", `{"model":"m","input":[{"role":"tool","content":"a"}]}`, "input[0].role", "invalid_value", Options{}},
		{"content missing", `{"model":"m","input":[{"role":"user"}]}`, "input[0].content", "missing_required_parameter", Options{}},
		{"content a number", `{"model":"m","input":[{"role":"user","content":1}]}`, "input[0].content", "invalid_type", Options{}},
		{"function_call without call_id", `{"model":"m","input":[{"type":"function_call","name":"f","arguments":"{}"}]}`, "input[0].call_id", "missing_required_parameter", Options{}},
		{"function_call with empty call_id", `{"model":"m","input":[{"type":"function_call","call_id":"","name":"f","arguments":"{}"}]}`, "input[0].call_id", "invalid_value", Options{}},
		{"function_call arguments an object", `{"model":"m","input":[{"type":"function_call","call_id":"c","name":"f","arguments":{}}]}`, "input[0].arguments", "invalid_type", Options{}},
		{"output without call_id", `{"model":"m","input":[{"type":"function_call_output","output":"x"}]}`, "input[0].call_id", "missing_required_parameter", Options{}},
		{"output missing", `{"model":"m","input":[{"type":"function_call_output","call_id":"c"}]}`, "input[0].output", "missing_required_parameter", Options{}},
		{"custom call without input", `{"model":"m","input":[{"type":"custom_tool_call","call_id":"c","name":"p"}]}`, "input[0].input", "missing_required_parameter", Options{}},
		{"item_reference", `{"model":"m","input":[{"type":"item_reference","id":"msg_1"}]}`, "input[0].id", "item_not_found", Options{}},
		{"item_reference without id", `{"model":"m","input":[{"type":"item_reference"}]}`, "input[0].id", "missing_required_parameter", Options{}},
		{"input_file filename not a string", `{"model":"m","input":[{"role":"user","content":[{"type":"input_file","filename":1,"file_data":"x"}]}]}`, "input[0].content[0].filename", "invalid_type", Options{}},
		{"image by file id", `{"model":"m","input":[{"role":"user","content":[{"type":"input_image","file_id":"f","detail":"auto"}]}]}`, "input[0].content[0].file_id", "unsupported_value", Options{}},
		{"unknown part", `{"model":"m","input":[{"role":"user","content":[{"type":"input_video"}]}]}`, "input[0].content[0].type", "unsupported_value", Options{}},
		{"tool_search_output without tools", `{"model":"m","input":[{"type":"tool_search_output","call_id":"c"}]}`, "input[0].tools", "missing_required_parameter", Options{}},
		{"reasoning content not reasoning_text", `{"model":"m","input":[{"type":"reasoning","summary":[],"content":[{"type":"output_text","text":"x"}]}]}`, "input[0].content[0].type", "invalid_value", Options{}},
		{"compaction not made here", `{"model":"m","input":[{"type":"compaction","encrypted_content":"x"}]}`, "input[0].encrypted_content", "invalid_value", Options{}},
		{"compaction without content", `{"model":"m","input":[{"type":"compaction"}]}`, "input[0].encrypted_content", "missing_required_parameter", Options{}},
		{"tools not an array", `{"model":"m","tools":{}}`, "tools", "invalid_type", Options{}},
		{"unknown tool type", `{"model":"m","tools":[{"type":"function","name":"f"},{"type":"teleport"}]}`, "tools[1].type", "invalid_value", Options{}},
		{"function without name", `{"model":"m","tools":[{"type":"function"}]}`, "tools[0].name", "missing_required_parameter", Options{}},
		{"parameters not an object", `{"model":"m","tools":[{"type":"function","name":"f","parameters":"x"}]}`, "tools[0].parameters", "invalid_type", Options{}},
		{"duplicate names", `{"model":"m","tools":[{"type":"function","name":"crm.a"},{"type":"namespace","name":"crm","tools":[{"type":"function","name":"a"}]}]}`, "tools[1].tools[0]", "invalid_value", Options{}},
		{"nested namespace", `{"model":"m","tools":[{"type":"namespace","name":"a","tools":[{"type":"namespace","name":"b","tools":[]}]}]}`, "tools[0].tools[0].type", "unsupported_value", Options{}},
		{"custom format type", `{"model":"m","tools":[{"type":"custom","name":"c","format":{"type":"yaml"}}]}`, "tools[0].format.type", "invalid_value", Options{}},
		{"grammar without syntax", `{"model":"m","tools":[{"type":"custom","name":"c","format":{"type":"grammar","definition":"start: \"a\""}}]}`, "tools[0].format.syntax", "missing_required_parameter", Options{}},
		{"grammar syntax unknown", `{"model":"m","tools":[{"type":"custom","name":"c","format":{"type":"grammar","syntax":"peg","definition":"x"}}]}`, "tools[0].format.syntax", "invalid_value", Options{}},
		{"grammar without definition", `{"model":"m","tools":[{"type":"custom","name":"c","format":{"type":"grammar","syntax":"lark"}}]}`, "tools[0].format.definition", "missing_required_parameter", Options{}},
		{"lark outside the subset", `{"model":"m","tools":[{"type":"function","name":"f"},{"type":"custom","name":"c","format":{"type":"grammar","syntax":"lark","definition":"start: WS\n%ignore WS\n%import common.WS"}}]}`, "tools[1].format", "unsupported_value", Options{}},
		{"regex outside the subset", `{"model":"m","tools":[{"type":"custom","name":"c","format":{"type":"grammar","syntax":"regex","definition":"a(?=b)"}}]}`, "tools[0].format", "unsupported_value", Options{}},
		{"namespaced lark malformed", `{"model":"m","tools":[{"type":"namespace","name":"n","tools":[{"type":"custom","name":"c","format":{"type":"grammar","syntax":"lark","definition":"start: \"a"}}]}]}`, "tools[0].tools[0].format", "unsupported_value", Options{}},
		{"hosted refused", `{"model":"m","tools":[{"type":"function","name":"f"},{"type":"web_search_preview"}]}`, "tools[1].type", "unsupported_value", Options{Hosted: "refuse"}},
		{"hosted item refused", `{"model":"m","input":[{"type":"mcp_call","id":"x"}]}`, "input[0].type", "unsupported_value", Options{Hosted: "refuse"}},
		{"tool_choice bad string", `{"model":"m","tool_choice":"always"}`, "tool_choice", "invalid_value", Options{}},
		{"tool_choice number", `{"model":"m","tool_choice":1}`, "tool_choice", "invalid_type", Options{}},
		{"tool_choice hosted", `{"model":"m","tool_choice":{"type":"file_search"}}`, "tool_choice.type", "unsupported_value", Options{}},
		{"allowed_tools bad mode", `{"model":"m","tool_choice":{"type":"allowed_tools","mode":"any","tools":[]}}`, "tool_choice.mode", "invalid_value", Options{}},
		{"allowed_tools nothing left", `{"model":"m","tool_choice":{"type":"allowed_tools","mode":"required","tools":[{"type":"mcp","server_label":"s"}]}}`, "tool_choice.tools", "invalid_value", Options{}},
		{"max_output_tokens fraction", `{"model":"m","max_output_tokens":1.5}`, "max_output_tokens", "invalid_value", Options{}},
		{"temperature string", `{"model":"m","temperature":"hot"}`, "temperature", "invalid_type", Options{}},
		{"json_schema without schema", `{"model":"m","text":{"format":{"type":"json_schema","name":"x"}}}`, "text.format.schema", "missing_required_parameter", Options{}},
		{"text format unknown", `{"model":"m","text":{"format":{"type":"xml"}}}`, "text.format.type", "invalid_value", Options{}},
		{"background", `{"model":"m","background":true}`, "background", "unsupported_value", Options{}},
		{"conversation", `{"model":"m","conversation":"conv_1"}`, "conversation", "unsupported_value", Options{}},
		{"instructions not a string", `{"model":"m","instructions":["x"]}`, "instructions", "invalid_type", Options{}},
		{"metadata not an object", `{"model":"m","metadata":"x"}`, "metadata", "invalid_type", Options{}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r, err := Decode([]byte(c.body), c.opt)
			if err == nil {
				t.Fatalf("no error; chat body %s", r.ChatBody(nil))
			}
			if err.Status != 400 || err.Type != "invalid_request_error" || err.Param != c.param || err.Code != c.code || err.Message == "" {
				t.Errorf("error %+v, want param %q code %q", *err, c.param, c.code)
			}
		})
	}
}

func TestChatBody(t *testing.T) {
	// Odd spacing, key order and escapes in the schemas must reach the engine as sent.
	params := `{ "required":["q"], "type":"object" ,"properties":{"q":{"type":"string","description":"caf\u00e9 <b>","enum":["a" , "b"]}}}`
	format := `{"type":"json_schema","name":"out","strict":true,"schema":{"type":"object","properties":{ "x": {"type":"integer"} }}}`
	body := `{"model":"qwen","stream":true,"store":false,"instructions":"Sys","previous_response_id":"resp_1","include":["reasoning.encrypted_content"],
		"input":[{"role":"user","content":"hi"}],
		"tools":[{"type":"function","name":"s","parameters":` + params + `,"strict":false},{"type":"web_search"}],
		"tool_choice":"required","parallel_tool_calls":false,"max_output_tokens":256,"temperature":0.2,"top_p":0.9,
		"text":{"format":` + format + `,"verbosity":"low"},"reasoning":{"effort":"high","summary":"auto"},
		"prompt_cache_key":"k1","user":"u1","safety_identifier":"sid","metadata":{"team":"a"},"truncation":"auto","top_logprobs":2,"service_tier":"auto","max_tool_calls":3}`
	r := mustDecode(t, body, Options{})
	history := []json.RawMessage{json.RawMessage(`{"role":"user","content":"earlier"}`), json.RawMessage(`{"role":"assistant","content":"ok"}`)}
	got := string(r.ChatBody(history))
	want := `{"model":"qwen","messages":[{"role":"system","content":"Sys"},{"role":"user","content":"earlier"},{"role":"assistant","content":"ok"},{"role":"user","content":"hi"}],` +
		`"stream":true,"stream_options":{"include_usage":true},` +
		`"tools":[{"type":"function","function":{"name":"s","parameters":` + params + `,"strict":false}}],"tool_choice":"required","parallel_tool_calls":false,` +
		`"max_completion_tokens":256,"temperature":0.2,"top_p":0.9,` +
		`"response_format":{"type":"json_schema","json_schema":{"name":"out","schema":{"type":"object","properties":{ "x": {"type":"integer"} }},"strict":true}},` +
		`"verbosity":"low","reasoning_effort":"high","prompt_cache_key":"k1","user":"u1","safety_identifier":"sid","metadata":{"team":"a"}}`
	if got != want {
		t.Errorf("ChatBody:\n got %s\nwant %s", got, want)
	}
	env, err := oai.ParseEnvelope([]byte(got))
	if err != nil {
		t.Fatalf("the chat body is not a chat request: %v", err)
	}
	if env.Model != "qwen" || !env.Stream || !env.IncludeUsage || len(env.Messages) != 4 {
		t.Errorf("envelope %+v", env)
	}
	if s := mustSchemas(t, env.Tools); len(s) != 1 || string(s[0].Parameters) != params {
		t.Errorf("schema bytes changed: %s", s[0].Parameters)
	}
	if !slices.Equal(r.Dropped, []string{"web_search"}) || r.Store || r.PreviousResponseID != "resp_1" || r.User != "u1" || r.PromptCacheKey != "k1" {
		t.Errorf("request %+v", r)
	}

	// Not streaming, no tools: no stream members, no tool members; json_object format.
	r = mustDecode(t, `{"model":"m","input":"x","tool_choice":"auto","parallel_tool_calls":true,"text":{"format":{"type":"json_object"}},"safety_identifier":"s2"}`, Options{})
	if got, want := string(r.ChatBody(nil)), `{"model":"m","messages":[{"role":"user","content":"x"}],"response_format":{"type":"json_object"},"safety_identifier":"s2"}`; got != want {
		t.Errorf("ChatBody:\n got %s\nwant %s", got, want)
	}
	if r.User != "s2" {
		t.Errorf("User = %q, want the safety identifier", r.User)
	}
}

// TestDecode_ExplodingGrammarRefused: a custom tool whose grammar would expand past
// the engines' bound once its counted repetitions are copied is a 400 at the door
// naming the rule, never a grammar sent to an engine.
func TestDecode_ExplodingGrammarRefused(t *testing.T) {
	var def strings.Builder
	def.WriteString(`start: r0\n`)
	for i := range 400 {
		fmt.Fprintf(&def, `r%d: \"a\" ~ 1000\n`, i)
	}
	body := `{"model":"m","tools":[{"type":"custom","name":"c","format":{"type":"grammar","syntax":"lark","definition":"` + def.String() + `"}}]}`
	r, err := Decode([]byte(body), Options{})
	if err == nil {
		t.Fatalf("no error; chat body %.300s", r.ChatBody(nil))
	}
	if err.Status != 400 || err.Param != "tools[0].format" || err.Code != "unsupported_value" || !strings.Contains(err.Message, "rule r3") {
		t.Errorf("error %+v, want a 400 unsupported_value on tools[0].format naming rule r3", *err)
	}
}
