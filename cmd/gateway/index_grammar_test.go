package main

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/maskgate/maskgate/backends"
	"github.com/maskgate/maskgate/backends/llamacpp"
	"github.com/maskgate/maskgate/backends/oai"
	"github.com/maskgate/maskgate/config"
	"github.com/maskgate/maskgate/internal/enginetest"
	"github.com/maskgate/maskgate/internal/schemacheck"
	"github.com/maskgate/maskgate/masking"
)

// Strategy index on llama-server: Body's tools are the meta-tools, the loaded tool comes
// in Request.Definitions only.
const (
	indexMetaTools = `[{"type":"function","function":{"name":"search_tools","parameters":{"type":"object","properties":{"query":{"type":"string"}},"required":["query"]}}},
 {"type":"function","function":{"name":"load_tool","description":"Load a tool by name. Index: github: create_issue","parameters":{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}}}]`
	indexLoadedParams = `{"type":"object","properties":{"repo":{"type":"string","maxLength":12},"priority":{"enum":["low","high"]},"draft":{"type":"boolean"}},"required":["repo","priority"]}`
	indexDefinitions  = `[{"type":"function","function":{"name":"github_create_issue","description":"Open an issue (DEFINITION-ONLY).","parameters":` + indexLoadedParams + `}}]`
)

// grammarText is the grammar member of grammarFor's fields.
func grammarText(t *testing.T, g llamacpp.GrammarFunc, r llamacpp.GrammarRequest) string {
	t.Helper()
	raw, err := g(r)
	if err != nil {
		t.Fatal(err)
	}
	var f struct{ Grammar string }
	if err := json.Unmarshal(raw, &f); err != nil {
		t.Fatal(err)
	}
	return f.Grammar
}

// TestGrammarFor_DefinitionsHoldTheLoadedToolsArguments: a tool only in Definitions
// (strategy index) gets its own arguments rule, as a tool of the tools array does, and
// an allowed name in neither is left out of the grammar (not callable); the
// catalog kept under the request's ToolsID never takes the definitions in (a request of
// that ToolsID without them renders the tool as one without a schema), and the next
// request's other definitions of the same name are read afresh.
func TestGrammarFor_DefinitionsHoldTheLoadedToolsArguments(t *testing.T) {
	g := grammarFor(masking.Hermes())
	allowed := []string{"search_tools", "load_tool", "github_create_issue", "ghost_tool"}
	r := llamacpp.GrammarRequest{Allowed: allowed, Required: true, Tools: json.RawMessage(indexMetaTools), ToolsID: "v1/index", Definitions: json.RawMessage(indexDefinitions)}
	got := grammarText(t, g, r)
	for _, want := range []string{`"github_create_issue" tool-args`, `"\"low\"" | "\"high\""`, `"load_tool" tool-args`} {
		if !strings.Contains(got, want) {
			t.Errorf("grammar lacks %s:\n%s", want, got)
		}
	}
	if strings.Contains(got, "ghost_tool") {
		t.Errorf("a name in neither the tools nor the definitions is callable:\n%s", got)
	}
	if len(allowed) != 4 || allowed[3] != "ghost_tool" {
		t.Errorf("the request's Allowed was edited: %v", allowed)
	}
	r.Definitions = nil
	if plain := grammarText(t, g, r); strings.Contains(plain, `\"low\"`) {
		t.Errorf("the ToolsID's catalog kept a definition:\n%s", plain)
	}
	r.Definitions = json.RawMessage(strings.ReplaceAll(indexDefinitions, `"high"`, `"urgent"`))
	if again := grammarText(t, g, r); !strings.Contains(again, `\"urgent\"`) || strings.Contains(again, `\"high\"`) {
		t.Errorf("new definitions under one ToolsID were not read:\n%s", again)
	}
	r.Definitions = json.RawMessage(`[{"type":"function"`)
	if _, err := g(r); err == nil || !strings.Contains(err.Error(), "definitions") {
		t.Errorf("broken definitions: %v, want an error naming them", err)
	}
}

// TestLlamaServer_IndexCallsALoadedToolByItsDefinition: the real llama-server with the
// tiny random-weight model, through the llamacpp backend as the gateway wires it: a call
// forced to github_create_issue, a tool only in Request.Definitions, comes back as that
// call with arguments valid against its schema on each of 5 seeds at temperature 1; the
// grammar each /completion carried holds its arguments rule, and no /apply-template body
// (so no prompt) held its definition.
func TestLlamaServer_IndexCallsALoadedToolByItsDefinition(t *testing.T) {
	srv := enginetest.Llama(t)
	target, _ := url.Parse(srv.URL)
	proxy := httputil.NewSingleHostReverseProxy(target)
	proxy.Transport = enginetest.ProxyTransport()
	var mu sync.Mutex
	bodies := map[string][][]byte{}
	rec := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		bodies[r.URL.Path] = append(bodies[r.URL.Path], body)
		mu.Unlock()
		r.Body = io.NopCloser(bytes.NewReader(body))
		r.ContentLength = int64(len(body))
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(rec.Close)
	be, err := newBackend(config.Backend{Name: "llama", Kind: "llamacpp", URL: rec.URL, Models: []string{"*"}}, "", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if l, ok := be.(backends.ToolLoader); !ok || l.LoadsTools() != backends.LoadByDefinition {
		t.Fatalf("the llama-server backend does not load by definition")
	}
	allowed := []string{"search_tools", "load_tool", "github_create_issue"}
	const seeds = 5
	valid := 0
	for seed := range seeds {
		body := `{"model":"tiny","messages":[{"role":"user","content":"Open an issue."}],"tools":` + indexMetaTools +
			`,"tool_choice":{"type":"function","function":{"name":"github_create_issue"}},"parallel_tool_calls":false,"max_tokens":256,"temperature":1,"seed":` + itoa(seed) + `}`
		resp, err := be.ChatCompletion(t.Context(), &backends.Request{Body: []byte(body), Model: "tiny", Allowed: allowed,
			ToolsID: "index-v1", Definitions: []byte(indexDefinitions)})
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
		t.Logf("seed %d: github_create_issue(%s)", seed, call.Arguments)
		valid++
	}
	mu.Lock()
	defer mu.Unlock()
	if n := len(bodies["/completion"]); n != seeds {
		t.Fatalf("%d /completion requests, want %d", n, seeds)
	}
	for i, b := range bodies["/completion"] {
		var c struct{ Grammar, Prompt string }
		if err := json.Unmarshal(b, &c); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(c.Grammar, `"github_create_issue" tool-args`) || !strings.Contains(c.Grammar, `"\"low\"" | "\"high\""`) {
			t.Errorf("/completion %d: the grammar lacks the loaded tool's arguments rule:\n%s", i, c.Grammar)
		}
		if strings.Contains(c.Prompt, "github_create_issue") || !strings.Contains(c.Prompt, "load_tool") {
			t.Errorf("/completion %d: the prompt holds the definition or lacks the meta-tools:\n%s", i, c.Prompt)
		}
	}
	for i, b := range bodies["/apply-template"] {
		if bytes.Contains(b, []byte("github_create_issue")) || bytes.Contains(b, []byte("DEFINITION-ONLY")) {
			t.Errorf("/apply-template %d got the definition: %s", i, b)
		}
	}
	t.Logf("%d/%d seeds made one valid call to the loaded tool", valid, seeds)
}
