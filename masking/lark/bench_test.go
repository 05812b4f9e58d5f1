package lark

import "testing"

// BenchmarkTranslate_ApplyPatch is the cost of reading and rendering Codex's
// apply_patch grammar, what a request carrying it pays when it is checked.
func BenchmarkTranslate_ApplyPatch(b *testing.B) {
	src := codexGrammar(b, "apply_patch")
	b.ReportAllocs()
	for b.Loop() {
		g, err := Parse(src)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := g.Standalone(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkParse_JSRepl is the check alone for js_repl (regex terminals, no
// imports).
func BenchmarkParse_JSRepl(b *testing.B) {
	src := codexGrammar(b, "js_repl")
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Parse(src); err != nil {
			b.Fatal(err)
		}
	}
}
