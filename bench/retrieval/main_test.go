package main

import (
	"bytes"
	"encoding/json"
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
