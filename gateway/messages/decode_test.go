package messages

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/maskgate/maskgate/backends/oai"
	"github.com/maskgate/maskgate/gateway/door"
)

// req builds a request body around messages (a JSON array) and extra top-level members.
func req(messages string, extra ...string) string {
	b := `{"model":"claude-x","max_tokens":100`
	for _, e := range extra {
		b += "," + e
	}
	return b + `,"messages":` + messages + `}`
}

func messagesOf(r *Request) []string {
	out := make([]string, len(r.Messages))
	for i, m := range r.Messages {
		out[i] = string(m)
	}
	return out
}

func mustDecode(t *testing.T, body string, opt Options) *Request {
	t.Helper()
	r, err := Decode([]byte(body), opt)
	if err != nil {
		t.Fatalf("Decode: %+v", *err)
	}
	checkChatBody(t, r)
	return r
}

// checkChatBody checks that the chat body is one the gateway's own chat parser accepts.
func checkChatBody(t testing.TB, r *Request) {
	t.Helper()
	body := r.ChatBody()
	if !json.Valid(body) {
		t.Fatalf("ChatBody is not valid JSON: %s", body)
	}
	if _, err := oai.ParseEnvelope(body); err != nil {
		t.Fatalf("ChatBody is not a chat request (%v): %s", err, body)
	}
	for i, m := range r.Messages {
		var msg oai.Message
		if err := json.Unmarshal(m, &msg); err != nil {
			t.Fatalf("message %d does not decode as a chat message (%v): %s", i, err, m)
		}
	}
}

