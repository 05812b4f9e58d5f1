package anthropic

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/maskgate/maskgate/backends"
)

// The golden bodies in testdata/*.golden were reviewed against Anthropic's Messages API
// documentation (platform.claude.com/docs):
//   - API reference, "Create a Message" (POST /v1/messages): model, max_tokens
//     (required), system as an array of text blocks, messages of role user/assistant
//     with content blocks (text; image with a base64 or url source; tool_use with id,
//     name, input; tool_result with tool_use_id and string or block content),
//     stop_sequences, temperature (0 to 1), top_p, metadata.user_id, stream, tools
//     (name matching ^[a-zA-Z0-9_-]{1,64}$, description, input_schema) and tool_choice
//     ({"type":"auto"|"any"|"none"} or {"type":"tool","name"}, with
//     disable_parallel_tool_use).
//   - "Handle tool calls": tool_result blocks come first in the user turn that follows
//     the tool_use turn.
//   - "Vision": image source types base64 (image/jpeg, png, gif, webp) and url.
//   - "Prompt caching": cache_control {"type":"ephemeral"} on a tool, a system block or a
//     content block; at most 4 breakpoints; prefix order tools, system, messages.
//   - "Tool search tool" and "Tool use with prompt caching" (index_two_loads): a tool
//     with defer_loading: true; a client tool's tool_result holding tool_reference
//     blocks ({"type":"tool_reference","tool_name"}); deferred tools are not part of the
//     cached prefix.
//
// Run `go test ./backends/anthropic/ -run TestGolden -update` to rewrite them after a
// reviewed change. They are stored indented for review; indenting keeps member order
// and every string's bytes, and TestTranslate_KeepsClientBytes checks the raw output.

// Note the spacing and key order inside parameters and arguments: they must reach
// Anthropic as written.
const (
	weatherTool = `{"type":"function","function":{"name":"get_weather","description":"Weather now.","parameters":{ "type":"object", "required":["city"], "properties":{"city":{"type":"string"}} }}}`
	searchTool  = `{"type":"function","function":{"name":"search","parameters":{"type":"object","properties":{"q":{"type":"string"}}}}}`
	commitTool  = `{"type":"function","function":{"name":"git.commit","description":"Commit staged files.","parameters":{"type":"object","properties":{"message":{"type":"string"}}}}}`
	pingTool    = `{"type":"function","function":{"name":"ping"}}`
)

