//go:build llamacpp

package embedded

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/maskgate/maskgate/backends"
	"github.com/maskgate/maskgate/backends/oai"
	"github.com/maskgate/maskgate/internal/schemacheck"
	"github.com/maskgate/maskgate/masking"
)

// Strategy index: Body's tools are the meta-tools; the loaded tool github_create_issue
// comes in Request.Definitions only.
const (
	indexMetaTools = `[{"type":"function","function":{"name":"search_tools","parameters":{"type":"object","properties":{"query":{"type":"string"}},"required":["query"]}}},
 {"type":"function","function":{"name":"load_tool","description":"Load a tool by name. Index: github: create_issue","parameters":{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}}}]`
	indexLoadedParams = `{"type":"object","properties":{"repo":{"type":"string","maxLength":12},"priority":{"enum":["low","high"]},"draft":{"type":"boolean"}},"required":["repo","priority"]}`
	indexDefinitions  = `[{"type":"function","function":{"name":"github_create_issue","description":"Open an issue (DEFINITION-ONLY).","parameters":` + indexLoadedParams + `}}]`
)

// TestIndex_ForcedCallToALoadedToolFollowsItsDefinition: on the tiny random-weight
// model, a call forced to github_create_issue, a tool only in Request.Definitions, comes
// back as that call with arguments valid against its schema on each of 5 seeds at
// temperature 1 (the token mask and llama.cpp's grammar sampler hold it); the prompt the
// engine prefills holds the meta-tools and never the definition. The backend loads by
// definition.
func TestIndex_ForcedCallToALoadedToolFollowsItsDefinition(t *testing.T) {
	b := newBackend(t, Options{})
	if k := b.LoadsTools(); k != backends.LoadByDefinition {
		t.Fatalf("LoadsTools = %v, want LoadByDefinition", k)
	}
	allowed := []string{"search_tools", "load_tool", "github_create_issue"}
	const seeds = 5
	for seed := range seeds {
		body := `{"model":"tiny","messages":[{"role":"user","content":"Open an issue."}],"tools":` + indexMetaTools +
			`,"tool_choice":{"type":"function","function":{"name":"github_create_issue"}},"parallel_tool_calls":false,"max_tokens":256,"temperature":1,"seed":` +
			itoaIndex(seed) + `}`
		req := &backends.Request{Body: []byte(body), Model: "tiny", Allowed: allowed, ToolsID: "index-v1", Definitions: []byte(indexDefinitions)}
		if seed == 0 {
			prompt, err := b.Prompt(req)
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(prompt, "github_create_issue") || strings.Contains(prompt, "DEFINITION-ONLY") || !strings.Contains(prompt, "load_tool") {
				t.Errorf("the prompt holds the definition or lacks the meta-tools:\n%s", prompt)
			}
		}
		resp, err := b.ChatCompletion(context.Background(), req)
		if err != nil {
			t.Fatal(err)
		}
		var cc oai.ChatCompletion
		if err := json.Unmarshal(resp.Body, &cc); err != nil {
			t.Fatal(err)
		}
		ch := cc.Choices[0]
		if ch.FinishReason != oai.FinishToolCalls || len(ch.Message.ToolCalls) != 1 {
			t.Errorf("seed %d: finish %q, %d calls, content %v: not one whole call", seed, ch.FinishReason, len(ch.Message.ToolCalls), ch.Message.Content)
			continue
		}
		call := ch.Message.ToolCalls[0].Function
		if call.Name != "github_create_issue" {
			t.Errorf("seed %d: called %q, want github_create_issue", seed, call.Name)
			continue
		}
		if err := schemacheck.Validate([]byte(indexLoadedParams), []byte(call.Arguments)); err != nil {
			t.Errorf("seed %d: github_create_issue(%s): %v", seed, call.Arguments, err)
			continue
		}
		t.Logf("seed %d: github_create_issue(%s), %d completion tokens", seed, call.Arguments, cc.Usage.CompletionTokens)
	}
}

func itoaIndex(i int) string { b, _ := json.Marshal(i); return string(b) }

// TestIndex_ANameInNeitherIsNotCallable: under index (Definitions set) an allowed name
// that neither the tools array nor the definitions hold leaves the call spec; without
// Definitions the spec keeps Allowed as the gateway sent it; definitions that do not
// parse are an error.
func TestIndex_ANameInNeitherIsNotCallable(t *testing.T) {
	body := `{"model":"tiny","messages":[{"role":"user","content":"hi"}],"tools":` + indexMetaTools + `}`
	r, err := parseRequest([]byte(body))
	if err != nil {
		t.Fatal(err)
	}
	allowed := []string{"search_tools", "ghost_tool", "github_create_issue"}
	spec, err := toolSpec(&backends.Request{Allowed: allowed, Definitions: []byte(indexDefinitions)}, r, masking.Hermes())
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(spec.Allowed, ","); got != "search_tools,github_create_issue" {
		t.Errorf("index spec allows %s, want search_tools,github_create_issue", got)
	}
	if allowed[1] != "ghost_tool" {
		t.Errorf("the request's Allowed was edited: %v", allowed)
	}
	spec, err = toolSpec(&backends.Request{Allowed: allowed}, r, masking.Hermes())
	if err != nil || len(spec.Allowed) != 3 {
		t.Errorf("mask spec allows %v (%v), want Allowed as sent", spec.Allowed, err)
	}
	if _, err := toolSpec(&backends.Request{Allowed: allowed, Definitions: []byte(`[{"type"`)}, r, masking.Hermes()); err == nil {
		t.Error("definitions that do not parse were taken")
	}
}