func TestDecodeMessages(t *testing.T) {
	cases := []struct {
		name string
		body string
		opt  Options
		want []string
		// check, when set, looks at the rest of the request.
		check func(t *testing.T, r *Request)
	}{
		{
			name: "string system and user",
			body: req(`[{"role":"user","content":"hi"}]`, `"system":"Be brief."`),
			want: []string{`{"role":"system","content":"Be brief."}`, `{"role":"user","content":"hi"}`},
		},
		{
			name: "system blocks joined with a blank line, cache_control counted",
			body: req(`[{"role":"user","content":"hi"}]`,
				`"system":[{"type":"text","text":"You are \"X\"."},{"type":"text","text":"Rules\u00e9","cache_control":{"type":"ephemeral"}}]`),
			want: []string{`{"role":"system","content":"You are \"X\".\n\nRules\u00e9"}`, `{"role":"user","content":"hi"}`},
			check: func(t *testing.T, r *Request) {
				if r.CacheBreakpoints != 1 {
					t.Errorf("CacheBreakpoints = %d, want 1", r.CacheBreakpoints)
				}
			},
		},
		{
			name: "empty system left out",
			body: req(`[{"role":"user","content":"hi"}]`, `"system":[]`),
			want: []string{`{"role":"user","content":"hi"}`},
		},
		{
			name: "billing header's cch zeroed",
			body: req(`[{"role":"user","content":"hi"}]`,
				`"system":[{"type":"text","text":"x-anthropic-billing-header: cc_version=2.1.101.e51; cc_entrypoint=cli; cch=a5145;"},{"type":"text","text":"You are Claude Code. cch=abcde;"}]`),
			want: []string{`{"role":"system","content":"x-anthropic-billing-header: cc_version=2.1.101.e51; cc_entrypoint=cli; cch=00000;\n\nYou are Claude Code. cch=abcde;"}`,
				`{"role":"user","content":"hi"}`},
		},
		{
			name: "system role inside messages kept in place",
			body: req(`[{"role":"user","content":"a"},{"role":"system","content":"mid"},{"role":"system","content":[{"type":"text","text":"x"},{"type":"text","text":"y"}]},{"role":"user","content":"b"}]`),
			want: []string{`{"role":"user","content":"a"}`, `{"role":"system","content":"mid"}`,
				`{"role":"system","content":"x\n\ny"}`, `{"role":"user","content":"b"}`},
		},
		{
			name: "one text block is a string, several are parts",
			body: req(`[{"role":"user","content":[{"type":"text","text":"one"}]},{"role":"assistant","content":"ok"},{"role":"user","content":[{"type":"text","text":"<r>"},{"type":"text","text":"two","cache_control":{"type":"ephemeral","ttl":"5m"}}]}]`),
			want: []string{`{"role":"user","content":"one"}`, `{"role":"assistant","content":"ok"}`,
				`{"role":"user","content":[{"type":"text","text":"<r>"},{"type":"text","text":"two"}]}`},
			check: func(t *testing.T, r *Request) {
				if r.CacheBreakpoints != 1 {
					t.Errorf("CacheBreakpoints = %d, want 1", r.CacheBreakpoints)
				}
			},
		},
		{
			name: "images: base64 as a data URL, url as is",
			body: req(`[{"role":"user","content":[{"type":"image","source":{"type":"base64","media_type":"image/png","data":"iVBORw0KGgo="}},{"type":"image","source":{"type":"url","url":"https://example.com/a.jpg"}},{"type":"text","text":"what?"}]}]`),
			want: []string{`{"role":"user","content":[{"type":"image_url","image_url":{"url":"data:image/png;base64,iVBORw0KGgo="}},{"type":"image_url","image_url":{"url":"https://example.com/a.jpg"}},{"type":"text","text":"what?"}]}`},
		},
		{
			name: "documents with text and content sources",
			body: req(`[{"role":"user","content":[{"type":"document","source":{"type":"text","media_type":"text/plain","data":"doc body"},"title":"T"},{"type":"document","source":{"type":"content","content":[{"type":"text","text":"c1"},{"type":"text","text":"c2"}]}},{"type":"document","source":{"type":"content","content":"c3"}}]}]`),
			want: []string{`{"role":"user","content":[{"type":"text","text":"doc body"},{"type":"text","text":"c1"},{"type":"text","text":"c2"},{"type":"text","text":"c3"}]}`},
		},
		{
			name: "search result as one text",
			body: req(`[{"role":"user","content":[{"type":"search_result","source":"https://s/1","title":"Title","content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]}]}]`),
			want: []string{`{"role":"user","content":"Title\n\nhttps://s/1\n\na\n\nb"}`},
		},
		{
			name: "assistant tool_use: arguments are the input's bytes",
			body: req(`[{"role":"user","content":"go"},{"role":"assistant","content":[{"type":"text","text":"Running."},{"type":"tool_use","id":"toolu_01","name":"bash","input":{"cmd": "ls -l", "n":[1, 2.50]}}]}]`),
			want: []string{`{"role":"user","content":"go"}`,
				`{"role":"assistant","content":"Running.","tool_calls":[{"id":"toolu_01","type":"function","function":{"name":"bash","arguments":"{\"cmd\": \"ls -l\", \"n\":[1, 2.50]}"}}]}`},
		},
		{
			name: "assistant with only calls has null content; thinking becomes reasoning_content",
			body: req(`[{"role":"user","content":"go"},{"role":"assistant","content":[{"type":"thinking","thinking":"hmm","signature":"sig=="},{"type":"redacted_thinking","data":"opaque"},{"type":"tool_use","id":"a","name":"f","input":{}},{"type":"tool_use","id":"b","name":"g","input":{"x":"<&>"}}]}]`),
			want: []string{`{"role":"user","content":"go"}`,
				`{"role":"assistant","content":null,"tool_calls":[{"id":"a","type":"function","function":{"name":"f","arguments":"{}"}},{"id":"b","type":"function","function":{"name":"g","arguments":"{\"x\":\"<&>\"}"}}],"reasoning_content":"hmm"}`},
			check: func(t *testing.T, r *Request) {
				if r.DroppedBlocks != 0 {
					t.Errorf("DroppedBlocks = %d, want 0 (redacted_thinking is not a server block)", r.DroppedBlocks)
				}
			},
		},
		{
			name: "assistant with only thinking, several text blocks",
			body: req(`[{"role":"user","content":"go"},{"role":"assistant","content":[{"type":"thinking","thinking":"a","signature":""},{"type":"thinking","thinking":"b","signature":""}]},{"role":"assistant","content":[{"type":"text","text":"x"},{"type":"text","text":"y"}]}]`),
			want: []string{`{"role":"user","content":"go"}`,
				`{"role":"assistant","content":"","reasoning_content":"a\n\nb"}`,
				`{"role":"assistant","content":[{"type":"text","text":"x"},{"type":"text","text":"y"}]}`},
		},
		{
			name: "tool results: one tool message each, before the rest of the user message",
			body: req(`[{"role":"user","content":"go"},{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"f","input":{}},{"type":"tool_use","id":"t2","name":"f","input":{}},{"type":"tool_use","id":"t3","name":"f","input":{}},{"type":"tool_use","id":"t4","name":"f","input":{}}]},` +
				`{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"plain"},{"type":"text","text":"and then"},{"type":"tool_result","tool_use_id":"t2","content":[{"type":"text","text":"p1"},{"type":"image","source":{"type":"base64","media_type":"image/gif","data":"R0lG"}}]},{"type":"tool_result","tool_use_id":"t3","is_error":true,"content":"boom"},{"type":"tool_result","tool_use_id":"t4","cache_control":{"type":"ephemeral"}}]}]`),
			want: []string{`{"role":"user","content":"go"}`,
				`{"role":"assistant","content":null,"tool_calls":[{"id":"t1","type":"function","function":{"name":"f","arguments":"{}"}},{"id":"t2","type":"function","function":{"name":"f","arguments":"{}"}},{"id":"t3","type":"function","function":{"name":"f","arguments":"{}"}},{"id":"t4","type":"function","function":{"name":"f","arguments":"{}"}}]}`,
				`{"role":"tool","tool_call_id":"t1","content":"plain"}`,
				`{"role":"tool","tool_call_id":"t2","content":[{"type":"text","text":"p1"},{"type":"image_url","image_url":{"url":"data:image/gif;base64,R0lG"}}]}`,
				`{"role":"tool","tool_call_id":"t3","content":"Error: boom"}`,
				`{"role":"tool","tool_call_id":"t4","content":""}`,
				`{"role":"user","content":"and then"}`},
			check: func(t *testing.T, r *Request) {
				if r.CacheBreakpoints != 1 {
					t.Errorf("CacheBreakpoints = %d, want 1", r.CacheBreakpoints)
				}
			},
		},
		{
			name: "tool result content: tool_reference, error with parts, text blocks",
			body: req(`[{"role":"user","content":[{"type":"tool_result","tool_use_id":"s1","content":[{"type":"tool_reference","tool_name":"git_commit"},{"type":"tool_reference","tool_name":"git_push","cache_control":{"type":"ephemeral"}}]},{"type":"tool_result","tool_use_id":"s2","is_error":true,"content":[{"type":"image","source":{"type":"url","url":"https://i/x.png"}}]},{"type":"tool_result","tool_use_id":"s3","is_error":true,"content":[]},{"type":"tool_result","tool_use_id":"s4","is_error":false,"content":[{"type":"text","text":"only"}]}]}]`),
			want: []string{
				`{"role":"tool","tool_call_id":"s1","content":[{"type":"text","text":"Tool loaded: git_commit"},{"type":"text","text":"Tool loaded: git_push"}]}`,
				`{"role":"tool","tool_call_id":"s2","content":[{"type":"text","text":"Error:"},{"type":"image_url","image_url":{"url":"https://i/x.png"}}]}`,
				`{"role":"tool","tool_call_id":"s3","content":"Error"}`,
				`{"role":"tool","tool_call_id":"s4","content":"only"}`},
			check: func(t *testing.T, r *Request) {
				if want := []string{"git_commit", "git_push"}; !reflect.DeepEqual(r.Referenced, want) {
					t.Errorf("Referenced = %q, want %q", r.Referenced, want)
				}
				if r.CacheBreakpoints != 1 {
					t.Errorf("CacheBreakpoints = %d, want 1", r.CacheBreakpoints)
				}
			},
		},
		{
			name: "server tool blocks dropped",
			body: req(`[{"role":"user","content":"search"},{"role":"assistant","content":[{"type":"server_tool_use","id":"srvtoolu_1","name":"web_search","input":{"query":"q"}},{"type":"web_search_tool_result","tool_use_id":"srvtoolu_1","content":[]},{"type":"text","text":"Found."}]},{"role":"assistant","content":[{"type":"code_execution_tool_result","tool_use_id":"x","content":{}}]}]`),
			want: []string{`{"role":"user","content":"search"}`, `{"role":"assistant","content":"Found."}`},
			check: func(t *testing.T, r *Request) {
				if r.DroppedBlocks != 3 {
					t.Errorf("DroppedBlocks = %d, want 3", r.DroppedBlocks)
				}
			},
		},
		{
			name: "mid-conversation system block",
			body: req(`[{"role":"user","content":[{"type":"text","text":"before"},{"type":"mid_conv_system","content":[{"type":"text","text":"now terse"}]},{"type":"text","text":"after"}]}]`),
			want: []string{`{"role":"user","content":"before"}`, `{"role":"system","content":"now terse"}`, `{"role":"user","content":"after"}`},
		},
		{
			name: "escapes and unicode kept byte for byte",
			body: req(`[{"role":"user","content":"tab\tnl\n\u2028 \ud83d\ude00 \/"}]`),
			want: []string{`{"role":"user","content":"tab\tnl\n\u2028 \ud83d\ude00 \/"}`},
		},
		{
			name: "top-level cache_control counted",
			body: req(`[{"role":"user","content":"hi"}]`, `"cache_control":{"type":"ephemeral"}`),
			want: []string{`{"role":"user","content":"hi"}`},
			check: func(t *testing.T, r *Request) {
				if r.CacheBreakpoints != 1 {
					t.Errorf("CacheBreakpoints = %d, want 1", r.CacheBreakpoints)
				}
			},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := mustDecode(t, c.body, c.opt)
			if got := messagesOf(r); !reflect.DeepEqual(got, c.want) {
				t.Errorf("messages:\n got  %s\n want %s", strings.Join(got, "\n      "), strings.Join(c.want, "\n      "))
			}
			if c.check != nil {
				c.check(t, r)
			}
		})
	}
}

