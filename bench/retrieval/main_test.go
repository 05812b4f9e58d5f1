package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/maskgate/maskgate/toolsearch"
)

// sets returns the report's query sets by the name before " (", with their catalogs.
func sets(t *testing.T, rep *Report) map[string]Set {
	t.Helper()
	out := map[string]Set{}
	for _, c := range rep.Catalogs {
		for _, s := range c.Sets {
			name, _, _ := strings.Cut(s.Name, " (") // "development (queries.txt)"
			out[name] = s
		}
	}
	if len(out) != 3 || out["development"].Rows == nil || out["held out"].Rows == nil || out["MCP servers"].Rows == nil {
		t.Fatalf("query sets %v, want development, held out and MCP servers", out)
	}
	return out
}

func rows(s Set) map[string]Row {
	by := map[string]Row{}
	for _, r := range s.Rows {
		by[r.Search] = r
	}
	return by
}

// The evaluation is exact, so the test asserts the report's shape and the one claim the
// search makes: the full lexical search finds the right tool in the first five more often
// than plain BM25, on the development queries, the held-out ones and those of the MCP
// catalog. If a change breaks that, improve the search; do not loosen the test.
func TestEvaluate_FullLexicalBeatsPlainBM25(t *testing.T) {
	rep, err := evaluate("testdata")
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Catalogs) != 2 {
		t.Fatalf("%d catalogs, want the development one and the MCP servers'", len(rep.Catalogs))
	}
	if n := rep.Catalogs[0].Tools; n < 250 {
		t.Errorf("development catalog has %d tools, want about 300", n)
	}
	if n := rep.Catalogs[1].Tools; n < 100 {
		t.Errorf("MCP catalog has %d tools, want 100 or more", n)
	}
	total := 0
	for name, s := range sets(t, rep) {
		if len(s.Rows) != len(configs()) {
			t.Fatalf("%s: %d rows, want %d", name, len(s.Rows), len(configs()))
		}
		for _, r := range s.Rows {
			if !(0 <= r.Recall1 && r.Recall1 <= r.Recall5 && r.Recall5 <= 1) || r.MRR < r.Recall1 || r.MRR > 1 ||
				r.Empty > r.Short || r.Short > r.Queries {
				t.Errorf("%s %s: figures out of order: %+v", name, r.Search, r)
			}
		}
		by := rows(s)
		total += by[fullNoCut].Queries
		plain, full := by[plainBM25], by[fullNoCut]
		if full.Recall5 <= plain.Recall5 {
			t.Errorf("%s: full lexical recall@5 %.3f does not beat plain BM25 %.3f", name, full.Recall5, plain.Recall5)
		}
		if full.MRR <= plain.MRR {
			t.Errorf("%s: full lexical MRR %.3f does not beat plain BM25 %.3f", name, full.MRR, plain.MRR)
		}
	}
	if total < 200 {
		t.Errorf("%d labelled queries, want about 216", total)
	}
	for _, c := range rep.Catalogs {
		if len(c.Cuts) != len(cuts()) {
			t.Fatalf("%s: %d cuts, want %d", c.Name, len(c.Cuts), len(cuts()))
		}
		for _, x := range c.Cuts {
			if x.Right == 0 || x.OffTopic == 0 || x.RightKept > x.Right || x.OffTopicEmpty > x.OffTopic {
				t.Errorf("%s: cut figures %+v", c.Name, x)
			}
		}
	}
}

// What the search does with no configuration (SearchOptions zero, the default cut). The
// ranking was never tuned on the held-out or MCP sets, but the relative cut was chosen
// with their results in view (commit 3dcc0bf cites them). The margins allow a query or
// two to move; a change that costs more than that must show why here.
func TestEvaluate_DefaultCut(t *testing.T) {
	rep, err := evaluate("testdata")
	if err != nil {
		t.Fatal(err)
	}
	measured := map[string]float64{"development": 0.867, "held out": 0.925, "MCP servers": 0.857}
	for name, s := range sets(t, rep) {
		by := rows(s)
		def, none, old, plain := by[defaultCut], by[fullNoCut], by[oldCut], by[plainBM25]
		if def.Recall5 < measured[name]-0.02 {
			t.Errorf("%s: default recall@5 %.3f, measured %.3f", name, def.Recall5, measured[name])
		}
		if def.Recall5 < plain.Recall5 || def.MRR < plain.MRR {
			t.Errorf("%s: default recall@5 %.3f, MRR %.3f below plain BM25's %.3f, %.3f", name, def.Recall5, def.MRR, plain.Recall5, plain.MRR)
		}
		// The cut may cost at most one right answer a set against the ranking alone.
		if lost := (none.Recall5 - def.Recall5) * float64(def.Queries); lost > 1.001 {
			t.Errorf("%s: the default cut loses %.0f right answers in the first five (recall@5 %.3f, without a cut %.3f)", name, lost, def.Recall5, none.Recall5)
		}
		if def.Recall5 < old.Recall5 || def.Empty > old.Empty {
			t.Errorf("%s: default recall@5 %.3f with %d queries answered with nothing; min_score 0.1: %.3f, %d",
				name, def.Recall5, def.Empty, old.Recall5, old.Empty)
		}
		if want := map[string]int{"development": 1}[name]; def.Empty != want {
			t.Errorf("%s: %d queries answered with nothing, want %d", name, def.Empty, want)
		}
	}
	// Off-topic requests with no result: 15 of 20 on the development catalog, 14 of 20 on
	// the MCP one (min_score 0.1: 16 and 16).
	for i, want := range []int{15, 14} {
		c := rep.Catalogs[i]
		for _, x := range c.Cuts {
			if x.Cut != "default" {
				continue
			}
			if x.OffTopicEmpty < want-2 || 2*x.OffTopicEmpty <= x.OffTopic {
				t.Errorf("%s: the default cut leaves %d of %d off-topic queries with no result, measured %d", c.Name, x.OffTopicEmpty, x.OffTopic, want)
			}
			if x.RightKept < x.Right-1 {
				t.Errorf("%s: the default cut keeps %d of %d right answers", c.Name, x.RightKept, x.Right)
			}
		}
	}
}

