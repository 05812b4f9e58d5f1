package main

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The evaluation is exact, so the test asserts the report's shape and the one claim the
// search makes: the full lexical search finds the right tool in the first five more often
// than plain BM25, on the development queries and on the held-out ones. If a change breaks
// that, improve the search; do not loosen the test.
func TestEvaluate_FullLexicalBeatsPlainBM25(t *testing.T) {
	rep, err := evaluate("testdata")
	if err != nil {
		t.Fatal(err)
	}
	if rep.Tools < 250 {
		t.Errorf("catalog has %d tools, want about 300", rep.Tools)
	}
	if len(rep.Sets) != 2 {
		t.Fatalf("%d query sets, want development and held out", len(rep.Sets))
	}
	total := 0
	for _, s := range rep.Sets {
		if len(s.Rows) != len(configs()) {
			t.Fatalf("%s: %d rows, want %d", s.Name, len(s.Rows), len(configs()))
		}
		by := map[string]Row{}
		for _, r := range s.Rows {
			by[r.Search] = r
			if !(0 <= r.Recall1 && r.Recall1 <= r.Recall5 && r.Recall5 <= 1) || r.MRR < r.Recall1 || r.MRR > 1 {
				t.Errorf("%s %s: figures out of order: %+v", s.Name, r.Search, r)
			}
		}
		total += by["lexical (full)"].Queries
		plain, full := by["BM25 plain"], by["lexical (full)"]
		if full.Recall5 <= plain.Recall5 {
			t.Errorf("%s: full lexical recall@5 %.3f does not beat plain BM25 %.3f", s.Name, full.Recall5, plain.Recall5)
		}
		if full.MRR <= plain.MRR {
			t.Errorf("%s: full lexical MRR %.3f does not beat plain BM25 %.3f", s.Name, full.MRR, plain.MRR)
		}
	}
	if total < 100 {
		t.Errorf("%d labelled queries, want about 100 or more", total)
	}
	th := rep.Threshold
	if th.Right == 0 || th.OffTopic == 0 || th.RightKept > th.Right || th.OffTopicEmpty > th.OffTopic {
		t.Errorf("threshold figures: %+v", th)
	}
}

// The figures the README's tool-search table quotes, which this evaluation produces
// exactly (counts over fixed query sets, no randomness): each must come out as quoted,
// to the README's three decimals. A change to the search that moves one changes the
// README with it.
func TestEvaluate_TheREADMEFigures(t *testing.T) {
	rep, err := evaluate("testdata")
	if err != nil {
		t.Fatal(err)
	}
	type figures struct{ r1, r5, mrr float64 }
	want := map[string]map[string]figures{
		"development": {
			"BM25 plain":     {0.425, 0.700, 0.542},
			"lexical (full)": {0.642, 0.875, 0.743},
			"keyword scorer": {0.492, 0.808, 0.612},
		},
		"held out": {
			"BM25 plain":     {0.525, 0.850, 0.658},
			"lexical (full)": {0.700, 0.925, 0.790},
			"keyword scorer": {0.575, 0.875, 0.721},
		},
	}
	seen := 0
	for _, s := range rep.Sets {
		set, _, _ := strings.Cut(s.Name, " (") // "development (queries.txt)"
		for _, r := range s.Rows {
			w, ok := want[set][r.Search]
			if !ok {
				continue
			}
			seen++
			for _, f := range []struct {
				name      string
				got, want float64
			}{{"recall@1", r.Recall1, w.r1}, {"recall@5", r.Recall5, w.r5}, {"MRR", r.MRR, w.mrr}} {
				if math.Abs(f.got-f.want) > 0.0005 {
					t.Errorf("%s, %s: %s %.4f; the README quotes %.3f", s.Name, r.Search, f.name, f.got, f.want)
				}
			}
		}
	}
	if seen != 6 {
		t.Errorf("found %d of the README's 6 rows", seen)
	}
	// README: at 0.1 min_score keeps 143 of the 151 right answers found in the top 10
	// and leaves 16 of 20 off-topic requests with no result.
	if th := rep.Threshold; th.MinScore != 0.1 || th.RightKept != 143 || th.Right != 151 || th.OffTopicEmpty != 16 || th.OffTopic != 20 {
		t.Errorf("min_score %g keeps %d of %d right answers and empties %d of %d off-topic queries; the README quotes 0.1, 143 of 151, 16 of 20",
			th.MinScore, th.RightKept, th.Right, th.OffTopicEmpty, th.OffTopic)
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
	for _, want := range []string{"| search | recall@1 | recall@5 | MRR@10 |", "| BM25 plain |", "| keyword scorer |", "min_score 0.1", "not first"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	var rep Report
	if b, err := os.ReadFile(js); err != nil || json.Unmarshal(b, &rep) != nil || len(rep.Sets) != 2 {
		t.Errorf("JSON report: %v, %+v", err, rep)
	}
}

func TestParseSpec_ErrorsNameFileAndLine(t *testing.T) {
	_, err := parseSpec(strings.NewReader("service x y\ntool a\n  Text.\n  - @missing*\n"), "s.txt", map[string]specParam{})
	if err == nil || !strings.Contains(err.Error(), "s.txt:4:") {
		t.Errorf("err = %v", err)
	}
}
