package openai

import (
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/maskgate/maskgate/backends/oai"
	"github.com/maskgate/maskgate/backends/toolname"
)

var update = flag.Bool("update", false, "rewrite golden files")

// catalog is six tools; every golden request carries all six, whatever is allowed.
const catalog = `[` +
	`{"type":"function","function":{"name":"search_tools","description":"Search the tool catalog.","parameters":{"type":"object","properties":{"query":{"type":"string"}},"required":["query"]}}},` +
	`{"type":"function","function":{"name":"load_tool","parameters":{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}}},` +
	`{"type":"function","function":{"name":"get_weather","parameters":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}}},` +
	`{"type":"function","function":{"name":"get_time","parameters":{"type":"object","properties":{"tz":{"type":"string"}}}}},` +
	`{"type":"function","function":{"name":"send_email","parameters":{"type":"object","properties":{"to":{"type":"string"}}}}},` +
	`{"type":"function","function":{"name":"read_file","parameters":{"type":"object","properties":{"path":{"type":"string"}}}}}]`

func request(toolChoice string) string {
	r := `{"model":"gpt-4.1","messages":[{"role":"user","content":"Weather in Paris?"}],"tools":` + catalog
	if toolChoice != "" {
		r += `,"tool_choice":` + toolChoice
	}
	return r + `,"stream":false}`
}

// namespaced has names OpenAI refuses, in tools, in an earlier call and in tool_choice.
const namespaced = `{"model":"gpt-4.1","messages":[` +
	`{"role":"user","content":"commit it"},` +
	`{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"git.status","arguments":"{}"}}]},` +
	`{"role":"tool","tool_call_id":"call_1","content":"clean"}],` +
	`"tools":[` +
	`{"type":"function","function":{"name":"search_tools","parameters":{"type":"object"}}},` +
	`{"type":"function","function":{"name":"git.status","parameters":{"type":"object"}}},` +
	`{"type":"function","function":{"name":"git.commit","parameters":{"type":"object","properties":{"message":{"type":"string"}}}}},` +
	`{"type":"function","function":{"name":"get_weather","parameters":{"type":"object"}}}],` +
	`"tool_choice":"required"}`