var goldenCases = []struct {
	name, body string
}{
	{"plain", `{"model":"claude-sonnet-4-5","messages":[{"role":"system","content":"Be brief."},{"role":"user","content":"caf\u00e9?"}],` +
		`"max_tokens":64,"temperature":0.2,"top_p":0.9,"stop":"\n\nHuman:","user":"user-42","seed":7,"presence_penalty":0}`},
	{"system_anywhere", `{"model":"m","messages":[{"role":"developer","content":[{"type":"text","text":"Rule one."},{"type":"text","text":"Rule two."}]},` +
		`{"role":"user","content":"hi"},{"role":"assistant","content":"Hello."},{"role":"system","content":"Answer in French."},{"role":"user","content":"and now?"}]}`},
	{"tools_auto_no_system", `{"model":"m","messages":[{"role":"user","content":"weather in Paris?"}],"tools":[` + weatherTool + `,` + searchTool + `,` + pingTool + `]}`},
	{"tool_loop", `{"model":"m","messages":[{"role":"system","content":"Use tools."},{"role":"user","content":"weather in Paris and Oslo?"},` +
		`{"role":"assistant","content":"Checking both.","tool_calls":[{"id":"toolu_01A","type":"function","function":{"name":"get_weather","arguments":"{ \"city\" : \"Paris\" }"}},{"id":"toolu_01B","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Oslo\"}"}}]},` +
		`{"role":"tool","tool_call_id":"toolu_01A","content":"18C"},{"role":"tool","tool_call_id":"toolu_01B","content":[{"type":"text","text":"4C"},{"type":"text","text":"rain"}]},` +
		`{"role":"user","content":"which is warmer?"}],"tools":[` + weatherTool + `]}`},
	{"required_serial", `{"model":"m","messages":[{"role":"user","content":"weather?"}],"tools":[` + weatherTool + `,` + searchTool + `],"tool_choice":"required","parallel_tool_calls":false}`},
	{"auto_serial", `{"model":"m","messages":[{"role":"user","content":"weather?"}],"tools":[` + weatherTool + `],"tool_choice":"auto","parallel_tool_calls":false}`},
	{"named_namespaced_tool", `{"model":"m","messages":[{"role":"user","content":"commit it"},` +
		`{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"git.commit","arguments":""}}]},` +
		`{"role":"tool","tool_call_id":"call_1","content":"nothing staged"}],` +
		`"tools":[` + commitTool + `,` + searchTool + `],"tool_choice":{"type":"function","function":{"name":"git.commit"}}}`},
	{"allowed_tools_narrow", `{"model":"m","messages":[{"role":"system","content":"s"},{"role":"user","content":"go"}],"tools":[` + weatherTool + `,` + searchTool + `,` + pingTool + `],` +
		`"tool_choice":{"type":"allowed_tools","allowed_tools":{"mode":"required","tools":[{"type":"function","function":{"name":"ping"}},{"type":"function","function":{"name":"search"}}]}}}`},
	{"tool_choice_none_keeps_tools", `{"model":"m","messages":[{"role":"user","content":"just talk"}],"tools":[` + weatherTool + `],"tool_choice":"none"}`},
	{"images", `{"model":"m","messages":[{"role":"user","content":[{"type":"text","text":"compare"},{"type":"image_url","image_url":{"url":"data:image/png;base64,iVBORw0KGgo="}},{"type":"image_url","image_url":{"url":"https://example.com/cat.jpg","detail":"high"}}]}]}`},
	{"stream_merges_turns", `{"model":"m","stream":true,"stream_options":{"include_usage":true},"max_tokens":5,"max_completion_tokens":128,"stop":["END","STOP"],` +
		`"messages":[{"role":"user","content":"one"},{"role":"user","content":"two"},{"role":"assistant","content":""},{"role":"user","content":"   "},{"role":"user","content":"three"}]}`},
	{"index_two_loads", idxBody(3, false)},
	{"foreign_call_ids", `{"model":"m","messages":[{"role":"user","content":"time?"},` +
		`{"role":"assistant","tool_calls":[{"id":"functions.get_time:0","type":"function","function":{"name":"get_time","arguments":"{}"}}]},` +
		`{"role":"tool","tool_call_id":"functions.get_time:0","content":"12:00"},{"role":"assistant","content":"It is noon."},{"role":"user","content":"thanks"}]}`},
}

