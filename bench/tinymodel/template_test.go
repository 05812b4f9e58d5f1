package tinymodel

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/ollama/ollama/api"
	ollamatemplate "github.com/ollama/ollama/template"
	"github.com/ollama/ollama/tools"
)

var update = flag.Bool("update", false, "rewrite golden files under testdata/")

const weatherToolsJSON = `[{"type":"function","function":{"name":"get_weather","description":"Current weather for a city.","parameters":{"type":"object","required":["city"],"properties":{"city":{"type":"string","description":"City name"}}}}}]`

// A conversation that exercises every branch: system plus tools, a tool call
// with no text, two consecutive tool results, and a final user turn.
const toolConversationJSON = `[
	{"role":"system","content":"You are terse."},
	{"role":"user","content":"Weather in Paris and Rome?"},
	{"role":"assistant","content":"","tool_calls":[
		{"function":{"name":"get_weather","arguments":{"city":"Paris"}}},
		{"function":{"name":"get_weather","arguments":{"city":"Rome"}}}]},
	{"role":"tool","content":"{\"temp\": 21}"},
	{"role":"tool","content":"{\"temp\": 25}"},
	{"role":"user","content":"Which is warmer?"}
]`

func decode[T any](t *testing.T, s string) T {
	t.Helper()
	var v T
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatal(err)
	}
	return v
}

func render(t *testing.T, msgs []api.Message, tl api.Tools) string {
	t.Helper()
	tmpl, err := ollamatemplate.Parse(OllamaTemplate)
	if err != nil {
		t.Fatalf("Ollama cannot parse OllamaTemplate: %v", err)
	}
	var b bytes.Buffer
	if err := tmpl.Execute(&b, ollamatemplate.Values{Messages: msgs, Tools: tl}); err != nil {
		t.Fatalf("render: %v", err)
	}
	return b.String()
}

func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if diff := cmp.Diff(string(want), got); diff != "" {
		t.Errorf("%s mismatch (-want +got):\n%s", path, diff)
	}
}

func TestOllamaTemplate_RendersToolsHermesStyle(t *testing.T) {
	got := render(t, decode[[]api.Message](t, toolConversationJSON), decode[api.Tools](t, weatherToolsJSON))
	golden(t, "tool_conversation.prompt", got)

	for _, want := range []string{
		"<|im_start|>system\nYou are terse.\n\n# Tools\n",
		"<tools>\n{\"type\":\"function\",\"function\":{\"name\":\"get_weather\"",
		"<|im_start|>assistant\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\":\"Paris\"}}\n</tool_call>\n<tool_call>\n",
		"<|im_start|>user\n<tool_response>\n{\"temp\": 21}\n</tool_response>\n<tool_response>\n{\"temp\": 25}\n</tool_response><|im_end|>\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("prompt lacks %q", want)
		}
	}
	if !strings.HasSuffix(got, "<|im_start|>assistant\n") {
		t.Error("prompt does not end with the generation prompt")
	}
}

func TestOllamaTemplate_NoToolsNoSystemIsPlainChatML(t *testing.T) {
	got := render(t, []api.Message{{Role: "user", Content: "Hi"}}, nil)
	if want := "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

// Ollama derives the tag it parses replies for from the template; a reply
// in the format the template teaches must come back as a tool call.
func TestOllamaTemplate_ToolCallsParseBack(t *testing.T) {
	tmpl, err := ollamatemplate.Parse(OllamaTemplate)
	if err != nil {
		t.Fatal(err)
	}
	p := tools.NewParser(tmpl.Template, decode[api.Tools](t, weatherToolsJSON))
	calls, _ := p.Add("<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Oslo\"}}\n</tool_call>")
	if len(calls) != 1 || calls[0].Function.Name != "get_weather" {
		t.Fatalf("parsed calls = %+v, want one get_weather call", calls)
	}
	if city, _ := calls[0].Function.Arguments.Get("city"); city != "Oslo" {
		t.Errorf("city = %v, want Oslo", city)
	}
}