// The figures docs/benchmarks.md's tool-search section (once the README's) quotes,
// which this evaluation produces exactly (counts over fixed query sets, no randomness):
// every row of its table, each as quoted to the page's three decimals, the queries left
// with no result, and the cut's counts. The only margin is the rounding of the last
// decimal. A change to the search that moves one changes the page with it.
func TestEvaluate_TheREADMEFigures(t *testing.T) {
	rep, err := evaluate("testdata")
	if err != nil {
		t.Fatal(err)
	}
	type figures struct {
		r1, r5, mrr float64
		empty       int // queries answered with nothing
	}
	const readmeOldCut = "the old absolute cut (`min_score: 0.1`)"
	// The README's rows, by the name it prints, and the evaluation's row behind each.
	readmeRows := []struct{ readme, search string }{
		{"plain BM25", plainBM25},
		{"**maskgate, default**", defaultCut},
		{readmeOldCut, oldCut},
		{"keyword scorer (name 3, keywords 2, description 1)", "keyword scorer"},
	}
	want := map[string]map[string]figures{
		"development": {
			plainBM25:        {0.425, 0.700, 0.542, 1},
			defaultCut:       {0.633, 0.867, 0.735, 1}, // "will it rain in Seattle this weekend"
			oldCut:           {0.633, 0.825, 0.719, 4},
			"keyword scorer": {0.492, 0.808, 0.612, 0},
		},
		"held out": {
			plainBM25:        {0.525, 0.850, 0.658, 0},
			defaultCut:       {0.700, 0.925, 0.790, 0},
			oldCut:           {0.700, 0.925, 0.790, 0},
			"keyword scorer": {0.575, 0.875, 0.721, 0},
		},
		"MCP servers": {
			plainBM25:        {0.607, 0.750, 0.674, 0},
			defaultCut:       {0.714, 0.857, 0.778, 0}, // "the default leaves none empty"
			oldCut:           {0.714, 0.857, 0.778, 4}, // "the old absolute 0.1 left 4 MCP queries with no result"
			"keyword scorer": {0.625, 0.786, 0.689, 0},
		},
	}
	readme, err := os.ReadFile(filepath.Join("..", "..", "docs", "benchmarks.md"))
	if err != nil {
		t.Fatal(err)
	}
	// The table: from its header to the first line that is not a row.
	_, table, ok := strings.Cut(string(readme), "\n| search | dev R@1 | dev R@5 | dev MRR | held-out R@1 |")
	table, _, _ = strings.Cut(table, "\n\n")
	if !ok {
		t.Fatal("docs/benchmarks.md has no tool-search table (| search | dev R@1 | …)")
	}
	all := sets(t, rep)
	for _, rr := range readmeRows {
		// The README's row: its name, then dev, held-out and MCP recall@1, recall@5, MRR.
		var cells []string
		for _, line := range strings.Split(table, "\n") {
			if strings.HasPrefix(line, "| "+rr.readme+" |") {
				cells = strings.Split(strings.Trim(line, "| "), " | ")
			}
		}
		if len(cells) != 10 {
			t.Errorf("docs/benchmarks.md: no tool-search row %q with nine figures (%q)", rr.readme, cells)
			continue
		}
		for k, set := range []string{"development", "held out", "MCP servers"} {
			w := want[set][rr.search]
			r := rows(all[set])[rr.search]
			for m, f := range []struct {
				name      string
				got, want float64
			}{{"recall@1", r.Recall1, w.r1}, {"recall@5", r.Recall5, w.r5}, {"MRR", r.MRR, w.mrr}} {
				if math.Abs(f.got-f.want) > 0.0005 {
					t.Errorf("%s, %s: %s %.4f; this test holds %.3f", set, rr.search, f.name, f.got, f.want)
				}
				if quoted := strings.Trim(cells[1+3*k+m], "*"); quoted != fmt.Sprintf("%.3f", f.want) {
					t.Errorf("docs/benchmarks.md row %q, %s %s: %s; the evaluation gives %.3f", rr.readme, set, f.name, quoted, f.want)
				}
			}
			if r.Queries == 0 || r.Empty != w.empty {
				t.Errorf("%s, %s: %d of %d queries answered with nothing, want %d", set, rr.search, r.Empty, r.Queries, w.empty)
			}
		}
	}
	// The MCP set: 56 queries (13 lexical, 26 paraphrased, 17 hard), 8 of them missed in
	// the first five, all by the ranking: the default cut's recall equals no cut's.
	mcp := rows(all["MCP servers"])
	if d, n := mcp[defaultCut], mcp[fullNoCut]; d.Queries != 56 || d.Recall5 != n.Recall5 || math.Round((1-d.Recall5)*56) != 8 {
		t.Errorf("MCP set: %d queries, default recall@5 %.3f, without a cut %.3f; the README says 56, 8 misses, all the ranking's", d.Queries, d.Recall5, n.Recall5)
	}
	// The cuts the README quotes: the default keeps 150 of the 151 right answers found in
	// the top 10 on the development catalog (min_score 0.1: 143) and 50 of 50 on the MCP
	// one, and leaves 15 and 14 of 20 off-topic requests with no result (0.1: 16 and 16).
	type cut struct{ kept, right, empty, offTopic int }
	wantCuts := []map[string]cut{
		{"default": {150, 151, 15, 20}, "min_score 0.1": {143, 151, 16, 20}},
		{"default": {50, 50, 14, 20}, "min_score 0.1": {50, 50, 16, 20}},
	}
	for i, c := range rep.Catalogs {
		seen := 0
		for _, x := range c.Cuts {
			for prefix, w := range wantCuts[i] {
				if !strings.HasPrefix(x.Cut, prefix) {
					continue
				}
				seen++
				if got := (cut{x.RightKept, x.Right, x.OffTopicEmpty, x.OffTopic}); got != w {
					t.Errorf("%s, %s: keeps %d of %d right answers, leaves %d of %d off-topic queries empty; the README quotes %d of %d, %d of %d",
						c.Name, x.Cut, got.kept, got.right, got.empty, got.offTopic, w.kept, w.right, w.empty, w.offTopic)
				}
			}
		}
		if seen != 2 {
			t.Errorf("%s: found %d of the README's 2 cuts", c.Name, seen)
		}
	}
}

