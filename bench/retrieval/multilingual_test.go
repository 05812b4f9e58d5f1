package main

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode"

	"github.com/maskgate/maskgate/toolsearch"
)

// The multilingual figures docs/benchmarks.md quotes, read from its tables (one for the
// development sets, one for the held-out sets), which this evaluation produces exactly
// (fixed sets, no randomness): every cell of every row, to the page's three decimals, and
// every set's size. The only margin is the last decimal's rounding, by comparing the
// printed figure. A change to the search that moves one changes the page with it.
func TestMultilingual_TheDocsFigures(t *testing.T) {
	ms, err := evaluateMultilingual("testdata")
	if err != nil {
		t.Fatal(err)
	}
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "benchmarks.md"))
	if err != nil {
		t.Fatal(err)
	}
	// Each layout's table, by the first cell of its header, and the catalog size the
	// page gives beside it (146 MCP tools, 57 CJK, 155 held-out servers').
	tables := map[string]struct {
		header string
		tools  int
	}{
		"development": {"development sets", 146 + 57},
		"held out":    {"held-out sets", 146 + 57 + 155},
	}
	// The page's rows, by the name it prints, and the evaluation's row behind each.
	pageRows := map[string]string{
		"plain BM25":                  plainBM25,
		"ranking alone, no score cut": fullNoCut,
		"**maskgate, default**":       defaultCut,
	}
	if len(ms) != len(tables) {
		t.Fatalf("%d multilingual layouts, want %d", len(ms), len(tables))
	}
	for _, m := range ms {
		tb, ok := tables[m.Name]
		if !ok {
			t.Fatalf("layout %q has no table on the page", m.Name)
		}
		if m.Tools != tb.tools {
			t.Errorf("%s: catalog has %d tools, want %d", m.Name, m.Tools, tb.tools)
		}
		header, rows := docsTable(t, string(doc), tb.header)
		// The header: the sets, each with its size: "zh (26)".
		if want := len(languages) + 1; len(header) != want || len(m.Sets) != want {
			t.Fatalf("%s: the page's table has %d sets, the evaluation %d; want %d", m.Name, len(header), len(m.Sets), want)
		}
		for i, s := range m.Sets {
			if want := fmt.Sprintf("%s (%d)", s.Name, s.Rows[0].Queries); header[i] != want {
				t.Errorf("%s: column %d is %q; the evaluation gives %q", m.Name, i+1, header[i], want)
			}
		}
		seen := 0
		for name, search := range pageRows {
			cells, ok := rows[name]
			if !ok {
				t.Errorf("%s: the page has no row %q", m.Name, name)
				continue
			}
			seen++
			if len(cells) != len(m.Sets) {
				t.Errorf("%s, %s: %d cells, want %d", m.Name, name, len(cells), len(m.Sets))
				continue
			}
			for i, s := range m.Sets {
				var r *MLRow
				for j := range s.Rows {
					if s.Rows[j].Search == search {
						r = &s.Rows[j]
					}
				}
				if r == nil {
					t.Fatalf("%s, %s: no %s row", m.Name, s.Name, search)
				}
				if !(0 <= r.Recall5 && r.Recall5 <= r.Recall10 && r.Recall10 <= 1 && 0 <= r.MRR && r.MRR <= 1) {
					t.Errorf("%s, %s, %s: figures out of order: %+v", m.Name, s.Name, search, r)
				}
				want := fmt.Sprintf("%.3f / %.3f / %.3f", r.Recall5, r.Recall10, r.MRR)
				if got := strings.Trim(cells[i], "*"); got != want {
					t.Errorf("%s, %s, row %q: the page quotes %s; the evaluation gives %s", m.Name, s.Name, name, got, want)
				}
			}
		}
		if seen != len(pageRows) {
			t.Errorf("%s: found %d of the page's %d rows", m.Name, seen, len(pageRows))
		}
	}
}

// docsTable finds the Markdown table whose header's first cell is first and returns the
// header's other cells and each row's cells after its first, by that first cell.
func docsTable(t *testing.T, doc, first string) ([]string, map[string][]string) {
	t.Helper()
	_, table, ok := strings.Cut(doc, "\n| "+first+" |")
	if !ok {
		t.Fatalf("docs/benchmarks.md has no table headed %q", first)
	}
	table, _, _ = strings.Cut(table, "\n\n")
	lines := strings.Split(table, "\n")
	header := strings.Split(strings.Trim(lines[0], "| "), " | ")
	rows := map[string][]string{}
	for _, line := range lines[1:] {
		if strings.HasPrefix(line, "|-") {
			continue // the separator row
		}
		if !strings.HasPrefix(line, "| ") {
			break
		}
		cells := strings.Split(strings.Trim(line, "| "), " | ")
		rows[cells[0]] = cells[1:]
	}
	return header, rows
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
	// The README says 57 tools, 27 described in Chinese and 3 in Korean.
	provenance(t, "mcp_cjk", 5, 57, 30)
}

