//go:build llamacpp

package embedded

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/maskgate/maskgate/backends/oai"
	"github.com/maskgate/maskgate/backends/toolcall"
	"github.com/maskgate/maskgate/bench/tinymodel"
)

// The golden file is Python Jinja2 3.1.6 rendering tinymodel.ChatTemplate with Hugging
// Face's tojson (json.dumps, ensure_ascii=False, key order kept) on hermes_tools.json.
func TestTemplate_MatchesJinja2ByteForByte(t *testing.T) {
	raw, err := os.ReadFile("testdata/hermes_tools.json")
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile("testdata/hermes_tools.golden")
	if err != nil {
		t.Fatal(err)
	}
	var req oai.ChatRequest
	if err := json.Unmarshal(raw, &req); err != nil {
		t.Fatal(err)
	}
	tmpl, err := compileTemplate(tinymodel.ChatTemplate)
	if err != nil {
		t.Fatal(err)
	}
	got, err := tmpl.render(req.Messages, req.Tools, toolcall.Hermes, false)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(string(want), got); diff != "" {
		t.Errorf("prompt differs from Jinja2's (-want +got):\n%s", diff)
	}
	again, _ := tmpl.render(req.Messages, req.Tools, toolcall.Hermes, false)
	if again != got {
		t.Error("two renders of the same request differ")
	}
}

// TestTemplate_CatalogFirstSharesTheCatalog: two sessions whose system prompts differ at
// their first byte render, catalog first, the same prompt up to the end of the tools;
// with the template's own order they share nothing of it.
func TestTemplate_CatalogFirstSharesTheCatalog(t *testing.T) {
	tmpl, err := compileTemplate(tinymodel.ChatTemplate)
	if err != nil {
		t.Fatal(err)
	}
	tools := []oai.Tool{{Type: "function", Function: oai.FunctionDef{Name: "read_file", Description: "Read a file.",
		Parameters: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}}}`)}}}
	session := func(system string) []oai.Message {
		return []oai.Message{{Role: "system", Content: json.RawMessage(`"` + system + `"`)},
			{Role: "user", Content: json.RawMessage(`"hi"`)}}
	}
	a, b := session("A project at /home/a"), session("B project at /home/b")
	const end = "</tool_call><|im_end|>\n" // the end of the tools' system turn
	for _, on := range []bool{true, false} {
		pa, err := tmpl.render(a, tools, toolcall.Hermes, on)
		if err != nil {
			t.Fatal(err)
		}
		pb, _ := tmpl.render(b, tools, toolcall.Hermes, on)
		common := 0
		for common < len(pa) && common < len(pb) && pa[common] == pb[common] {
			common++
		}
		catalog := strings.Index(pa, end) + len(end)
		if on && (catalog < len(end) || common < catalog || !strings.Contains(pa[catalog:], "<|im_start|>system\nA project")) {
			t.Errorf("catalog first: %d bytes in common, the catalog ends at %d:\n%s", common, catalog, pa)
		}
		if !on && common >= catalog {
			t.Errorf("template order: %d bytes in common, the catalog ends at %d", common, catalog)
		}
	}
	// Without tools, and under a format whose template keeps its own order, the messages
	// render as they are.
	plain, _ := tmpl.render(a, nil, toolcall.Hermes, false)
	if got, _ := tmpl.render(a, nil, toolcall.Hermes, true); got != plain {
		t.Errorf("catalog first changed a prompt without tools: %q", got)
	}
	mistral, _ := tmpl.render(a, tools, toolcall.Mistral, false)
	if got, _ := tmpl.render(a, tools, toolcall.Mistral, true); got != mistral {
		t.Errorf("catalog first changed a mistral prompt: %q", got)
	}
}
