package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/maskgate/maskgate/internal/enginetest"
)

// agentSystem is a system prompt the size of a coding agent's, naming a per-project
// path about 2,100 characters in (Claude Code names its memory directory there): two
// projects' prompts differ from that point on.
func agentSystem(project string) string {
	var b strings.Builder
	b.WriteString("You are an interactive coding agent that helps users with software engineering tasks. ")
	for b.Len() < 2100 {
		b.WriteString("Read the code before changing it, keep changes small, and explain what you did. ")
	}
	fmt.Fprintf(&b, "Your project memory lives in /home/user/.agent/projects/%s/memory and is yours to keep. ", project)
	b.WriteString("Prefer the dedicated tools to shell commands where one fits the task at hand.")
	return b.String()
}

// catalogEnd is where the tiny model's chat template ends the system turn that holds
// the tools (bench/tinymodel.ChatTemplate).
const catalogEnd = "</tool_call><|im_end|>\n"

// TestLlamaServerE2E_CatalogFirst measures the prefix cache across two sessions of two
// projects — the same 24 tools, system prompts that differ about 2,100 characters in —
// through the gateway over a real llama-server with one slot: catalog first (the
// default), the second session's first request reuses at least every token of the
// catalog; with catalog_first: false the template writes the system prompt first and the
// reuse stops where the prompts differ, short of the catalog.
func TestLlamaServerE2E_CatalogFirst(t *testing.T) {
	ls := enginetest.Llama(t)
	proxy, wire := recordingProxy(t, ls.URL)
	const cfg = `backends:
  - name: llama
    kind: llamacpp
    url: URL
    models: ["*"]
    timeout: 2m
`
	tools := e2eCatalog()
	for _, tc := range []struct {
		name  string
		extra string
		first bool
	}{
		{"catalog_first", "", true},
		{"template_order", "search:\n  catalog_first: false\n", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			base, logs := startGateway(t, strings.Replace(cfg, "URL", proxy.URL, 1)+tc.extra, nil)
			var cached []int
			var prompts []string
			for _, project := range []string{"alpha-" + tc.name, "beta-" + tc.name} {
				from := wire.len()
				system, _ := json.Marshal(agentSystem(project))
				resp, raw := postJSON(t, base+"/v1/chat/completions", `{"model":"`+ls.Model+`","messages":[{"role":"system","content":`+
					string(system)+`},{"role":"user","content":"List the files here."}],"tools":`+string(tools)+`,"max_tokens":2,"seed":1}`)
				var out struct {
					Usage struct {
						Details struct {
							Cached int `json:"cached_tokens"`
						} `json:"prompt_tokens_details"`
					} `json:"usage"`
				}
				if resp.StatusCode != 200 || json.Unmarshal(raw, &out) != nil {
					t.Fatalf("status %d: %s; gateway log:\n%s", resp.StatusCode, raw, logs.String())
				}
				cached = append(cached, out.Usage.Details.Cached)
				prompts = append(prompts, appliedPrompt(t, wire.await(t, from, "/apply-template", 1)[0]))
			}
			end := strings.Index(prompts[1], catalogEnd)
			if end < 0 {
				t.Fatalf("the prompt has no tools turn:\n%.600s", prompts[1])
			}
			toolsAt := strings.Index(prompts[1], "<tools>")
			systemAt := strings.Index(prompts[1], "Your project memory")
			if tc.first != (toolsAt < systemAt) {
				t.Fatalf("tools at %d, the system prompt's project at %d: catalog first is %v", toolsAt, systemAt, tc.first)
			}
			// The test's own measure: the engine's tokens of the prompt through the tools.
			catalog := len(tokenize(t, ls, prompts[1][:end+len(catalogEnd)]))
			if tc.first && cached[1] < catalog {
				t.Errorf("second project's first request reused %d tokens; the catalog is %d: want at least all of it", cached[1], catalog)
			}
			if !tc.first && cached[1] >= catalog {
				t.Errorf("template order: second project reused %d tokens, the prompt through the catalog is %d; the system prompt should have cut the reuse short", cached[1], catalog)
			}
			t.Logf("%s: prompt through the catalog %d tokens of %d; second project's request reused %d", tc.name, catalog,
				len(tokenize(t, ls, prompts[1])), cached[1])
		})
	}
}