// TestPrepare_GoldenBodies: the bodies OpenAI receives, each reviewed against the API
// reference, Chat Completions → Create chat completion → tool_choice: the string modes
// "none" | "auto" | "required", the named function {"type":"function","function":
// {"name"}}, and "Allowed tools" {"type":"allowed_tools","allowed_tools":{"mode":
// "auto"|"required","tools":[{"type":"function","function":{"name"}}]}} (the SDK's
// ChatCompletionAllowedToolChoiceParam / ChatCompletionAllowedToolsParam, generated
// from OpenAI's OpenAPI spec); and tools[].function.name, "a-z, A-Z, 0-9, underscores
// and dashes, with a maximum length of 64".
func TestPrepare_GoldenBodies(t *testing.T) {
	for _, tc := range []struct {
		golden  string
		body    string
		allowed []string
		// want is what the test reads back from the golden body.
		wantChoice string
	}{
		{"auto_2_of_6", request(""), []string{"get_weather", "read_file"},
			`{"type":"allowed_tools","allowed_tools":{"mode":"auto","tools":[{"type":"function","function":{"name":"get_weather"}},{"type":"function","function":{"name":"read_file"}}]}}`},
		{"client_required", request(`"required"`), []string{"search_tools", "load_tool", "get_weather"},
			`{"type":"allowed_tools","allowed_tools":{"mode":"required","tools":[{"type":"function","function":{"name":"search_tools"}},{"type":"function","function":{"name":"load_tool"}},{"type":"function","function":{"name":"get_weather"}}]}}`},
		{"client_named", request(`{"type":"function","function":{"name":"get_weather"}}`), []string{"search_tools", "get_weather", "read_file"},
			`{"type":"allowed_tools","allowed_tools":{"mode":"required","tools":[{"type":"function","function":{"name":"get_weather"}}]}}`},
		{"client_allowed_tools", request(`{"type":"allowed_tools","allowed_tools":{"mode":"auto","tools":[{"type":"function","function":{"name":"send_email"}},{"type":"function","function":{"name":"get_weather"}}]}}`),
			[]string{"search_tools", "get_weather", "read_file"},
			`{"type":"allowed_tools","allowed_tools":{"mode":"auto","tools":[{"type":"function","function":{"name":"get_weather"}}]}}`},
		{"client_none", request(`"none"`), []string{"search_tools", "get_weather"}, `"none"`},
		{"namespaced", namespaced, []string{"search_tools", "git.commit"}, ""},
	} {
		t.Run(tc.golden, func(t *testing.T) {
			p, err := Prepare([]byte(tc.body), tc.allowed, true)
			if err != nil {
				t.Fatal(err)
			}
			if !p.Constrained {
				t.Error("not constrained")
			}
			golden := filepath.Join("testdata", tc.golden+".json")
			if *update {
				if err := os.WriteFile(golden, p.Body, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatal(err)
			}
			if string(p.Body) != string(want) {
				t.Errorf("body changed:\n got %s\nwant %s", p.Body, want)
			}
			if !json.Valid(p.Body) {
				t.Fatal("invalid JSON")
			}
			choice, _ := oai.Get(p.Body, "tool_choice")
			if tc.wantChoice != "" && string(choice) != tc.wantChoice {
				t.Errorf("tool_choice %s\n      want %s", choice, tc.wantChoice)
			}
			if tc.golden != "namespaced" {
				// Every byte up to the end of tools is the client's: the prompt prefix
				// OpenAI caches does not move with the allowed set.
				prefix := tc.body[:strings.Index(tc.body, catalog)+len(catalog)]
				if !strings.HasPrefix(string(p.Body), prefix) || p.Names != nil {
					t.Errorf("bytes through tools changed, or names mapped (%v)", p.Names)
				}
			}
		})
	}
}

func TestPrepare_NamespacedNamesAreMappedEverywhere(t *testing.T) {
	p, err := Prepare([]byte(namespaced), []string{"search_tools", "git.commit", "get_weather"}, true)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(p.Body), "git.") {
		t.Errorf("a real name reached OpenAI: %s", p.Body)
	}
	var body struct {
		Messages []oai.Message `json:"messages"`
		Tools    []oai.Tool    `json:"tools"`
		Choice   struct {
			AllowedTools struct {
				Mode  string `json:"mode"`
				Tools []struct {
					Function struct{ Name string } `json:"function"`
				} `json:"tools"`
			} `json:"allowed_tools"`
		} `json:"tool_choice"`
	}
	if err := json.Unmarshal(p.Body, &body); err != nil {
		t.Fatal(err)
	}
	var tools, choice []string
	for _, tl := range body.Tools {
		tools = append(tools, tl.Function.Name)
	}
	for _, tl := range body.Choice.AllowedTools.Tools {
		choice = append(choice, tl.Function.Name)
	}
	w := toolname.OpenAI.Wire
	if diff := cmp.Diff([]string{"search_tools", w("git.status"), w("git.commit"), "get_weather"}, tools); diff != "" {
		t.Errorf("tools (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"search_tools", w("git.commit"), "get_weather"}, choice); diff != "" || body.Choice.AllowedTools.Mode != "required" {
		t.Errorf("allowed_tools %s (-want +got):\n%s", body.Choice.AllowedTools.Mode, diff)
	}
	if got := body.Messages[1].ToolCalls[0].Function.Name; got != w("git.status") {
		t.Errorf("earlier call named %q", got)
	}
	for _, n := range append(tools, choice...) {
		if !toolname.OpenAI.Valid(n) {
			t.Errorf("OpenAI refuses %q", n)
		}
	}
	if p.Names.Real(w("git.commit")) != "git.commit" {
		t.Error("mapping does not go back")
	}
	// Arguments and the rest stay the client's bytes.
	if !strings.Contains(string(p.Body), `"arguments":"{}"}}]},{"role":"tool","tool_call_id":"call_1","content":"clean"}]`) {
		t.Errorf("messages changed beyond the name: %s", p.Body)
	}
}

func TestPrepare_ValidNamesAndNoAllowedSetLeaveTheBytes(t *testing.T) {
	for _, body := range []string{
		request(`{"type":"function","function":{"name":"get_weather"}}`),
		`{"model":"m","messages":[{"role":"user","content":"hi"}]}`,
		`{"model":"m",  "messages":[] , "tools":[]}`,
	} {
		for _, allowedTools := range []bool{true, false} {
			p, err := Prepare([]byte(body), nil, allowedTools)
			if err != nil {
				t.Fatal(err)
			}
			if string(p.Body) != body || p.Names != nil || p.Constrained {
				t.Errorf("%s: body %s names %v constrained %v", body, p.Body, p.Names, p.Constrained)
			}
		}
	}
}

func TestPrepare_NoAllowedToolsMapsNamesButKeepsToolChoice(t *testing.T) {
	p, err := Prepare([]byte(namespaced), []string{"git.commit"}, false)
	if err != nil {
		t.Fatal(err)
	}
	if choice, _ := oai.Get(p.Body, "tool_choice"); string(choice) != `"required"` || p.Constrained {
		t.Errorf("tool_choice %s constrained %v", choice, p.Constrained)
	}
	if p.Names == nil || strings.Contains(string(p.Body), "git.") {
		t.Errorf("names not mapped: %s", p.Body)
	}
}

func TestPrepare_ClientToolChoiceIsMappedWithoutAnAllowedSet(t *testing.T) {
	// Without Request.Allowed (strategy allowed_tools written by the gateway, or a
	// client's own choice) tool_choice goes as it came, in wire names.
	w := toolname.OpenAI.Wire("git.commit")
	for _, tc := range []struct{ choice, want string }{
		{`{"type":"function","function":{"name":"git.commit"}}`, `{"type":"function","function":{"name":"` + w + `"}}`},
		{`{"type":"allowed_tools","allowed_tools":{"mode":"auto","tools":[{"type":"function","function":{"name":"search_tools"}},{"type":"function","function":{"name":"git.commit"}}]}}`,
			`{"type":"allowed_tools","allowed_tools":{"mode":"auto","tools":[{"type":"function","function":{"name":"search_tools"}},{"type":"function","function":{"name":"` + w + `"}}]}}`},
	} {
		body := strings.Replace(namespaced, `"tool_choice":"required"`, `"tool_choice":`+tc.choice, 1)
		p, err := Prepare([]byte(body), nil, true)
		if err != nil {
			t.Fatal(err)
		}
		if choice, _ := oai.Get(p.Body, "tool_choice"); string(choice) != tc.want || p.Constrained {
			t.Errorf("tool_choice %s, want %s", choice, tc.want)
		}
	}
}

func TestPrepare_ChoicesNothingAllowedMaySatisfy(t *testing.T) {
	allowed := []string{"search_tools", "get_weather"}
	for _, tc := range []struct {
		name, choice, want string // want: tool_choice sent, or "" for a 400
	}{
		{"named tool not loaded", `{"type":"function","function":{"name":"send_email"}}`, ""},
		{"named tool not in tools", `{"type":"function","function":{"name":"nope"}}`, ""},
		{"required allowed_tools of unloaded tools", `{"type":"allowed_tools","allowed_tools":{"mode":"required","tools":[{"type":"function","function":{"name":"send_email"}}]}}`, ""},
		{"auto allowed_tools of unloaded tools", `{"type":"allowed_tools","allowed_tools":{"mode":"auto","tools":[{"type":"function","function":{"name":"send_email"}}]}}`, `"none"`},
		{"unreadable", `{"type":"web_search"}`, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := Prepare([]byte(request(tc.choice)), allowed, true)
			if tc.want == "" {
				var re *oai.RequestError
				if !errors.As(err, &re) || re.Param != "tool_choice" {
					t.Fatalf("err %v, want a 400 on tool_choice", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if choice, _ := oai.Get(p.Body, "tool_choice"); string(choice) != tc.want {
				t.Errorf("tool_choice %s, want %s", choice, tc.want)
			}
		})
	}
}

func TestPrepare_AllowedNamesWithoutAToolAreNotListed(t *testing.T) {
	p, err := Prepare([]byte(request("")), []string{"get_weather", "not_in_tools", "get_weather"}, true)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"type":"allowed_tools","allowed_tools":{"mode":"auto","tools":[{"type":"function","function":{"name":"get_weather"}}]}}`
	if choice, _ := oai.Get(p.Body, "tool_choice"); string(choice) != want {
		t.Errorf("tool_choice %s", choice)
	}
}

func TestPrepare_RefusesNamesThatCollideOnTheWire(t *testing.T) {
	w := toolname.OpenAI.Wire("git.commit")
	body := `{"model":"m","messages":[],"tools":[{"type":"function","function":{"name":"git.commit"}},{"type":"function","function":{"name":"` + w + `"}}]}`
	var re *oai.RequestError
	if _, err := Prepare([]byte(body), nil, true); !errors.As(err, &re) || re.Param != "tools" {
		t.Errorf("err %v, want a 400 on tools", err)
	}
}

func TestPrepare_ByteIdenticalAcrossAllowedSets(t *testing.T) {
	// Loading a tool changes tool_choice only: everything before it stays put.
	a, err := Prepare([]byte(namespaced), []string{"search_tools"}, true)
	if err != nil {
		t.Fatal(err)
	}
	b, err := Prepare([]byte(namespaced), []string{"search_tools", "git.commit", "git.status"}, true)
	if err != nil {
		t.Fatal(err)
	}
	cut := func(b []byte) string { return string(b[:strings.Index(string(b), `"tool_choice"`)]) }
	if cut(a.Body) != cut(b.Body) {
		t.Errorf("prefix moved:\n%s\n%s", cut(a.Body), cut(b.Body))
	}
	if string(a.Body) == string(b.Body) {
		t.Error("the allowed set did not reach tool_choice")
	}
}

// OpenAI refuses metadata without store: true and any top_k; both are taken out, every
// other byte kept, and metadata stays when the client stores the completion.
func TestPrepare_DropsMembersOpenAIRefuses(t *testing.T) {
	for _, tc := range []struct{ body, want string }{
		{`{"model":"m","metadata":{"k":"v"},"messages":[]}`, `{"model":"m","messages":[]}`},
		{`{"model":"m","store":false,"metadata":{"k":"v"},"messages":[]}`, `{"model":"m","store":false,"messages":[]}`},
		{`{"model":"m","store":true,"metadata":{"k":"v"},"messages":[]}`, `{"model":"m","store":true,"metadata":{"k":"v"},"messages":[]}`},
		{`{"model":"m","messages":[],"top_k":40,"temperature":0.5}`, `{"model":"m","messages":[],"temperature":0.5}`},
	} {
		p, err := Prepare([]byte(tc.body), nil, true)
		if err != nil {
			t.Fatal(err)
		}
		if string(p.Body) != tc.want {
			t.Errorf("%s\n got %s\nwant %s", tc.body, p.Body, tc.want)
		}
	}
}
