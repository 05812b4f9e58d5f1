package doclinks

import (
	"bytes"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"
)

// maxSourceLines is the most lines a non-test Go file may have: past it a file holds more
// than one concern, and is split along its seams (issue 29).
const maxSourceLines = 500

// oversized are files allowed past maxSourceLines, each with the line count it may not
// grow beyond; the test fails on an entry that is no longer needed, so the list only
// shrinks. It is empty: every file is within the limit.
var oversized = map[string]int{}

// TestSource_NoFileOverMaxLines: every non-test .go file of the repository has at most
// maxSourceLines lines (as wc -l counts them), but for the allow-listed ones above, which
// may only shrink.
func TestSource_NoFileOverMaxLines(t *testing.T) {
	lines := map[string]int{} // slash path relative to root → line count
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			// What the go command ignores: testdata, and folders starting with . or _.
			if p != root && (name == "testdata" || name == "node_modules" ||
				strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			return nil
		}
		body, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		lines[filepath.ToSlash(rel)] = bytes.Count(body, []byte("\n"))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// The walk must have seen the repository, not an empty folder.
	if n, ok := lines["config/config.go"]; !ok || n == 0 || len(lines) < 200 {
		t.Fatalf("walked %d non-test .go files under %s, config/config.go among them: %v; expected the whole repository", len(lines), root, ok)
	}

	for p, n := range lines {
		if allowed, ok := oversized[p]; ok {
			if n > allowed {
				t.Errorf("%s has %d lines, more than the %d it is allowed while it awaits its split: it may only shrink", p, n, allowed)
			}
			continue
		}
		if n > maxSourceLines {
			t.Errorf("%s has %d lines; at most %d: split it along its seams, one concern per file", p, n, maxSourceLines)
		}
	}
	for p, allowed := range oversized {
		if path.Dir(p) != "gateway" {
			t.Errorf("oversized lists %s; only files directly in gateway/ may wait there", p)
		}
		n, ok := lines[p]
		switch {
		case !ok:
			t.Errorf("oversized lists %s (%d lines), which is no longer a non-test .go file: remove the entry", p, allowed)
		case n <= maxSourceLines:
			t.Errorf("%s has %d lines, within %d: remove its entry from oversized", p, n, maxSourceLines)
		}
	}
}
