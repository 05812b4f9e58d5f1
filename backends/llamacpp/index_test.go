package llamacpp

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/maskgate/maskgate/backends"
	"github.com/maskgate/maskgate/backends/oai"
)

// indexTools is Body's tools array under strategy index: the two meta-tools only.
const indexTools = `[{"type":"function","function":{"name":"search_tools","parameters":{"type":"object","properties":{"query":{"type":"string"}},"required":["query"]}}},
 {"type":"function","function":{"name":"load_tool","description":"Load a tool. Index: github: create_issue","parameters":{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}}}]`

// indexDefinitions is Request.Definitions: a loaded tool Body's tools leave out.
const indexDefinitions = `[{"type":"function","function":{"name":"github_create_issue","description":"Open an issue (DEFINITION-ONLY).","parameters":{"type":"object","properties":{"repo":{"type":"string","maxLength":12},"priority":{"enum":["low","high"]}},"required":["repo","priority"]}}}]`

// TestIndex_DefinitionsReachTheGrammarNotThePrompt: under strategy index a tool of
// Request.Definitions reaches the grammar function (GrammarRequest.Definitions, beside
// Body's tools and ToolsID), never /apply-template, whose tools are Body's bytes; the
// model's call to it is parsed as a call; the backend says it loads by definition with
// a grammar and not at all without one.
func TestIndex_DefinitionsReachTheGrammarNotThePrompt(t *testing.T) {
	f := newFake(t, "<tool_call>\n", `{"name": "github_create_issue", "arguments": {"repo": "maskgate", "priority": "high"}}`, "\n</tool_call>")
	var got GrammarRequest
	b := newTestBackend(t, f.URL, func(r GrammarRequest) (json.RawMessage, error) {
		got = r
		return fakeGrammar(r)
	})
	if k := b.LoadsTools(); k != backends.LoadByDefinition {
		t.Errorf("LoadsTools with a grammar = %v, want LoadByDefinition", k)
	}
	if k := newTestBackend(t, f.URL, nil).LoadsTools(); k != backends.LoadNone {
		t.Errorf("LoadsTools without a grammar = %v, want LoadNone", k)
	}
	body := `{"model":"qwen","messages":[{"role":"user","content":"open an issue"}],"tools":` + indexTools + `,"tool_choice":"required"}`
	allowed := []string{"search_tools", "load_tool", "github_create_issue"}
	resp, err := b.ChatCompletion(background(t), &backends.Request{Body: []byte(body), Allowed: allowed, ToolsID: "v3/index",
		Definitions: []byte(indexDefinitions)})
	if err != nil {
		t.Fatal(err)
	}
	if string(got.Definitions) != indexDefinitions || string(got.Tools) != indexTools || got.ToolsID != "v3/index" || !got.Required {
		t.Errorf("grammar request: definitions %s, tools %s, id %q, required %v", got.Definitions, got.Tools, got.ToolsID, got.Required)
	}
	if len(got.Allowed) != 3 || got.Allowed[2] != "github_create_issue" {
		t.Errorf("grammar request allows %v, want %v", got.Allowed, allowed)
	}
	tmpl := f.last("/apply-template")
	if bytes.Contains(tmpl, []byte("github_create_issue")) || bytes.Contains(tmpl, []byte("DEFINITION-ONLY")) {
		t.Errorf("/apply-template got the definition: %s", tmpl)
	}
	if tools, _ := oai.Get(tmpl, "tools"); string(tools) != indexTools {
		t.Errorf("/apply-template tools = %s, want Body's bytes", tools)
	}
	var cc oai.ChatCompletion
	if err := json.Unmarshal(resp.Body, &cc); err != nil {
		t.Fatal(err)
	}
	if calls := cc.Choices[0].Message.ToolCalls; len(calls) != 1 || calls[0].Function.Name != "github_create_issue" ||
		calls[0].Function.Arguments != `{"repo": "maskgate", "priority": "high"}` {
		t.Errorf("calls = %+v, want the one call to github_create_issue", calls)
	}
	// Without Definitions (every other strategy) the grammar gets none.
	if _, err := b.ChatCompletion(background(t), &backends.Request{Body: []byte(body), Allowed: allowed[:2], ToolsID: "v3/mask"}); err != nil {
		t.Fatal(err)
	}
	if got.Definitions != nil {
		t.Errorf("definitions without index: %s", got.Definitions)
	}
}