// The MCP catalog is the servers' own tools/list, one file a server, each named in the
// README with the package and version it came from, every tool named SERVER_TOOL as the
// gateway names an MCP server's tools.
func TestMCPCatalog_Provenance(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "mcp", "*.json"))
	if err != nil || len(files) < 10 {
		t.Fatalf("%d MCP tools files (%v), want one for each of about a dozen servers", len(files), err)
	}
	readme, err := os.ReadFile(filepath.Join("testdata", "mcp", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	total := 0
	for _, f := range files {
		server := strings.TrimSuffix(filepath.Base(f), ".json")
		if !strings.Contains(string(readme), "| "+server+" | ") {
			t.Errorf("README.md does not list %s", server)
		}
		tools, err := toolsearch.ReadFiles(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, tool := range tools {
			if !strings.HasPrefix(tool.Name, server+"_") {
				t.Errorf("%s: tool %s is not named %s_TOOL", f, tool.Name, server)
			}
		}
		total += len(tools)
	}
	if total < 100 {
		t.Errorf("%d MCP tools, want 100 or more", total)
	}
}

// catalog.json is generated; it must match its spec.
func TestCatalog_MatchesSpec(t *testing.T) {
	got, err := generate("testdata")
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile(filepath.Join("testdata", "catalog.json"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Error("testdata/catalog.json is stale: run go run ./bench/retrieval -gen")
	}
	var tools []json.RawMessage
	if err := json.Unmarshal(want, &tools); err != nil {
		t.Fatal(err)
	}
	// About 150 tokens a tool, at about 4 bytes a token.
	if per := len(want) / len(tools); per < 300 || per > 1200 {
		t.Errorf("%d bytes a tool; want the size of real MCP tool definitions", per)
	}
}

func TestRun_PrintsMarkdownAndJSON(t *testing.T) {
	var out bytes.Buffer
	js := filepath.Join(t.TempDir(), "r.json")
	if err := run([]string{"-data", "testdata", "-json", js, "-v", "lexical (full)"}, &out); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"| search | recall@1 | recall@5 | MRR@10 | no result | under 5 |", "| BM25 plain |", "| keyword scorer |",
		"| lexical, default cut |", "| min_score 0.1 (the old default) |", "MCP servers (mcp_queries.txt)", "not first"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	var rep Report
	if b, err := os.ReadFile(js); err != nil || json.Unmarshal(b, &rep) != nil || len(rep.Catalogs) != 2 || len(rep.Catalogs[1].Sets) != 1 {
		t.Errorf("JSON report: %v, %+v", err, rep)
	}
}

func TestParseSpec_ErrorsNameFileAndLine(t *testing.T) {
	_, err := parseSpec(strings.NewReader("service x y\ntool a\n  Text.\n  - @missing*\n"), "s.txt", map[string]specParam{})
	if err == nil || !strings.Contains(err.Error(), "s.txt:4:") {
		t.Errorf("err = %v", err)
	}
}
