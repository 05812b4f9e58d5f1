package toolsearch

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata")

// golden compares got with testdata/name, or writes it there with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs (-want +got); run go test -update if the change is meant:\n%s", path, cmp.Diff(string(want), string(got)))
	}
}

// corpus is the small fixed catalog of the golden tests.
func corpus(t testing.TB) *Catalog {
	t.Helper()
	tools, err := ReadFiles(filepath.Join("testdata", "corpus.json"))
	if err != nil {
		t.Fatal(err)
	}
	c, err := New(tools)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func mustClient(t testing.TB, js string) []Tool {
	t.Helper()
	tools, err := ParseClientTools([]byte(js))
	if err != nil {
		t.Fatal(err)
	}
	return tools
}

func names(rs []Result) []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = r.Name
	}
	return out
}
