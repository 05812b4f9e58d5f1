package ollama

import (
	"encoding/json"
	"errors"
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/maskgate/maskgate/backends"
)

// wire is what the api client sends for t: the bytes Ollama sees.
func wire(t *testing.T, tr *translated) string {
	t.Helper()
	b, err := json.Marshal(tr.req)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

const weatherTool = `{"type":"function","function":{"name":"get_weather","description":"Weather now","parameters":{"type":"object","properties":{"city":{"type":"string","description":"City name"},"unit":{"type":"string","enum":["c","f"]}},"required":["city"]}}}`
const timeTool = `{"type":"function","function":{"name":"get_time","parameters":{"type":"object","properties":{"tz":{"type":"string"}}}}}`
const noParamsTool = `{"type":"function","function":{"name":"ping"}}`

func TestTranslate_MessagesByRole(t *testing.T) {
	for _, tc := range []struct {
		name string
		body string
		want string
	}{
		{
			name: "system_and_developer_become_system",
			body: `{"model":"m","messages":[{"role":"system","content":"be brief"},{"role":"developer","content":"no markdown"},{"role":"user","content":"hi"}]}`,
			want: `{"model":"m","messages":[{"role":"system","content":"be brief"},{"role":"system","content":"no markdown"},{"role":"user","content":"hi"}],"stream":false,"options":null,"truncate":false}`,
		},
		{
			name: "text_parts_are_joined",
			body: `{"model":"m","messages":[{"role":"user","content":[{"type":"text","text":"one "},{"type":"text","text":"two"}]}]}`,
			want: `{"model":"m","messages":[{"role":"user","content":"one two"}],"stream":false,"options":null,"truncate":false}`,
		},
		{
			name: "null_content_is_empty",
			body: `{"model":"m","messages":[{"role":"user","content":"q"},{"role":"assistant","content":null}]}`,
			want: `{"model":"m","messages":[{"role":"user","content":"q"},{"role":"assistant","content":""}],"stream":false,"options":null,"truncate":false}`,
		},
		{
			name: "tool_calls_and_results_by_name",
			body: `{"model":"m","stream":true,"messages":[{"role":"user","content":"weather?"},` +
				`{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Oslo\",\"unit\":\"c\"}"}},{"id":"call_2","type":"function","function":{"name":"get_time","arguments":""}}]},` +
				`{"role":"tool","tool_call_id":"call_2","content":"12:00"},{"role":"tool","tool_call_id":"call_1","content":"cold"},{"role":"tool","tool_call_id":"call_9","name":"legacy","content":"x"}]}`,
			want: `{"model":"m","messages":[{"role":"user","content":"weather?"},` +
				`{"role":"assistant","content":"","tool_calls":[{"id":"call_1","function":{"index":0,"name":"get_weather","arguments":{"city":"Oslo","unit":"c"}}},{"id":"call_2","function":{"index":1,"name":"get_time","arguments":{}}}]},` +
				`{"role":"tool","content":"12:00","tool_name":"get_time","tool_call_id":"call_2"},{"role":"tool","content":"cold","tool_name":"get_weather","tool_call_id":"call_1"},{"role":"tool","content":"x","tool_name":"legacy","tool_call_id":"call_9"}],"stream":true,"options":null,"truncate":false}`,
		},
		{
			name: "argument_order_is_kept",
			body: `{"model":"m","messages":[{"role":"assistant","tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":"{\"z\":1,\"a\":{\"y\":2,\"b\":3}}"}}]}]}`,
			want: `{"model":"m","messages":[{"role":"assistant","content":"","tool_calls":[{"id":"c","function":{"index":0,"name":"f","arguments":{"z":1,"a":{"b":3,"y":2}}}}]}],"stream":false,"options":null,"truncate":false}`,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr, err := translateRequest([]byte(tc.body), "")
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, wire(t, tr)); diff != "" {
				t.Errorf("wire request (-want +got):\n%s", diff)
			}
		})
	}
}

