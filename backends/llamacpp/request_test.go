package llamacpp

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/maskgate/maskgate/backends"
	"github.com/maskgate/maskgate/backends/toolcall"
)

// The golden bodies below were reviewed against llama-server's documentation
// (ggml-org/llama.cpp, tools/server/README.md): "POST /apply-template" (messages in the
// /v1/chat/completions format → {"prompt"}) and "POST /completion" (prompt, cache_prompt,
// n_predict, temperature, top_k, top_p, seed, stop as an array of strings, stream,
// grammar), with the lazy-grammar members the same README documents for /completion
// (grammar_lazy, grammar_triggers with type 1 = WORD, preserved_tokens).

// Note the client's spacing inside messages and tools: it must reach /apply-template as is.
const twoTools = `[ {"type":"function","function":{"name":"get_weather","description":"Weather now.","parameters":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}}},
  {"type":"function","function":{"name":"search","parameters":{"type":"object","properties":{"q":{"type":"string"}}}}} ]`

var goldenCases = []struct {
	name    string
	body    string
	allowed []string
}{
	{"plain", `{"model":"qwen","messages":[{"role":"user","content":"hi"}],"max_tokens":64,"temperature":0.2,"top_p":0.9,"seed":7,"stop":"\n\n"}`, nil},
	{"tools_auto", `{"model":"qwen","messages":[ {"role":"user","content":"weather in Paris?"} ],"tools":` + twoTools + `}`, []string{"get_weather"}},
	{"tools_required", `{"model":"qwen","messages":[{"role":"user","content":"weather in Paris?"}],"tools":` + twoTools + `,"tool_choice":"required","temperature":0}`, nil},
	{"named_tool", `{"model":"qwen","messages":[{"role":"user","content":"find go docs"}],"tools":` + twoTools + `,"tool_choice":{"type":"function","function":{"name":"search"}}}`, nil},
	{"stream", `{"model":"qwen","messages":[{"role":"user","content":"hi"}],"tools":` + twoTools + `,"stream":true,"stream_options":{"include_usage":true},"max_completion_tokens":128,"max_tokens":5,"top_k":20,"stop":["</s>","User:"]}`, []string{"get_weather", "search"}},
	{"tool_choice_none", `{"model":"qwen","messages":[{"role":"user","content":"hi"}],"tools":` + twoTools + `,"tool_choice":"none"}`, nil},
}

func TestGolden_RequestBodies(t *testing.T) {
	for _, tc := range goldenCases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFake(t, "Hello")
			b := newTestBackend(t, f.URL, fakeGrammar)
			var env struct {
				Stream bool `json:"stream"`
			}
			json.Unmarshal([]byte(tc.body), &env)
			resp, err := b.ChatCompletion(background(t), &backends.Request{Body: []byte(tc.body), Model: "qwen", Stream: env.Stream, Allowed: tc.allowed})
			if err != nil {
				t.Fatal(err)
			}
			if resp.Stream != nil {
				for {
					if _, err := resp.Stream.Next(); err != nil {
						if !errors.Is(err, io.EOF) {
							t.Fatal(err)
						}
						break
					}
				}
				resp.Stream.Close()
			}
			golden(t, tc.name+".apply-template.json", f.last("/apply-template"))
			golden(t, tc.name+".completion.json", f.last("/completion"))
		})
	}
}

// TestTemplateBody_ClientBytesUnchanged holds the cache rule: the messages and tools reach
// /apply-template as the client's exact bytes, whatever the loaded set or tool_choice.
func TestTemplateBody_ClientBytesUnchanged(t *testing.T) {
	msgs := `[ {"role":"user",  "content":"hi \u00e9"} ]`
	base := `{"model":"qwen","messages":` + msgs + `,"tools":` + twoTools
	want := []byte(`{"messages":` + msgs + `,"tools":` + twoTools + `}`)
	for _, tail := range []string{`}`, `,"tool_choice":"required"}`, `,"tool_choice":"none","temperature":1}`} {
		got, err := templateBody([]byte(base+tail), toolcall.Hermes, true)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("tail %s: got %s", tail, got)
		}
	}
	f := newFake(t, "ok")
	b := newTestBackend(t, f.URL, fakeGrammar)
	for _, allowed := range [][]string{nil, {}, {"search"}, {"get_weather", "search"}} {
		if _, err := b.ChatCompletion(background(t), &backends.Request{Body: []byte(base + `}`), Allowed: allowed}); err != nil {
			t.Fatal(err)
		}
		if got := f.last("/apply-template"); !bytes.Equal(got, want) {
			t.Errorf("allowed %v: /apply-template got %s", allowed, got)
		}
	}
}