func TestGolden_RequestBodies(t *testing.T) {
	for _, tc := range goldenCases {
		t.Run(tc.name, func(t *testing.T) {
			tr, err := translateRequest([]byte(tc.body), "", 4096)
			if err != nil {
				t.Fatal(err)
			}
			if !json.Valid(tr.body) {
				t.Fatalf("not JSON: %s", tr.body)
			}
			var got bytes.Buffer
			if err := json.Indent(&got, tr.body, "", "  "); err != nil {
				t.Fatal(err)
			}
			got.WriteByte('\n')
			path := filepath.Join("testdata", tc.name+".golden")
			if *update {
				if err := os.WriteFile(path, got.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if diff := cmp.Diff(string(want), got.String()); diff != "" {
				t.Errorf("Anthropic body (-golden +got):\n%s", diff)
			}
			if n := breakpoints(t, tr.body); n < 1 || n > 4 {
				t.Errorf("%d cache breakpoints; the API takes 1 to 4", n)
			}
		})
	}
}

func TestTranslate_SameRequestSameBytes(t *testing.T) {
	for _, tc := range goldenCases {
		first, err := translateRequest([]byte(tc.body), "", 4096)
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < 20; i++ {
			again, err := translateRequest([]byte(tc.body), "", 4096)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(first.body, again.body) {
				t.Fatalf("%s: run %d differs:\n%s\n%s", tc.name, i, first.body, again.body)
			}
		}
	}
}

func TestTranslate_KeepsClientBytes(t *testing.T) {
	tr, err := translateRequest([]byte(goldenCases[3].body), "", 4096) // tool_loop
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`"input_schema":{ "type":"object", "required":["city"], "properties":{"city":{"type":"string"}} }`,
		`"input":{ "city" : "Paris" }`,
		`"description":"Weather now."`,
	} {
		if !bytes.Contains(tr.body, []byte(want)) {
			t.Errorf("body lacks %s:\n%s", want, tr.body)
		}
	}
	tr, err = translateRequest([]byte(goldenCases[0].body), "", 4096) // plain
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(tr.body, []byte(`"text":"caf\u00e9?"`)) || !bytes.Contains(tr.body, []byte(`["\n\nHuman:"]`)) {
		t.Errorf("escapes in client strings were re-encoded:\n%s", tr.body)
	}
}

// A turn that extends the last one must leave every byte before the new content as it
// was, apart from where the breakpoints sit, or the cache prefix would move.
func TestTranslate_NextTurnExtendsThePrefix(t *testing.T) {
	turn1 := `{"model":"m","messages":[{"role":"system","content":"Use tools."},{"role":"user","content":"weather in Paris?"}],"tools":[` + weatherTool + `]}`
	turn2 := `{"model":"m","messages":[{"role":"system","content":"Use tools."},{"role":"user","content":"weather in Paris?"},` +
		`{"role":"assistant","content":null,"tool_calls":[{"id":"toolu_1","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Paris\"}"}}]},` +
		`{"role":"tool","tool_call_id":"toolu_1","content":"18C"}],"tools":[` + weatherTool + `]}`
	a, err := translateRequest([]byte(turn1), "", 4096)
	if err != nil {
		t.Fatal(err)
	}
	b, err := translateRequest([]byte(turn2), "", 4096)
	if err != nil {
		t.Fatal(err)
	}
	// Turn 1's last block carries a breakpoint; turn 2 keeps one at exactly that place.
	end := bytes.LastIndex(a.body, []byte(`]}],"tools"`))
	if end < 0 || !bytes.HasPrefix(b.body, a.body[:end]) {
		t.Errorf("turn 2 does not start with turn 1's messages:\n%s\n%s", a.body, b.body)
	}
	if !bytes.Contains(b.body, []byte(`{"type":"text","text":"weather in Paris?","cache_control":{"type":"ephemeral"}}`)) {
		t.Errorf("turn 2 has no breakpoint where turn 1 ended:\n%s", b.body)
	}
	if n := breakpoints(t, b.body); n != 3 {
		t.Errorf("turn 2 has %d breakpoints, want 3 (system, previous end, end)", n)
	}
}

func TestTranslate_DefaultsAndModel(t *testing.T) {
	tr, err := translateRequest([]byte(`{"model":"alias","messages":[{"role":"user","content":"hi"}]}`), "claude-haiku-4-5", 321)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"model":"claude-haiku-4-5","max_tokens":321,"messages":[{"role":"user","content":[{"type":"text","text":"hi","cache_control":{"type":"ephemeral"}}]}]}`
	if diff := cmp.Diff(want, string(tr.body)); diff != "" {
		t.Errorf("body (-want +got):\n%s", diff)
	}
	if tr.strategy != "" {
		t.Errorf("strategy %q for a request without tools", tr.strategy)
	}
	tr, _ = translateRequest([]byte(goldenCases[2].body), "", 1)
	if tr.strategy != "remove" {
		t.Errorf("strategy %q for a request with tools, want remove", tr.strategy)
	}
	if tr.names != nil {
		t.Errorf("names mapped although all are valid")
	}
}

func TestTranslate_RejectsWhatItCannotSend(t *testing.T) {
	msgs := `"messages":[{"role":"user","content":"hi"}]`
	withTools := func(extra string) string {
		return `{"model":"m",` + msgs + `,"tools":[` + pingTool + `]` + extra + `}`
	}
	for _, tc := range []struct {
		name, body, param string
	}{
		{"not_json", `{"model":`, ""},
		{"no_model", `{` + msgs + `}`, "model"},
		{"no_messages", `{"model":"m","messages":[]}`, "messages"},
		{"only_system", `{"model":"m","messages":[{"role":"system","content":"s"}]}`, "messages"},
		{"n_above_one", `{"model":"m",` + msgs + `,"n":2}`, "n"},
		{"logprobs", `{"model":"m",` + msgs + `,"logprobs":true}`, "logprobs"},
		{"json_schema", `{"model":"m",` + msgs + `,"response_format":{"type":"json_schema","json_schema":{"name":"x","schema":{}}}}`, "response_format.type"},
		{"json_object", `{"model":"m",` + msgs + `,"response_format":{"type":"json_object"}}`, "response_format.type"},
		{"logit_bias", `{"model":"m",` + msgs + `,"logit_bias":{"50256":-100}}`, "logit_bias"},
		{"frequency_penalty", `{"model":"m",` + msgs + `,"frequency_penalty":0.5}`, "frequency_penalty"},
		{"reasoning_effort", `{"model":"m",` + msgs + `,"reasoning_effort":"high"}`, "reasoning_effort"},
		{"audio_modality", `{"model":"m",` + msgs + `,"modalities":["text","audio"]}`, "modalities"},
		{"functions", `{"model":"m",` + msgs + `,"functions":[{"name":"f"}]}`, "functions"},
		{"temperature_above_one", `{"model":"m",` + msgs + `,"temperature":1.5}`, "temperature"},
		{"temperature_string", `{"model":"m",` + msgs + `,"temperature":"hot"}`, "temperature"},
		{"max_tokens_zero", `{"model":"m",` + msgs + `,"max_tokens":0}`, "max_tokens"},
		{"stop_number", `{"model":"m",` + msgs + `,"stop":3}`, "stop"},
		{"user_number", `{"model":"m",` + msgs + `,"user":3}`, "user"},
		{"audio_part", `{"model":"m","messages":[{"role":"user","content":[{"type":"input_audio","input_audio":{"data":"AA","format":"wav"}}]}]}`, "messages[0].content[0].type"},
		{"image_in_assistant", `{"model":"m","messages":[{"role":"assistant","content":[{"type":"image_url","image_url":{"url":"https://x/y.png"}}]}]}`, "messages[0].content[0].type"},
		{"image_bmp", `{"model":"m","messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"data:image/bmp;base64,Qk0="}}]}]}`, "messages[0].content[0].image_url.url"},
		{"image_ftp", `{"model":"m","messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"ftp://x/y.png"}}]}]}`, "messages[0].content[0].image_url.url"},
		{"content_number", `{"model":"m","messages":[{"role":"user","content":5}]}`, "messages[0].content"},
		{"unknown_role", `{"model":"m","messages":[{"role":"robot","content":"x"}]}`, "messages[0].role"},
		{"bad_arguments", `{"model":"m","messages":[{"role":"user","content":"x"},{"role":"assistant","tool_calls":[{"id":"a","type":"function","function":{"name":"f","arguments":"{not json"}}]}]}`, "messages[1].tool_calls[0].function.arguments"},
		{"array_arguments", `{"model":"m","messages":[{"role":"assistant","tool_calls":[{"id":"a","type":"function","function":{"name":"f","arguments":"[1]"}}]}]}`, "messages[0].tool_calls[0].function.arguments"},
		{"call_without_id", `{"model":"m","messages":[{"role":"assistant","tool_calls":[{"type":"function","function":{"name":"f","arguments":"{}"}}]}]}`, "messages[0].tool_calls[0].id"},
		{"tool_without_call_id", `{"model":"m","messages":[{"role":"tool","content":"x"}]}`, "messages[0].tool_call_id"},
		{"custom_tool", `{"model":"m",` + msgs + `,"tools":[{"type":"custom","custom":{"name":"x"}}]}`, "tools[0].type"},
		{"parameters_array", `{"model":"m",` + msgs + `,"tools":[{"type":"function","function":{"name":"x","parameters":[]}}]}`, "tools[0].function.parameters"},
		{"colliding_names", `{"model":"m",` + msgs + `,"tools":[` + commitTool + `,{"type":"function","function":{"name":"` + nameRule.Wire("git.commit") + `"}}]}`, "tools"},
		{"required_without_tools", `{"model":"m",` + msgs + `,"tool_choice":"required"}`, "tool_choice"},
		{"unknown_choice", withTools(`,"tool_choice":"sometimes"`), "tool_choice"},
		{"named_unknown_tool", withTools(`,"tool_choice":{"type":"function","function":{"name":"nope"}}`), "tool_choice.function.name"},
		{"allowed_unknown_tool", withTools(`,"tool_choice":{"type":"allowed_tools","allowed_tools":{"mode":"auto","tools":[{"type":"function","function":{"name":"nope"}}]}}`), "tool_choice.allowed_tools.tools[0].function.name"},
		{"allowed_bad_mode", withTools(`,"tool_choice":{"type":"allowed_tools","allowed_tools":{"mode":"maybe","tools":[{"type":"function","function":{"name":"ping"}}]}}`), "tool_choice.allowed_tools.mode"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := translateRequest([]byte(tc.body), "", 4096)
			be := asError(t, err)
			if be.Status != http.StatusBadRequest || be.Param != tc.param || be.Message == "" {
				t.Errorf("got %d param %q (%s); want 400 param %q", be.Status, be.Param, be.Message, tc.param)
			}
		})
	}
}