func TestTranslate_OptionsMapToOllama(t *testing.T) {
	for _, tc := range []struct {
		name string
		body string
		want string
	}{
		{"none", `{}`, `null`},
		{"sampling", `{"temperature":0,"top_p":0.9,"seed":42,"presence_penalty":0.5,"frequency_penalty":0.25}`,
			`{"frequency_penalty":0.25,"presence_penalty":0.5,"seed":42,"temperature":0,"top_p":0.9}`},
		{"top_k", `{"top_k":40}`, `{"top_k":40}`},
		{"max_tokens", `{"max_tokens":7}`, `{"num_predict":7}`},
		{"max_completion_tokens_wins", `{"max_tokens":7,"max_completion_tokens":9}`, `{"num_predict":9}`},
		{"stop_string", `{"stop":"END"}`, `{"stop":["END"]}`},
		{"stop_array", `{"stop":["a","b"]}`, `{"stop":["a","b"]}`},
		{"stop_null", `{"stop":null}`, `null`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			body := tc.body[:len(tc.body)-1]
			if body != "{" {
				body += ","
			}
			body += `"model":"m","messages":[{"role":"user","content":"hi"}]}`
			tr, err := translateRequest([]byte(body), "")
			if err != nil {
				t.Fatal(err)
			}
			got, _ := json.Marshal(tr.req.Options)
			if diff := cmp.Diff(tc.want, string(got)); diff != "" {
				t.Errorf("options (-want +got):\n%s", diff)
			}
		})
	}
}

func TestTranslate_ModelArgumentOverridesBody(t *testing.T) {
	tr, err := translateRequest([]byte(`{"model":"alias","messages":[{"role":"user","content":"hi"}]}`), "qwen2.5:0.5b")
	if err != nil {
		t.Fatal(err)
	}
	if tr.req.Model != "qwen2.5:0.5b" {
		t.Errorf("model = %q", tr.req.Model)
	}
}

func TestTranslate_ToolChoice(t *testing.T) {
	tools := `"tools":[` + weatherTool + `,` + timeTool + `,` + noParamsTool + `]`
	weatherParams := `{"type":"object","properties":{"city":{"type":"string","description":"City name"},"unit":{"type":"string","enum":["c","f"]}},"required":["city"]}`
	for _, tc := range []struct {
		name      string
		choice    string // tool_choice member, or empty
		tools     string
		wantMode  toolMode
		wantTools []string
		wantStrat string
		// wantFormat is the format sent; empty means none.
		wantFormat string
	}{
		{name: "no_tools", wantMode: toolsOff},
		{name: "absent_is_auto", tools: tools, wantMode: toolsAuto, wantTools: []string{"get_weather", "get_time", "ping"}, wantStrat: "remove"},
		{name: "auto", choice: `"auto"`, tools: tools, wantMode: toolsAuto, wantTools: []string{"get_weather", "get_time", "ping"}, wantStrat: "remove"},
		{name: "none_sends_no_tools", choice: `"none"`, tools: tools, wantMode: toolsOff, wantStrat: "remove"},
		{name: "auto_without_tools", choice: `"auto"`, wantMode: toolsOff},
		{
			name: "required_allows_every_tool", choice: `"required"`, tools: tools, wantMode: toolsRequired,
			wantTools: []string{"get_weather", "get_time", "ping"}, wantStrat: "mask",
			wantFormat: `{"type":"object","properties":{"name":{"type":"string","enum":["get_weather","get_time","ping"]},"arguments":{"type":"object"}},"required":["name","arguments"]}`,
		},
		{
			name: "named_function_uses_its_parameters", choice: `{"type":"function","function":{"name":"get_weather"}}`, tools: tools,
			wantMode: toolsRequired, wantTools: []string{"get_weather", "get_time", "ping"}, wantStrat: "mask",
			wantFormat: `{"type":"object","properties":{"name":{"type":"string","enum":["get_weather"]},"arguments":` + weatherParams + `},"required":["name","arguments"]}`,
		},
		{
			name: "named_function_without_parameters", choice: `{"type":"function","function":{"name":"ping"}}`, tools: tools,
			wantMode: toolsRequired, wantTools: []string{"get_weather", "get_time", "ping"}, wantStrat: "mask",
			wantFormat: `{"type":"object","properties":{"name":{"type":"string","enum":["ping"]},"arguments":{"type":"object"}},"required":["name","arguments"]}`,
		},
		{
			name:   "allowed_tools_required_sends_all_masks_some",
			choice: `{"type":"allowed_tools","allowed_tools":{"mode":"required","tools":[{"type":"function","function":{"name":"ping"}},{"type":"function","function":{"name":"get_time"}}]}}`,
			tools:  tools, wantMode: toolsRequired, wantTools: []string{"get_weather", "get_time", "ping"}, wantStrat: "mask",
			wantFormat: `{"type":"object","properties":{"name":{"type":"string","enum":["ping","get_time"]},"arguments":{"type":"object"}},"required":["name","arguments"]}`,
		},
		{
			name:   "allowed_tools_auto_sends_only_allowed",
			choice: `{"type":"allowed_tools","allowed_tools":{"mode":"auto","tools":[{"type":"function","function":{"name":"ping"}},{"type":"function","function":{"name":"get_time"}}]}}`,
			tools:  tools, wantMode: toolsAuto, wantTools: []string{"get_time", "ping"}, wantStrat: "remove",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			body := `{"model":"m","messages":[{"role":"user","content":"hi"}]`
			if tc.tools != "" {
				body += "," + tc.tools
			}
			if tc.choice != "" {
				body += `,"tool_choice":` + tc.choice
			}
			body += "}"
			tr, err := translateRequest([]byte(body), "")
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, tool := range tr.req.Tools {
				names = append(names, tool.Function.Name)
			}
			if tr.mode != tc.wantMode || tr.strategy != tc.wantStrat || string(tr.req.Format) != tc.wantFormat {
				t.Errorf("mode, strategy, format = %v, %q, %s; want %v, %q, %s", tr.mode, tr.strategy, tr.req.Format, tc.wantMode, tc.wantStrat, tc.wantFormat)
			}
			if diff := cmp.Diff(tc.wantTools, names); diff != "" {
				t.Errorf("tools sent (-want +got):\n%s", diff)
			}
			if len(tr.req.Format) > 0 && !json.Valid(tr.req.Format) {
				t.Errorf("format is not JSON: %s", tr.req.Format)
			}
		})
	}
}