func TestDecodeTools(t *testing.T) {
	tools := `"tools":[` +
		`{"name":"get_weather","description":"Weather.","input_schema":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}},` +
		`{"type":"custom","name":"lookup","input_schema":{"type":"object"},"strict":true,"defer_loading":true,"cache_control":{"type":"ephemeral"}},` +
		`{"type":"web_search_20250305","name":"web_search","max_uses":5},` +
		`{"type":"bash_20250124","name":"bash"},` +
		`{"type":"text_editor_20250728","name":"str_replace_based_edit_tool"}]`
	wantTools := `[{"type":"function","function":{"name":"get_weather","description":"Weather.","parameters":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}}},` +
		`{"type":"function","function":{"name":"lookup","parameters":{"type":"object"},"strict":true}}]`
	one := `[{"role":"user","content":"hi"}]`

	r := mustDecode(t, req(one, tools), Options{})
	if string(r.Tools) != wantTools {
		t.Errorf("tools:\n got  %s\n want %s", r.Tools, wantTools)
	}
	if want := []string{"web_search_20250305", "bash_20250124", "text_editor_20250728"}; !reflect.DeepEqual(r.Dropped, want) {
		t.Errorf("Dropped = %q, want %q", r.Dropped, want)
	}
	if want := []string{"lookup"}; !reflect.DeepEqual(r.Deferred, want) {
		t.Errorf("Deferred = %q, want %q", r.Deferred, want)
	}
	if r.CacheBreakpoints != 1 || r.ToolChoice != nil {
		t.Errorf("CacheBreakpoints = %d, ToolChoice = %s; want 1, nil", r.CacheBreakpoints, r.ToolChoice)
	}

	choices := []struct {
		choice   string
		want     string
		parallel bool // parallel_tool_calls:false expected
	}{
		{`{"type":"auto"}`, `"auto"`, false},
		{`{"type":"any"}`, `"required"`, false},
		{`{"type":"none"}`, `"none"`, false},
		{`{"type":"tool","name":"get_weather"}`, `{"type":"function","function":{"name":"get_weather"}}`, false},
		{`{"type":"auto","disable_parallel_tool_use":true}`, `"auto"`, true},
		{`{"type":"any","disable_parallel_tool_use":false}`, `"required"`, false},
	}
	for _, c := range choices {
		r := mustDecode(t, req(one, tools, `"tool_choice":`+c.choice), Options{})
		if string(r.ToolChoice) != c.want {
			t.Errorf("tool_choice %s → %s, want %s", c.choice, r.ToolChoice, c.want)
		}
		body := string(r.ChatBody())
		if got := strings.Contains(body, `"parallel_tool_calls":false`); got != c.parallel {
			t.Errorf("tool_choice %s: parallel_tool_calls false in body = %v, want %v: %s", c.choice, got, c.parallel, body)
		}
	}

	// With no custom tools left, auto and none are left out.
	r = mustDecode(t, req(one, `"tools":[{"type":"web_search_20250305","name":"web_search"}]`, `"tool_choice":{"type":"auto"}`), Options{})
	if r.Tools != nil || r.ToolChoice != nil {
		t.Errorf("no custom tools: Tools = %s, ToolChoice = %s; want nil", r.Tools, r.ToolChoice)
	}
	if body := string(r.ChatBody()); strings.Contains(body, "tool") {
		t.Errorf("no custom tools: body mentions tools: %s", body)
	}
}

