package masking

import (
	"bytes"
	"encoding/json"
	"github.com/maskgate/maskgate/internal/gbnftest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The custom tool of these tests is Codex's apply_patch: its Lark grammar as
// Codex ships it (masking/lark/testdata/codex), in the parameters the
// Responses door gives a custom tool.

func applyPatchFormat(t testing.TB) []byte {
	t.Helper()
	src, err := os.ReadFile(filepath.Join("lark", "testdata", "codex", "apply_patch.lark"))
	if err != nil {
		t.Fatal(err)
	}
	f, err := json.Marshal(map[string]string{"type": "grammar", "syntax": "lark", "definition": string(src)})
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// customParams are a custom tool's parameters holding its input to format.
func customParams(format []byte) json.RawMessage {
	return json.RawMessage(`{"type":"object","properties":{"input":{"type":"string","` + GrammarKeyword + `":` + string(format) + `}},"required":["input"],"additionalProperties":false}`)
}

// escapeJSONString is gbnftest.EscapeJSONString, the tests' own writer.
func escapeJSONString(s string) string { return gbnftest.EscapeJSONString(s) }

// inputArgs are a custom tool call's arguments: {"input": text}.
func inputArgs(text string) string { return `{"input": "` + escapeJSONString(text) + `"}` }

// patchCases are apply_patch inputs and whether the grammar takes them,
// after Codex's own instructions (masking/lark's codex cases hold more).
var patchCases = []struct {
	name   string
	text   string
	accept bool
}{
	{"add file", "*** Begin Patch\n*** Add File: hello.txt\n+Hello \"world\"\n*** End Patch\n", true},
	{"update with tab and backslash", "*** Begin Patch\n*** Update File: a.go\n@@ func f() {\n-\treturn \"a\\\\b\"\n+\treturn `x`\n*** End Patch", true},
	{"no end marker", "*** Begin Patch\n*** Add File: a.txt\n+x\n", false},
	{"unified diff", "--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n", false},
	{"added line without +", "*** Begin Patch\n*** Add File: a.txt\nx\n*** End Patch\n", false},
}

// TestGrammarKeyword_HoldsTheStringToItsGrammar: a string with x-grammar is
// rendered as the grammar's JSON-string form; a format that is not a grammar
// the translation takes leaves the plain JSON string (wider, never dropped
// silently narrower), and neither marks the block as a grammar.
func TestGrammarKeyword_HoldsTheStringToItsGrammar(t *testing.T) {
	b := renderArgRules(customParams(applyPatchFormat(t)))
	if !b.grammar {
		t.Fatal("apply_patch's block is not marked as holding a grammar")
	}
	for _, want := range []string{"\x00--g0-start ::= ", `"\"" ` + "\x00--g0-start" + ` "\""`, `"*** Begin Patch"`} {
		if !strings.Contains(b.rules, want) {
			t.Errorf("rules lack %q:\n%s", want, b.rules)
		}
	}
	for _, format := range []string{
		`{"type":"text"}`,
		`{"type":"grammar","syntax":"lark","definition":"start: x\n%ignore WS"}`,
		`{"type":"grammar","syntax":"ebnf","definition":"root ::= \"a\""}`,
		`"lark"`,
	} {
		b := renderArgRules(customParams([]byte(format)))
		if b.grammar || !strings.Contains(b.rules, "json-string") {
			t.Errorf("%s: grammar = %v, rules:\n%s", format, b.grammar, b.rules)
		}
	}
	// Regex syntax, two grammars in one tool: each its own rule names.
	two := json.RawMessage(`{"type":"object","properties":{"a":{"type":"string","x-grammar":{"type":"grammar","syntax":"regex","definition":"[0-9]+"}},` +
		`"b":{"type":"string","x-grammar":{"type":"grammar","syntax":"regex","definition":"[a-z]+"}}}}`)
	b = renderArgRules(two)
	if !strings.Contains(b.rules, "\x00--g0-start ::= [0-9]+") || !strings.Contains(b.rules, "\x00--g1-start ::= [a-z]+") {
		t.Errorf("two grammars:\n%s", b.rules)
	}
}

// TestStructuralTag_CustomToolCarriesItsGrammar: in every format the tag of a
// custom tool holds its arguments' GBNF as a grammar content, the other tools
// keep their schemas, and the catalog's pieces give the same bytes as a render
// from scratch.
func TestStructuralTag_CustomToolCarriesItsGrammar(t *testing.T) {
	params := map[string]json.RawMessage{
		"apply_patch": customParams(applyPatchFormat(t)),
		"get_file":    json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}}}`),
	}
	for _, c := range fmtCases {
		spec := Spec{Format: c.f, Allowed: []string{"get_file", "apply_patch"}, Mode: ModeAuto}
		tag, err := StructuralTag(spec, params)
		if err != nil {
			t.Fatal(err)
		}
		var v struct {
			Format struct {
				Tags []struct {
					Begin   string          `json:"begin"`
					Content json.RawMessage `json:"content"`
				} `json:"tags"`
			} `json:"format"`
		}
		if err := json.Unmarshal(tag, &v); err != nil {
			t.Fatalf("%s: %v\n%s", c.f.Name, err, tag)
		}
		if len(v.Format.Tags) != 2 {
			t.Fatalf("%s: %d tags", c.f.Name, len(v.Format.Tags))
		}
		if got := string(v.Format.Tags[0].Content); got != `{"type":"json_schema","json_schema":{"type":"object","properties":{"path":{"type":"string"}}}}` {
			t.Errorf("%s: get_file content %s", c.f.Name, got)
		}
		var g struct{ Type, Grammar string }
		if err := json.Unmarshal(v.Format.Tags[1].Content, &g); err != nil || g.Type != "grammar" ||
			!strings.HasPrefix(g.Grammar, "root ::= a0\n") || !strings.Contains(g.Grammar, `"*** Begin Patch"`) {
			t.Errorf("%s: apply_patch content %.300s (%v)", c.f.Name, v.Format.Tags[1].Content, err)
		}
		cat := NewCatalog(params)
		for _, str := range []bool{false, true} {
			got, err := cat.appendStructuralTag(nil, spec, str)
			if err != nil {
				t.Fatal(err)
			}
			want := tag
			if str {
				var b bytes.Buffer
				enc := json.NewEncoder(&b)
				enc.SetEscapeHTML(false)
				if err := enc.Encode(string(tag)); err != nil {
					t.Fatal(err)
				}
				want = bytes.TrimSuffix(b.Bytes(), []byte("\n"))
			}
			if string(got) != string(want) {
				t.Errorf("%s (string %v): catalog's tag differs from StructuralTag's", c.f.Name, str)
			}
		}
	}
}

// BenchmarkRenderArgs_ApplyPatch is the per-catalog cost of a custom tool's arguments
// rules (the Lark translation included; a Catalog renders them once per version), and
// their size.
func BenchmarkRenderArgs_ApplyPatch(b *testing.B) {
	p := customParams(applyPatchFormat(b))
	var n int
	for b.Loop() {
		n = len(renderArgRules(p).rules)
	}
	b.ReportMetric(float64(n), "rule-bytes")
}
