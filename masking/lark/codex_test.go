package lark

import (
	"os"
	"path/filepath"
	"testing"
)

// codexGrammar reads one of the grammars Codex ships (testdata/codex,
// provenance in SOURCE.md).
func codexGrammar(t testing.TB, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "codex", name+".lark"))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// membership is a text and whether a grammar must accept it whole.
type membership struct {
	name   string
	text   string
	accept bool
}

// codexCases are, per Codex grammar, texts it must accept and refuse. The
// valid patches follow Codex's own apply_patch instructions and its test
// fixtures (codex-rs/apply-patch/tests/fixtures/scenarios).
var codexCases = map[string][]membership{
	"apply_patch": {
		{"add file", "*** Begin Patch\n*** Add File: hello.txt\n+Hello world\n*** End Patch\n", true},
		{"end without newline", "*** Begin Patch\n*** Add File: a.txt\n+x\n*** End Patch", true},
		{"update with context and move", "*** Begin Patch\n*** Update File: src/app.py\n*** Move to: src/main.py\n@@ def greet():\n-print(\"Hi\")\n+print(\"Hello, world!\")\n*** End Patch\n", true},
		{"delete and update, bare @@, end of file", "*** Begin Patch\n*** Delete File: obsolete.txt\n*** Update File: b.txt\n@@\n line\n-old\n+new\n*** End of File\n*** End Patch\n", true},
		{"unicode", "*** Begin Patch\n*** Update File: foo.txt\n@@\n-héllo\n+wörld ✓\n*** End Patch\n", true},
		{"update without changes", "*** Begin Patch\n*** Update File: c.txt\n*** End Patch\n", true},
		{"JSON-wrapped", `{"input": "*** Begin Patch\n*** Add File: a.txt\n+x\n*** End Patch\n"}`, false},
		{"no begin marker", "*** Add File: a.txt\n+x\n*** End Patch\n", false},
		{"no end marker", "*** Begin Patch\n*** Add File: a.txt\n+x\n", false},
		{"no hunk", "*** Begin Patch\n*** End Patch\n", false},
		{"added line without +", "*** Begin Patch\n*** Add File: a.txt\nx\n*** End Patch\n", false},
		{"add without lines", "*** Begin Patch\n*** Add File: a.txt\n*** End Patch\n", false},
		{"empty filename", "*** Begin Patch\n*** Delete File: \n*** End Patch\n", false},
		{"unified diff header", "--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n", false},
		{"change line without prefix", "*** Begin Patch\n*** Update File: a\n@@\nplain\n*** End Patch\n", false},
		{"text after the end", "*** Begin Patch\n*** Delete File: a\n*** End Patch\nmore", false},
	},
	"exec": {
		{"plain source", "console.log(1)", true},
		{"pragma then source", "// @exec: yield_time_ms=1000\nawait run()\n", true},
		{"pragma with CRLF", "  // @exec: x\r\ny", true},
		{"empty", "", false},
	},
	"js_repl": {
		{"plain source", "const x = await fetch(url);\nx.status", true},
		{"pragma then source", "// codex-js-repl: timeout_ms=15000\nlet a = 1", true},
		{"leading whitespace", "\n  foo()", true},
		{"one backtick then code", "`a${b}`", true},
		{"JSON object", `{"code": "1+1"}`, false},
		{"quoted string", `"1+1"`, false},
		{"markdown fence", "```js\n1+1\n```", false},
		{"empty", "", false},
		{"whitespace only", "  \n", false},
	},
}

func TestCodexGrammars_Parse(t *testing.T) {
	for name := range codexCases {
		g, err := Parse(codexGrammar(t, name))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if _, err := g.Standalone(); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
}