// The held-out sets' six servers, likewise: 155 tools, those of Chatwork and freee (31 +
// 15) described in Japanese, those of stock-sdk and universal-db-mcp (26 + 9) in Chinese.
func TestMCPHeldoutCatalog_Provenance(t *testing.T) {
	provenance(t, "mcp_heldout", 6, 155, 31+15+26+9)
}

// provenance checks a catalog directory of servers' tools files against its README: each
// server listed, each tool named SERVER_TOOL, and the counts of servers, tools and tools
// described in Chinese, Japanese or Korean.
func provenance(t *testing.T, dir string, servers, tools, cjk int) {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("testdata", dir, "*.json"))
	if err != nil || len(files) != servers {
		t.Fatalf("%s: %d tools files (%v), want %d servers'", dir, len(files), err, servers)
	}
	readme, err := os.ReadFile(filepath.Join("testdata", dir, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	total, described := 0, 0
	for _, f := range files {
		server := strings.TrimSuffix(filepath.Base(f), ".json")
		ts, err := toolsearch.ReadFiles(f)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(readme), "| "+server+" | ") {
			t.Errorf("%s/README.md does not list %s", dir, server)
		}
		for _, tool := range ts {
			if !strings.HasPrefix(tool.Name, server+"_") {
				t.Errorf("%s: tool %s is not named %s_TOOL", f, tool.Name, server)
			}
			for _, r := range tool.Description {
				if r >= 0x3040 {
					described++
					break
				}
			}
		}
		total += len(ts)
	}
	if total != tools || described != cjk {
		t.Errorf("%s: %d tools, %d described in Chinese, Japanese or Korean; the README says %d and %d", dir, total, described, tools, cjk)
	}
}

// docs/benchmarks.md: "three of the 17 tasks, one Japanese and two Korean, get none of
// their steps" in the held-out task set, with the default search.
func TestMultilingual_HeldOutTasksWithNoStepFound(t *testing.T) {
	l := mlLayouts[1]
	if l.name != "held out" {
		t.Fatalf("mlLayouts[1] is %q, want the held-out one", l.name)
	}
	cat, err := mlCatalog("testdata", l)
	if err != nil {
		t.Fatal(err)
	}
	ts, err := readTasks(filepath.Join("testdata", l.tasks), cat)
	if err != nil {
		t.Fatal(err)
	}
	ix := toolsearch.NewIndex(cat, toolsearch.Options{})
	byScript := map[string]int{}
	for _, tk := range ts {
		res := ix.Search(tk.text, toolsearch.SearchOptions{TopK: 10})
		if _, r10, _ := taskScore(res, tk); r10 > 0 {
			continue
		}
		script := "other"
		for _, r := range tk.text {
			switch {
			case r >= 0xAC00 && r <= 0xD7AF:
				script = "Korean"
			case r >= 0x3040 && r <= 0x30FF && script != "Korean":
				script = "Japanese"
			}
		}
		byScript[script]++
	}
	if want := map[string]int{"Japanese": 1, "Korean": 2}; fmt.Sprint(byScript) != fmt.Sprint(want) || len(ts) != 17 {
		t.Errorf("%d tasks; with no step in the first ten: %v; the page says 17, and %v", len(ts), byScript, want)
	}
}

// The overlap rule of testdata/mcp_queries.txt, the part of it a program can check: no
// query or task of any set repeats another's words (letters and digits, case folded).
// Near copies, the same action on the same kind of object in other words, were judged by
// hand when each set was written, as its header says.
func TestSets_NoQueryRepeatsAnother(t *testing.T) {
	files := []string{"queries.txt", "heldout.txt", "mcp_queries.txt"}
	for _, l := range mlLayouts {
		for _, lang := range languages {
			files = append(files, filepath.Join(l.queries, lang+".txt"))
		}
		files = append(files, l.tasks)
	}
	seen := map[string]string{}
	n := 0
	for _, f := range files {
		lines, err := readLines(filepath.Join("testdata", f))
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range lines {
			text, _, _ := strings.Cut(line, "|")
			var key strings.Builder
			for _, r := range strings.ToLower(text) {
				if unicode.IsLetter(r) || unicode.IsDigit(r) {
					key.WriteRune(r)
				}
			}
			at := fmt.Sprintf("%s query %d", f, i+1)
			if prev, ok := seen[key.String()]; ok {
				t.Errorf("%s repeats %s: %q", at, prev, strings.TrimSpace(text))
			}
			seen[key.String()] = at
			n++
		}
	}
	if n != 404 {
		t.Errorf("%d queries read, want every set's (404)", n)
	}
}