func TestTranslate_ToolsBecomeOllamaTools(t *testing.T) {
	body := `{"model":"m","messages":[{"role":"user","content":"hi"}],"tools":[` + weatherTool + `,` + noParamsTool + `]}`
	tr, err := translateRequest([]byte(body), "")
	if err != nil {
		t.Fatal(err)
	}
	got, _ := json.Marshal(tr.req.Tools)
	want := `[{"type":"function","function":{"name":"get_weather","description":"Weather now","parameters":{"type":"object","required":["city"],"properties":{"city":{"type":"string","description":"City name"},"unit":{"type":"string","enum":["c","f"]}}}}},` +
		`{"type":"function","function":{"name":"ping","parameters":{"type":"object","properties":{}}}}]`
	if diff := cmp.Diff(want, string(got)); diff != "" {
		t.Errorf("tools (-want +got):\n%s", diff)
	}
}

func TestTranslate_ResponseFormat(t *testing.T) {
	for _, tc := range []struct {
		rf, want string
	}{
		{`{"type":"text"}`, ``},
		{`{"type":"json_object"}`, `"json"`},
		{`{"type":"json_schema","json_schema":{"name":"x","schema":{ "type" : "object" }}}`, `{"type":"object"}`},
	} {
		body := `{"model":"m","messages":[{"role":"user","content":"hi"}],"response_format":` + tc.rf + `}`
		tr, err := translateRequest([]byte(body), "")
		if err != nil {
			t.Fatalf("%s: %v", tc.rf, err)
		}
		if string(tr.req.Format) != tc.want {
			t.Errorf("%s: format = %s, want %s", tc.rf, tr.req.Format, tc.want)
		}
	}
}