func TestParseRequest_ToolChoice(t *testing.T) {
	all := []string{"get_weather", "search"}
	tests := []struct {
		name         string
		choice       string
		allowed      []string
		wantCalls    bool
		wantAllowed  []string
		wantRequired bool
		wantErr      string // param of the 400
	}{
		{"absent is auto over all tools", ``, nil, true, all, false, ""},
		{"auto over Allowed", `"auto"`, []string{"search"}, true, []string{"search"}, false, ""},
		{"empty Allowed stays empty", `"auto"`, []string{}, true, []string{}, false, ""},
		{"none parses no calls", `"none"`, nil, false, nil, false, ""},
		{"required", `"required"`, nil, true, all, true, ""},
		{"named", `{"type":"function","function":{"name":"search"}}`, nil, true, []string{"search"}, true, ""},
		{"named but not loaded", `{"type":"function","function":{"name":"search"}}`, []string{"get_weather"}, false, nil, false, "tool_choice"},
		{"allowed_tools narrows in Allowed order", `{"type":"allowed_tools","allowed_tools":{"mode":"required","tools":[{"type":"function","function":{"name":"search"}},{"type":"function","function":{"name":"get_weather"}}]}}`, nil, true, all, true, ""},
		{"allowed_tools outside Allowed", `{"type":"allowed_tools","allowed_tools":{"mode":"auto","tools":[{"type":"function","function":{"name":"search"}}]}}`, []string{"get_weather"}, true, []string{}, false, ""},
		{"allowed_tools required of nothing", `{"type":"allowed_tools","allowed_tools":{"mode":"required","tools":[]}}`, nil, false, nil, false, "tool_choice"},
		{"unknown string", `"sometimes"`, nil, false, nil, false, "tool_choice"},
		{"unknown type", `{"type":"custom"}`, nil, false, nil, false, "tool_choice"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			body := `{"model":"m","messages":[],"tools":` + twoTools
			if tt.choice != "" {
				body += `,"tool_choice":` + tt.choice
			}
			p, err := parseRequest([]byte(body+`}`), tt.allowed)
			if tt.wantErr != "" {
				var be *backends.Error
				if !errors.As(err, &be) || be.Status != http.StatusBadRequest || be.Param != tt.wantErr {
					t.Fatalf("err = %v, want a 400 on %s", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if p.calls != tt.wantCalls || p.required != tt.wantRequired {
				t.Errorf("calls=%v required=%v, want %v %v", p.calls, p.required, tt.wantCalls, tt.wantRequired)
			}
			if diff := cmp.Diff(tt.wantAllowed, p.allowed); diff != "" {
				t.Errorf("allowed (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseRequest_RejectsWhatCompletionCannotDo(t *testing.T) {
	for _, body := range []string{
		`{"messages":[],"n":2}`,
		`{"messages":[],"stop":3}`,
		`[1]`,
	} {
		if _, err := parseRequest([]byte(body), nil); err == nil {
			t.Errorf("%s: no error", body)
		}
	}
}

func TestCompletionBody_GrammarMembersMergedAfterOwn(t *testing.T) {
	p := &params{}
	got, err := completionBody("P", p, false, json.RawMessage(` {"grammar":"root ::= x", "grammar_lazy":true} `))
	if err != nil {
		t.Fatal(err)
	}
	want := `{"prompt":"P","cache_prompt":true,"stream":false,"grammar":"root ::= x", "grammar_lazy":true}`
	if string(got) != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	for _, bad := range []string{`[1]`, `{"prompt":"x"}`, `{"grammar":`, `"g"`} {
		if _, err := completionBody("P", p, false, json.RawMessage(bad)); err == nil {
			t.Errorf("grammar fields %s: no error", bad)
		}
	}
	if got, err := completionBody("P", p, false, json.RawMessage(`{}`)); err != nil || !json.Valid(got) {
		t.Errorf("empty object: %s %v", got, err)
	}
}

// TestGrammar_GetsTheClientsToolsAndTheirID: the grammar hook reads the tools array as
// the client wrote it, byte for byte, with the request's ToolsID, so it can render each
// tool's schema and keep the work per catalog, and parallel_tool_calls false as OneCall.
func TestGrammar_GetsTheClientsToolsAndTheirID(t *testing.T) {
	f := newFake(t, "x")
	var got GrammarRequest
	b := newTestBackend(t, f.URL, func(r GrammarRequest) (json.RawMessage, error) {
		got = r
		return fakeGrammar(r)
	})
	body := `{"model":"qwen","messages":[{"role":"user","content":"hi"}],"tools":` + twoTools + `,"tool_choice":"required","parallel_tool_calls":false}`
	if _, err := b.ChatCompletion(background(t), &backends.Request{Body: []byte(body), ToolsID: "v7/mask/false", Allowed: []string{"search"}}); err != nil {
		t.Fatal(err)
	}
	want := GrammarRequest{Allowed: []string{"search"}, Required: true, OneCall: true, Tools: json.RawMessage(twoTools), ToolsID: "v7/mask/false"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("grammar request (-want +got):\n%s", diff)
	}
}
