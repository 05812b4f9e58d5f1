package main

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/maskgate/maskgate/toolsearch"
)

// The figures the README's multilingual table quotes, which this evaluation produces
// exactly (fixed sets, no randomness), to its three decimals; and the claims the README
// makes of them. Measured once, the sets having been committed before any search ran on
// them (git log testdata/multilingual testdata/tasks.txt); a change to the search that
// moves a figure changes the README with it.
func TestMultilingual_TheREADMEFigures(t *testing.T) {
	m, err := evaluateMultilingual("testdata")
	if err != nil {
		t.Fatal(err)
	}
	if m.Tools != 203 {
		t.Errorf("multilingual catalog has %d tools, want 146 + 57", m.Tools)
	}
	type figures struct {
		n            int
		r5, r10, mrr float64
	}
	want := map[string]map[string]figures{
		"zh":    {plainBM25: {26, 0.808, 0.808, 0.788}, fullNoCut: {26, 0.808, 0.808, 0.788}, defaultCut: {26, 0.808, 0.808, 0.788}},
		"ja":    {plainBM25: {16, 0.250, 0.250, 0.203}, fullNoCut: {16, 0.250, 0.250, 0.208}, defaultCut: {16, 0.250, 0.250, 0.208}},
		"ko":    {plainBM25: {15, 0.467, 0.467, 0.422}, fullNoCut: {15, 0.467, 0.467, 0.417}, defaultCut: {15, 0.467, 0.467, 0.417}},
		"en":    {plainBM25: {18, 0.778, 0.833, 0.759}, fullNoCut: {18, 0.889, 0.889, 0.833}, defaultCut: {18, 0.889, 0.889, 0.833}},
		taskSet: {plainBM25: {17, 0.647, 0.721, 0.828}, fullNoCut: {17, 0.745, 0.745, 0.833}, defaultCut: {17, 0.745, 0.745, 0.833}},
	}
	seen := 0
	by := map[string]map[string]MLRow{}
	for _, s := range m.Sets {
		by[s.Name] = map[string]MLRow{}
		for _, r := range s.Rows {
			by[s.Name][r.Search] = r
			if !(0 <= r.Recall5 && r.Recall5 <= r.Recall10 && r.Recall10 <= 1 && 0 <= r.MRR && r.MRR <= 1) {
				t.Errorf("%s, %s: figures out of order: %+v", s.Name, r.Search, r)
			}
			w, ok := want[s.Name][r.Search]
			if !ok {
				continue
			}
			seen++
			if r.Queries != w.n {
				t.Errorf("%s: %d queries, the README says %d", s.Name, r.Queries, w.n)
			}
			for _, f := range []struct {
				name      string
				got, want float64
			}{{"recall@5", r.Recall5, w.r5}, {"recall@10", r.Recall10, w.r10}, {"MRR@10", r.MRR, w.mrr}} {
				if math.Abs(f.got-f.want) > 0.0005 {
					t.Errorf("%s, %s: %s %.4f; the README quotes %.3f", s.Name, r.Search, f.name, f.got, f.want)
				}
			}
		}
	}
	if seen != 15 {
		t.Errorf("found %d of the README's 15 rows", seen)
	}
	// The README's claims: a Chinese query finds its Chinese-described tool in the first
	// five four times in five; the default search finds more of a task's steps in the
	// first five than plain BM25, and is not below it on English.
	if r := by["zh"][defaultCut]; r.Recall5 < 0.75 {
		t.Errorf("zh: default recall@5 %.3f, want 0.75 or more", r.Recall5)
	}
	if d, p := by[taskSet][defaultCut], by[taskSet][plainBM25]; d.Recall5 <= p.Recall5 {
		t.Errorf("tasks: default recall@5 %.3f does not beat plain BM25's %.3f", d.Recall5, p.Recall5)
	}
	if d, p := by["en"][defaultCut], by["en"][plainBM25]; d.Recall5 < p.Recall5 || d.MRR < p.MRR {
		t.Errorf("en: default %+v below plain BM25 %+v", d, p)
	}
}

// A task's recall is the share of its steps found; its MRR the first right tool's rank.
func TestTaskScore(t *testing.T) {
	res := []toolsearch.Result{{Name: "x"}, {Name: "b"}, {Name: "y"}, {Name: "y2"}, {Name: "y3"}, {Name: "y4"}, {Name: "c"}}
	r5, r10, rr := taskScore(res, task{steps: [][]string{{"a", "b"}, {"c"}, {"d"}}})
	if math.Abs(r5-1.0/3) > 1e-9 || math.Abs(r10-2.0/3) > 1e-9 || rr != 0.5 {
		t.Errorf("taskScore = %v, %v, %v; want 1/3, 2/3, 1/2", r5, r10, rr)
	}
	if r5, r10, rr := taskScore(nil, task{steps: [][]string{{"a"}, {"b"}}}); r5 != 0 || r10 != 0 || rr != 0 {
		t.Errorf("no results: %v, %v, %v", r5, r10, rr)
	}
}

func TestReadTasks_ErrorsNameFileAndTask(t *testing.T) {
	c, err := toolsearch.New([]toolsearch.Tool{{Name: "a"}, {Name: "b"}})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for body, want := range map[string]string{
		"do x | a/b, c\n": `task 1: no tool "c"`,
		"do x | a\n":      "task 1: 1 step",
		"# only\n":        "no tasks",
		"do x\n":          "task 1: want TEXT",
	} {
		path := filepath.Join(dir, "t.txt")
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := readTasks(path, c); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: err = %v, want %q", body, err, want)
		}
	}
	path := filepath.Join(dir, "t.txt")
	if err := os.WriteFile(path, []byte("do x | a/b, b\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if ts, err := readTasks(path, c); err != nil || len(ts) != 1 || len(ts[0].steps) != 2 || len(ts[0].steps[0]) != 2 {
		t.Errorf("readTasks = %+v, %v", ts, err)
	}
}

// The CJK servers' tools are their own tools/list, one file a server, each listed in the
// README with its package and version and named SERVER_TOOL.
func TestMCPCJKCatalog_Provenance(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "mcp_cjk", "*.json"))
	if err != nil || len(files) != 5 {
		t.Fatalf("%d tools files (%v), want five servers'", len(files), err)
	}
	readme, err := os.ReadFile(filepath.Join("testdata", "mcp_cjk", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	total, cjk := 0, 0
	for _, f := range files {
		server := strings.TrimSuffix(filepath.Base(f), ".json")
		tools, err := toolsearch.ReadFiles(f)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(readme), "| "+server+" | ") {
			t.Errorf("README.md does not list %s", server)
		}
		for _, tool := range tools {
			if !strings.HasPrefix(tool.Name, server+"_") {
				t.Errorf("%s: tool %s is not named %s_TOOL", f, tool.Name, server)
			}
			for _, r := range tool.Description {
				if r >= 0x3040 {
					cjk++
					break
				}
			}
		}
		total += len(tools)
	}
	if total != 57 || cjk != 30 {
		t.Errorf("%d tools, %d described in Chinese or Korean; the README says 57 and 27 + 3", total, cjk)
	}
}