func TestTranslate_RejectsWhatItCannotSend(t *testing.T) {
	msgs := `"messages":[{"role":"user","content":"hi"}]`
	for _, tc := range []struct {
		name, body, param string
	}{
		{"not_json", `{"model":`, ""},
		{"no_model", `{` + msgs + `}`, "model"},
		{"no_messages", `{"model":"m","messages":[]}`, "messages"},
		{"n_above_one", `{"model":"m",` + msgs + `,"n":2}`, "n"},
		{"image_part", `{"model":"m","messages":[{"role":"user","content":[{"type":"text","text":"see"},{"type":"image_url","image_url":{"url":"data:image/png;base64,AA"}}]}]}`, "messages[0].content[1].type"},
		{"content_number", `{"model":"m","messages":[{"role":"user","content":5}]}`, "messages[0].content"},
		{"unknown_role", `{"model":"m","messages":[{"role":"robot","content":"x"}]}`, "messages[0].role"},
		{"bad_arguments", `{"model":"m","messages":[{"role":"user","content":"x"},{"role":"assistant","tool_calls":[{"id":"a","type":"function","function":{"name":"f","arguments":"{not json"}}]}]}`, "messages[1].tool_calls[0].function.arguments"},
		{"array_arguments", `{"model":"m","messages":[{"role":"assistant","tool_calls":[{"id":"a","type":"function","function":{"name":"f","arguments":"[1]"}}]}]}`, "messages[0].tool_calls[0].function.arguments"},
		{"call_without_name", `{"model":"m","messages":[{"role":"assistant","tool_calls":[{"id":"a","type":"function","function":{"arguments":"{}"}}]}]}`, "messages[0].tool_calls[0].function.name"},
		{"custom_tool", `{"model":"m",` + msgs + `,"tools":[{"type":"custom","function":{"name":"x"}}]}`, "tools[0].type"},
		{"bad_parameters", `{"model":"m",` + msgs + `,"tools":[{"type":"function","function":{"name":"x","parameters":{"type":5}}}]}`, "tools[0].function.parameters"},
		{"required_without_tools", `{"model":"m",` + msgs + `,"tool_choice":"required"}`, "tool_choice"},
		{"unknown_choice", `{"model":"m",` + msgs + `,"tools":[` + noParamsTool + `],"tool_choice":"sometimes"}`, "tool_choice"},
		{"named_unknown_tool", `{"model":"m",` + msgs + `,"tools":[` + noParamsTool + `],"tool_choice":{"type":"function","function":{"name":"nope"}}}`, "tool_choice.function.name"},
		{"allowed_unknown_tool", `{"model":"m",` + msgs + `,"tools":[` + noParamsTool + `],"tool_choice":{"type":"allowed_tools","allowed_tools":{"mode":"required","tools":[{"type":"function","function":{"name":"nope"}}]}}}`, "tool_choice.allowed_tools.tools[0].function.name"},
		{"allowed_bad_mode", `{"model":"m",` + msgs + `,"tools":[` + noParamsTool + `],"tool_choice":{"type":"allowed_tools","allowed_tools":{"mode":"maybe","tools":[{"type":"function","function":{"name":"ping"}}]}}}`, "tool_choice.allowed_tools.mode"},
		{"stop_number", `{"model":"m",` + msgs + `,"stop":3}`, "stop"},
		{"response_format_unknown", `{"model":"m",` + msgs + `,"response_format":{"type":"xml"}}`, "response_format.type"},
		{"temperature_string", `{"model":"m",` + msgs + `,"temperature":"hot"}`, "temperature"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := translateRequest([]byte(tc.body), "")
			var be *backends.Error
			if !errors.As(err, &be) {
				t.Fatalf("err = %v, want a *backends.Error", err)
			}
			if be.Status != http.StatusBadRequest || be.Param != tc.param || be.Message == "" {
				t.Errorf("got %d param %q (%s); want 400 param %q", be.Status, be.Param, be.Message, tc.param)
			}
		})
	}
}

// tool_choice's shape is read by masking.ParseToolChoiceStrict; its errors keep the
// param that names the field at fault, and the message the client always got.
func TestTranslate_ToolChoiceErrorsNameTheField(t *testing.T) {
	for _, tc := range []struct {
		name, choice, param, message string
	}{
		{"unknown_string", `"sometimes"`, "tool_choice", `tool_choice "sometimes" is not one of "none", "auto", "required"`},
		{"unknown_type", `{"type":"custom"}`, "tool_choice.type", `tool_choice type "custom" is not "function" or "allowed_tools"`},
		{"function_without_name", `{"type":"function"}`, "tool_choice.function.name", "tool_choice names no function"},
		{"allowed_none", `{"type":"allowed_tools","allowed_tools":{"mode":"auto","tools":[]}}`, "tool_choice.allowed_tools.tools", "allowed_tools lists no tools"},
		{"allowed_custom", `{"type":"allowed_tools","allowed_tools":{"tools":[{"type":"function","function":{"name":"ping"}},{"type":"custom","custom":{"name":"x"}}]}}`,
			"tool_choice.allowed_tools.tools[1].type", `allowed tool type "custom" is not supported; only function`},
		{"allowed_second_unknown", `{"type":"allowed_tools","allowed_tools":{"tools":[{"type":"function","function":{"name":"ping"}},{"type":"function","function":{"name":"nope"}}]}}`,
			"tool_choice.allowed_tools.tools[1].function.name", `allowed tool "nope" is not in tools`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			body := `{"model":"m","messages":[{"role":"user","content":"hi"}],"tools":[` + noParamsTool + `],"tool_choice":` + tc.choice + `}`
			_, err := translateRequest([]byte(body), "")
			var be *backends.Error
			if !errors.As(err, &be) {
				t.Fatalf("err = %v, want a *backends.Error", err)
			}
			if be.Status != http.StatusBadRequest || be.Param != tc.param || be.Message != tc.message {
				t.Errorf("got %d param %q message %q; want 400 %q %q", be.Status, be.Param, be.Message, tc.param, tc.message)
			}
		})
	}
}
