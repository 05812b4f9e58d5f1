package vllm_test

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/maskgate/maskgate/backends"
	"github.com/maskgate/maskgate/backends/oai"
	"github.com/maskgate/maskgate/backends/openaicompat"
	"github.com/maskgate/maskgate/backends/sglang"
	"github.com/maskgate/maskgate/backends/vllm"
	"github.com/maskgate/maskgate/internal/xgrammartest"
)

// Strategy index: Body's tools are the meta-tools; the loaded tool github_create_issue
// comes in Request.Definitions only.
const (
	ixTools = `[{"type":"function","function":{"name":"search_tools","parameters":{"type":"object","properties":{"query":{"type":"string"}},"required":["query"]}}},` +
		`{"type":"function","function":{"name":"load_tool","description":"Load a tool. Index: github: create_issue","parameters":{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}}}]`
	ixLoaded      = `{"type":"object","properties":{"repo":{"type":"string"},"priority":{"enum":["low","high"]}},"required":["repo","priority"]}`
	ixDefinitions = `[{"type":"function","function":{"name":"github_create_issue","description":"Open an issue (DEFINITION-ONLY).","parameters":` + ixLoaded + `}}]`
)

var ixAllowed = []string{"search_tools", "load_tool", "github_create_issue"}

func ixRequest(toolChoice string) string {
	return `{"model":"m","messages":[{"role":"user","content":"open an issue"}],"tools":` + ixTools + `,"tool_choice":` + toolChoice + `}`
}

// ixPlacements are the two engines' backends and where each puts the tag.
var ixPlacements = []struct {
	name  string
	new   func(openaicompat.Options) (*vllm.Backend, error)
	loads backends.LoadKind // SGLang's parsers drop calls to names outside the tools array
	tag   func(body []byte) []byte
}{
	{"vllm", vllm.New, backends.LoadByDefinition, func(body []byte) []byte {
		var b struct {
			SO struct {
				Tag string `json:"structural_tag"`
			} `json:"structured_outputs"`
		}
		_ = json.Unmarshal(body, &b)
		return []byte(b.SO.Tag)
	}},
	{"sglang", sglang.New, backends.LoadNone, func(body []byte) []byte {
		rf, _ := oai.Get(body, "response_format")
		return rf
	}},
}

// recorder is an upstream that keeps the last body it was sent.
func recorder(t *testing.T) (*httptest.Server, *[]byte) {
	var last []byte
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		last, _ = io.ReadAll(r.Body)
		io.WriteString(w, `{"choices":[]}`)
	}))
	t.Cleanup(up.Close)
	return up, &last
}