// TestInputSchemaBytes is the golden check that a tool's input_schema reaches the chat
// body byte for byte: spacing, key order, escapes, number spellings.
func TestInputSchemaBytes(t *testing.T) {
	schema := "{ \"type\" : \"object\",\n\t\"properties\": {\"z\": {\"type\":\"number\", \"maximum\": 1.0e2},  \"a\":{\"type\":\"string\",\"description\":\"caf\\u00e9 \\\"q\\\" <b>\"}},\n \"required\" : [\"z\"] , \"additionalProperties\":false }"
	body := `{"model":"m","max_tokens":5,"tools":[{"name":"t","input_schema":` + schema + `}],"messages":[{"role":"user","content":"x"}]}`
	r := mustDecode(t, body, Options{})
	chat := r.ChatBody()
	var parsed struct {
		Tools []struct {
			Function struct {
				Parameters json.RawMessage `json:"parameters"`
			} `json:"function"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(chat, &parsed); err != nil {
		t.Fatal(err)
	}
	// json.RawMessage keeps the value's bytes, so this compares the exact span.
	if len(parsed.Tools) != 1 || string(parsed.Tools[0].Function.Parameters) != schema {
		t.Fatalf("parameters changed:\n got  %q\n want %q", parsed.Tools[0].Function.Parameters, schema)
	}
	if !bytes.Contains(chat, []byte(`"parameters":`+schema+`}}]`)) {
		t.Errorf("schema not copied verbatim into %s", chat)
	}
}

func TestChatBody(t *testing.T) {
	body := `{"model":"claude-sonnet-4-5","max_tokens":1024,"stream":true,"temperature":0.5,"top_p":0.9,"top_k":40,` +
		`"stop_sequences":["\n\nHuman:","END"],"metadata":{"user_id":"user_abc_session_1"},"thinking":{"type":"enabled","budget_tokens":2048},` +
		`"system":"S","messages":[{"role":"user","content":"hi"}],` +
		`"tools":[{"name":"f","input_schema":{"type":"object"}}],"tool_choice":{"type":"any","disable_parallel_tool_use":true},"service_tier":"auto"}`
	r := mustDecode(t, body, Options{})
	want := `{"model":"claude-sonnet-4-5","messages":[{"role":"system","content":"S"},{"role":"user","content":"hi"}],` +
		`"tools":[{"type":"function","function":{"name":"f","parameters":{"type":"object"}}}],"tool_choice":"required","parallel_tool_calls":false,` +
		`"max_tokens":1024,"temperature":0.5,"top_p":0.9,"top_k":40,"stop":["\n\nHuman:","END"],"user":"user_abc_session_1",` +
		`"stream":true,"stream_options":{"include_usage":true}}`
	if got := string(r.ChatBody()); got != want {
		t.Errorf("ChatBody:\n got  %s\n want %s", got, want)
	}
	if r.Model != "claude-sonnet-4-5" || !r.Stream || r.MaxTokens != 1024 || r.UserID != "user_abc_session_1" {
		t.Errorf("fields: %+v", r)
	}
	if string(r.TopK) != "40" || string(r.Thinking) != `{"type":"enabled","budget_tokens":2048}` {
		t.Errorf("TopK = %s, Thinking = %s", r.TopK, r.Thinking)
	}

	// Not streaming: no stream members; the lead may change the model before writing.
	r = mustDecode(t, req(`[{"role":"user","content":"x"}]`, `"stream":false`), Options{})
	r.Model = "local/qwen"
	if got, want := string(r.ChatBody()), `{"model":"local/qwen","messages":[{"role":"user","content":"x"}],"max_tokens":100}`; got != want {
		t.Errorf("ChatBody:\n got  %s\n want %s", got, want)
	}

	// output_config.format → response_format, the schema's bytes as sent.
	r = mustDecode(t, req(`[{"role":"user","content":"x"}]`, `"output_config":{"effort":"low","format":{"type":"json_schema","schema":{"type":"object", "properties":{}}}}`), Options{})
	if got, want := string(r.ResponseFormat), `{"type":"json_schema","json_schema":{"name":"output","schema":{"type":"object", "properties":{}}}}`; got != want {
		t.Errorf("ResponseFormat = %s, want %s", got, want)
	}
}

func TestDecodeCount(t *testing.T) {
	body := `{"model":"m","system":[{"type":"text","text":"S"}],"messages":[{"role":"user","content":"hi"}],"tools":[{"name":"f","input_schema":{"type":"object"}}],"stream":true}`
	if _, err := Decode([]byte(body), Options{}); err == nil || err.Param != "max_tokens" {
		t.Fatalf("Decode without max_tokens: %+v, want a max_tokens error", err)
	}
	chat, err := CountBody([]byte(body), Options{})
	if err != nil {
		t.Fatalf("CountBody: %+v", *err)
	}
	want := `{"model":"m","messages":[{"role":"system","content":"S"},{"role":"user","content":"hi"}],"tools":[{"type":"function","function":{"name":"f","parameters":{"type":"object"}}}]}`
	if string(chat) != want {
		t.Errorf("CountBody:\n got  %s\n want %s", chat, want)
	}
	if got := string(CountResponse(1234)); got != `{"input_tokens":1234}` {
		t.Errorf("CountResponse = %s", got)
	}
	if _, err := CountBody([]byte(`{"model":"m","messages":[{"role":"user","content":[{"type":"bogus"}]}]}`), Options{}); err == nil || err.Param != "messages.0.content.0.type" {
		t.Errorf("CountBody with a bad block: %+v", err)
	}
}

func TestDecodeErrors(t *testing.T) {
	cases := []struct {
		name  string
		body  string
		opt   Options
		param string
		msg   string // a substring of the message
	}{
		{"empty body", ``, Options{}, "", "empty"},
		{"not JSON", `{"model":`, Options{}, "", "not valid JSON"},
		{"not an object", `[1]`, Options{}, "", "JSON object"},
		{"no model", `{"max_tokens":1,"messages":[{"role":"user","content":"x"}]}`, Options{}, "model", "required"},
		{"model not a string", `{"model":5,"max_tokens":1,"messages":[{"role":"user","content":"x"}]}`, Options{}, "model", "a number"},
		{"no max_tokens", `{"model":"m","messages":[{"role":"user","content":"x"}]}`, Options{}, "max_tokens", "required"},
		{"max_tokens zero", `{"model":"m","max_tokens":0,"messages":[{"role":"user","content":"x"}]}`, Options{}, "max_tokens", "at least 1"},
		{"max_tokens fraction", `{"model":"m","max_tokens":1.5,"messages":[{"role":"user","content":"x"}]}`, Options{}, "max_tokens", "integer"},
		{"no messages", `{"model":"m","max_tokens":1}`, Options{}, "messages", "required"},
		{"empty messages", req(`[]`), Options{}, "messages", "at least one"},
		{"messages not an array", req(`{}`), Options{}, "messages", "an object"},
		{"stream not a boolean", req(`[{"role":"user","content":"x"}]`, `"stream":"yes"`), Options{}, "stream", "boolean"},
		{"temperature not a number", req(`[{"role":"user","content":"x"}]`, `"temperature":"hot"`), Options{}, "temperature", "number"},
		{"top_k not an integer", req(`[{"role":"user","content":"x"}]`, `"top_k":2.5`), Options{}, "top_k", "non-negative integer"},
		{"stop sequence not a string", req(`[{"role":"user","content":"x"}]`, `"stop_sequences":["a",1]`), Options{}, "stop_sequences.1", "string"},
		{"metadata user_id not a string", req(`[{"role":"user","content":"x"}]`, `"metadata":{"user_id":1}`), Options{}, "metadata.user_id", "string"},
		{"thinking without type", req(`[{"role":"user","content":"x"}]`, `"thinking":{}`), Options{}, "thinking.type", "required"},
		{"output format not json_schema", req(`[{"role":"user","content":"x"}]`, `"output_config":{"format":{"type":"xml"}}`), Options{}, "output_config.format.type", "json_schema"},
		{"bad role", req(`[{"role":"user","content":"x"},{"role":"tool","content":"y"}]`), Options{}, "messages.1.role", `"tool"`},
		{"no role", req(`[{"content":"x"}]`), Options{}, "messages.0.role", "required"},
		{"no content", req(`[{"role":"user"}]`), Options{}, "messages.0.content", "required"},
		{"content a number", req(`[{"role":"user","content":3}]`), Options{}, "messages.0.content", "a number"},
		{"message not an object", req(`["hi"]`), Options{}, "messages.0", "object"},
		{"block not an object", req(`[{"role":"user","content":["x"]}]`), Options{}, "messages.0.content.0", "object"},
		{"block without type", req(`[{"role":"user","content":[{"text":"x"}]}]`), Options{}, "messages.0.content.0.type", "required"},
		{"unknown block type", req(`[{"role":"user","content":"a"},{"role":"assistant","content":"b"},{"role":"user","content":"c"},{"role":"user","content":[{"type":"text","text":"x"},{"type":"hologram"}]}]`), Options{}, "messages.3.content.1.type", `"hologram"`},
		{"unknown assistant block", req(`[{"role":"assistant","content":[{"type":"image","source":{"type":"url","url":"u"}}]}]`), Options{}, "messages.0.content.0.type", "assistant"},
		{"text not a string", req(`[{"role":"user","content":[{"type":"text","text":5}]}]`), Options{}, "messages.0.content.0.text", "string"},
		{"image from a file", req(`[{"role":"user","content":[{"type":"image","source":{"type":"file","file_id":"f"}}]}]`), Options{}, "messages.0.content.0.source.type", "Files API"},
		{"image without data", req(`[{"role":"user","content":[{"type":"image","source":{"type":"base64","media_type":"image/png"}}]}]`), Options{}, "messages.0.content.0.source.data", "required"},
		{"base64 document not a pdf", req(`[{"role":"user","content":[{"type":"document","source":{"type":"base64","media_type":"text/html","data":"PGI+"}}]}]`), Options{}, "messages.0.content.0.source.media_type", "application/pdf"},
		{"tool_use without input", req(`[{"role":"assistant","content":[{"type":"tool_use","id":"a","name":"f"}]}]`), Options{}, "messages.0.content.0.input", "object"},
		{"tool_use input not an object", req(`[{"role":"assistant","content":[{"type":"tool_use","id":"a","name":"f","input":"{}"}]}]`), Options{}, "messages.0.content.0.input", "object"},
		{"tool_use without id", req(`[{"role":"assistant","content":[{"type":"tool_use","name":"f","input":{}}]}]`), Options{}, "messages.0.content.0.id", "required"},
		{"tool_use in a user message", req(`[{"role":"user","content":[{"type":"tool_use","id":"a","name":"f","input":{}}]}]`), Options{}, "messages.0.content.0.type", "assistant"},
		{"thinking in a user message", req(`[{"role":"user","content":[{"type":"thinking","thinking":"x"}]}]`), Options{}, "messages.0.content.0.type", "assistant"},
		{"thinking without text", req(`[{"role":"assistant","content":[{"type":"thinking","signature":"s"}]}]`), Options{}, "messages.0.content.0.thinking", "required"},
		{"tool_result in an assistant message", req(`[{"role":"assistant","content":[{"type":"tool_result","tool_use_id":"a"}]}]`), Options{}, "messages.0.content.0.type", "assistant"},
		{"tool_result without id", req(`[{"role":"user","content":[{"type":"tool_result","content":"x"}]}]`), Options{}, "messages.0.content.0.tool_use_id", "required"},
		{"tool_result is_error not a boolean", req(`[{"role":"user","content":[{"type":"tool_result","tool_use_id":"a","is_error":"yes"}]}]`), Options{}, "messages.0.content.0.is_error", "boolean"},
		{"tool_result content a number", req(`[{"role":"user","content":[{"type":"tool_result","tool_use_id":"a","content":1}]}]`), Options{}, "messages.0.content.0.content", "a number"},
		{"unknown block in a tool result", req(`[{"role":"user","content":[{"type":"tool_result","tool_use_id":"a","content":[{"type":"text","text":"ok"},{"type":"video"}]}]}]`), Options{}, "messages.0.content.0.content.1.type", "tool_result"},
		{"tool_reference outside a result", req(`[{"role":"user","content":[{"type":"tool_reference","tool_name":"x"}]}]`), Options{}, "messages.0.content.0.type", "tool_result"},
		{"tool_reference without a name", req(`[{"role":"user","content":[{"type":"tool_result","tool_use_id":"a","content":[{"type":"tool_reference"}]}]}]`), Options{}, "messages.0.content.0.content.0.tool_name", "required"},
		{"system block not text", req(`[{"role":"user","content":"x"}]`, `"system":[{"type":"image","source":{}}]`), Options{}, "system.0.type", "text"},
		{"system a number", req(`[{"role":"user","content":"x"}]`, `"system":1`), Options{}, "system", "a number"},
		{"server block refused", req(`[{"role":"assistant","content":[{"type":"text","text":"a"},{"type":"server_tool_use","id":"s","name":"web_search","input":{}}]}]`), Options{Hosted: HostedRefuse}, "messages.0.content.1.type", "server tools"},
		{"server result refused", req(`[{"role":"assistant","content":[{"type":"web_fetch_tool_result","tool_use_id":"s","content":{}}]}]`), Options{Hosted: HostedRefuse}, "messages.0.content.0.type", "server tools"},
		{"nothing left after dropping", req(`[{"role":"assistant","content":[{"type":"redacted_thinking","data":"x"},{"type":"server_tool_use","id":"s","name":"web_search","input":{}}]}]`), Options{}, "messages", "nothing is left"},
		{"tools not an array", req(`[{"role":"user","content":"x"}]`, `"tools":{}`), Options{}, "tools", "array"},
		{"tool without a name", req(`[{"role":"user","content":"x"}]`, `"tools":[{"input_schema":{"type":"object"}}]`), Options{}, "tools.0.name", "required"},
		{"tool without input_schema", req(`[{"role":"user","content":"x"}]`, `"tools":[{"name":"f"}]`), Options{}, "tools.0.input_schema", "required"},
		{"input_schema not an object", req(`[{"role":"user","content":"x"}]`, `"tools":[{"name":"f","input_schema":"object"}]`), Options{}, "tools.0.input_schema", "object"},
		{"duplicate tool names", req(`[{"role":"user","content":"x"}]`, `"tools":[{"name":"f","input_schema":{}},{"name":"f","input_schema":{}}]`), Options{}, "tools.1.name", "unique"},
		{"description not a string", req(`[{"role":"user","content":"x"}]`, `"tools":[{"name":"f","description":1,"input_schema":{}}]`), Options{}, "tools.0.description", "string"},
		{"server tool refused", req(`[{"role":"user","content":"x"}]`, `"tools":[{"name":"f","input_schema":{}},{"type":"code_execution_20250825","name":"code_execution"}]`), Options{Hosted: HostedRefuse}, "tools.1.type", "code_execution_20250825"},
		{"tool_choice names an unknown tool", req(`[{"role":"user","content":"x"}]`, `"tools":[{"name":"f","input_schema":{}}]`, `"tool_choice":{"type":"tool","name":"g"}`), Options{}, "tool_choice.name", "not in tools"},
		{"tool_choice names a dropped server tool", req(`[{"role":"user","content":"x"}]`, `"tools":[{"name":"f","input_schema":{}},{"type":"web_search_20250305","name":"web_search"}]`, `"tool_choice":{"type":"tool","name":"web_search"}`), Options{}, "tool_choice.name", "server tool"},
		{"tool_choice without a name", req(`[{"role":"user","content":"x"}]`, `"tools":[{"name":"f","input_schema":{}}]`, `"tool_choice":{"type":"tool"}`), Options{}, "tool_choice.name", "required"},
		{"tool_choice any with no tools", req(`[{"role":"user","content":"x"}]`, `"tool_choice":{"type":"any"}`), Options{}, "tool_choice", "no tools"},
		{"tool_choice unknown type", req(`[{"role":"user","content":"x"}]`, `"tool_choice":{"type":"sometimes"}`), Options{}, "tool_choice.type", "sometimes"},
		{"search result with an image", req(`[{"role":"user","content":[{"type":"search_result","source":"s","title":"t","content":[{"type":"image","source":{}}]}]}]`), Options{}, "messages.0.content.0.content.0.type", "text blocks only"},
		{"mcp servers refused", req(`[{"role":"user","content":"x"}]`, `"mcp_servers":[{"type":"url","url":"https://m","name":"m"}]`), Options{Hosted: HostedRefuse}, "mcp_servers", "MCP"},
		{"tool_choice a string", req(`[{"role":"user","content":"x"}]`, `"tool_choice":"auto"`), Options{}, "tool_choice", "a string"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r, err := Decode([]byte(c.body), c.opt)
			if err == nil {
				t.Fatalf("Decode succeeded: %s", r.ChatBody())
			}
			want := door.Error{Status: 400, Type: "invalid_request_error", Param: c.param}
			if err.Status != want.Status || err.Type != want.Type || err.Param != want.Param {
				t.Errorf("error = {%d %s %q}, want {%d %s %q}: %s", err.Status, err.Type, err.Param, want.Status, want.Type, want.Param, err.Message)
			}
			if !strings.Contains(strings.ToLower(err.Message), strings.ToLower(c.msg)) {
				t.Errorf("message %q lacks %q", err.Message, c.msg)
			}
			if c.param != "" && !strings.HasPrefix(err.Message, c.param+": ") {
				t.Errorf("message %q does not start with the path %q", err.Message, c.param)
			}
		})
	}
}

func TestDecodeFlags(t *testing.T) {
	r := mustDecode(t, req(`[{"role":"user","content":"Pick one: (A) or (B)?"},{"role":"assistant","content":"The answer is ("}]`,
		`"mcp_servers":[{"type":"url","url":"https://m","name":"m"}]`), Options{})
	if !r.Prefill {
		t.Error("Prefill = false for a conversation ending with an assistant message")
	}
	if want := []string{"mcp_servers"}; !reflect.DeepEqual(r.Dropped, want) {
		t.Errorf("Dropped = %q, want %q", r.Dropped, want)
	}
	r = mustDecode(t, req(`[{"role":"assistant","content":"a"},{"role":"user","content":"b"}]`, `"mcp_servers":[]`), Options{Hosted: HostedRefuse})
	if r.Prefill || r.Dropped != nil {
		t.Errorf("Prefill = %v, Dropped = %q; want false, none", r.Prefill, r.Dropped)
	}
}