func TestTranslate_HarmlessFieldsAreAccepted(t *testing.T) {
	body := `{"model":"m","messages":[{"role":"user","content":"hi","name":"ann"}],"seed":1,"presence_penalty":0,"frequency_penalty":0,"n":1,` +
		`"logprobs":false,"logit_bias":{},"response_format":{"type":"text"},"modalities":["text"],"store":false,"metadata":{"thread_id":"t1"},` +
		`"prompt_cache_key":"k","service_tier":"auto","stream_options":{"include_usage":true}}`
	tr, err := translateRequest([]byte(body), "", 10)
	if err != nil {
		t.Fatal(err)
	}
	for _, leak := range []string{"seed", "thread_id", "prompt_cache_key", "service_tier", "ann"} {
		if strings.Contains(string(tr.body), leak) {
			t.Errorf("%s reached Anthropic: %s", leak, tr.body)
		}
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
			body := `{"model":"m","messages":[{"role":"user","content":"hi"}],"tools":[` + pingTool + `],"tool_choice":` + tc.choice + `}`
			_, err := translateRequest([]byte(body), "", 4096)
			be := asError(t, err)
			if be.Status != http.StatusBadRequest || be.Param != tc.param || be.Message != tc.message {
				t.Errorf("got %d param %q message %q; want 400 %q %q", be.Status, be.Param, be.Message, tc.param, tc.message)
			}
		})
	}
}

// top_k (the Messages door's, an extension of the chat body) reaches Anthropic as sent,
// after top_p; a negative one is a 400 naming it.
func TestTranslate_TopK(t *testing.T) {
	tr, err := translateRequest([]byte(`{"model":"m","messages":[{"role":"user","content":"hi"}],"top_p":0.9,"top_k":40}`), "", 64)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(tr.body, []byte(`,"top_p":0.9,"top_k":40`)) {
		t.Errorf("top_k not sent: %s", tr.body)
	}
	_, err = translateRequest([]byte(`{"model":"m","messages":[{"role":"user","content":"hi"}],"top_k":-1}`), "", 64)
	var be *backends.Error
	if !errors.As(err, &be) || be.Param != "top_k" {
		t.Errorf("negative top_k: %v", err)
	}
}