// TestIndex_GoldenBodies: the bodies vLLM and SGLang receive under strategy index, in
// Hermes: the tools array is the client's bytes, without the loaded tool, and the
// structural tag holds the loaded tool with its schema beside the meta-tools. A request
// of the same ToolsID without Definitions then gets no tag entry for it (the catalog
// kept under the ToolsID never took the definitions in). vLLM says it loads by
// definition; SGLang, whose tool parsers drop a call to a name outside the tools array,
// says it cannot (the tag would hold such a call all the same, should one be sent).
func TestIndex_GoldenBodies(t *testing.T) {
	up, last := recorder(t)
	for _, p := range ixPlacements {
		t.Run(p.name, func(t *testing.T) {
			b, err := p.new(openaicompat.Options{Name: p.name, BaseURL: up.URL + "/v1"})
			if err != nil {
				t.Fatal(err)
			}
			if k := b.LoadsTools(); k != p.loads {
				t.Errorf("LoadsTools = %v, want %v", k, p.loads)
			}
			req := &backends.Request{Body: []byte(ixRequest(`"required"`)), Allowed: ixAllowed, ToolsID: "v1/index", Definitions: []byte(ixDefinitions)}
			if _, err := b.ChatCompletion(context.Background(), req); err != nil {
				t.Fatal(err)
			}
			got := *last
			golden := filepath.Join("testdata", "index_"+p.name+".json")
			if f := flag.Lookup("update"); f != nil && f.Value.String() == "true" {
				if err := os.WriteFile(golden, got, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("body changed:\n got %s\nwant %s", got, want)
			}
			if tools, _ := oai.Get(got, "tools"); string(tools) != ixTools {
				t.Errorf("tools = %s, want the client's bytes", tools)
			}
			tag := string(p.tag(got))
			for _, n := range ixAllowed {
				if !strings.Contains(tag, `\"name\": \"`+n+`\"`) {
					t.Errorf("the tag has no entry for %s: %s", n, tag)
				}
			}
			if !strings.Contains(tag, `"enum":["low","high"]`) || strings.Contains(tag, "DEFINITION-ONLY") {
				t.Errorf("the tag lacks the loaded tool's schema or carries its description: %s", tag)
			}

			again := &backends.Request{Body: req.Body, Allowed: ixAllowed, ToolsID: "v1/index"}
			if _, err := b.ChatCompletion(context.Background(), again); err != nil {
				t.Fatal(err)
			}
			if tag := string(p.tag(*last)); strings.Contains(tag, "github_create_issue") || !strings.Contains(tag, "load_tool") {
				t.Errorf("without Definitions the tag still names the loaded tool: %s", tag)
			}
			if _, err := b.ChatCompletion(context.Background(), &backends.Request{Body: req.Body, Allowed: ixAllowed, ToolsID: "v1/index",
				Definitions: []byte(`[{"type":"function"`)}); err == nil {
				t.Error("definitions that do not parse were taken")
			}
		})
	}
}

// TestIndex_XGrammarHoldsTheLoadedTool: in the real xgrammar, for every format and both
// engines' placements, the tag of an index request accepts a call to the tool only
// Definitions carry with arguments valid against its schema, refuses it with arguments
// against the schema, and refuses a call to a tool in neither Body's tools nor
// Definitions; a meta-tool's call is accepted, and with tool_choice auto text is too.
func TestIndex_XGrammarHoldsTheLoadedTool(t *testing.T) {
	up, last := recorder(t)
	const good, bad = `{"repo": "maskgate", "priority": "high"}`, `{"repo": "maskgate", "priority": "urgent"}`
	var cases []xgrammartest.Case
	for _, p := range ixPlacements {
		for _, format := range []string{"hermes", "llama3", "mistral", "harmony", "deepseek"} {
			w := xgWires[format]
			b, err := p.new(openaicompat.Options{Name: p.name, BaseURL: up.URL + "/v1", Format: format})
			if err != nil {
				t.Fatal(err)
			}
			for _, choice := range []string{`"required"`, `"auto"`} {
				required := choice == `"required"`
				req := &backends.Request{Body: []byte(ixRequest(choice)), Allowed: ixAllowed, ToolsID: "v1/index", Definitions: []byte(ixDefinitions)}
				if _, err := b.ChatCompletion(context.Background(), req); err != nil {
					t.Fatalf("%s/%s/%s: %v", p.name, format, choice, err)
				}
				out := func(accept bool, kind, text string) xgrammartest.Output {
					return xgrammartest.Output{Text: text, Accept: accept, Kind: kind}
				}
				cases = append(cases, xgrammartest.Case{
					Name: p.name + "/" + format + "/" + strings.Trim(choice, `"`),
					Tag:  p.tag(*last),
					Outputs: []xgrammartest.Output{
						out(true, "loaded tool, valid arguments", w.output(required, [2]string{"github_create_issue", good})),
						out(false, "loaded tool, arguments against its schema", w.output(required, [2]string{"github_create_issue", bad})),
						out(false, "a tool in neither", w.output(required, [2]string{"delete_repo", good})),
						out(false, "a tool in neither, no arguments schema", w.output(required, [2]string{"github_close_issue", `{}`})),
						out(true, "meta-tool", w.output(required, [2]string{"load_tool", `{"name": "github_create_issue"}`})),
						out(!required, "text", "Sure."),
					},
				})
			}
		}
	}
	rep := xgrammartest.Check(t, cases)
	right, wrong := 0, 0
	for _, n := range rep.Right {
		right += n
	}
	for _, n := range rep.Wrong {
		wrong += n
	}
	t.Logf("xgrammar %s: %d index tags (2 engines x 5 formats x 2 tool_choices): %d outputs judged as expected, %d not", rep.Version, len(cases), right, wrong)
}
