package toolsearch

import (
	"bufio"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// goldenQueries runs testdata/queries.txt against ix and formats the results.
func goldenQueries(t *testing.T, ix *Index) []byte {
	f, err := os.Open("testdata/queries.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var b strings.Builder
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		q := sc.Text()
		if q == "" || strings.HasPrefix(q, "#") {
			continue
		}
		fmt.Fprintf(&b, "%s\n", q)
		for _, r := range ix.Search(q, SearchOptions{}) {
			fmt.Fprintf(&b, "  %.3f %s: %s\n", r.Score, r.Name, r.Description)
		}
	}
	return []byte(b.String())
}

// Scores on a fixed corpus are golden: a change to tokenizing, weights or normalisation
// shows here as a diff to review.
func TestSearch_GoldenScores(t *testing.T) {
	c := corpus(t)
	golden(t, "search.golden.txt", goldenQueries(t, NewIndex(c, Options{})))
	golden(t, "search_keyword.golden.txt", goldenQueries(t, NewIndex(c, Options{Scorer: Keyword})))
	golden(t, "search_plain.golden.txt", goldenQueries(t, NewIndex(c, Options{Plain: true})))
}

func TestSearch_ScoresAreBetweenZeroAndOneAndOrdered(t *testing.T) {
	for _, o := range []Options{{}, {Scorer: Keyword}, {Plain: true}} {
		ix := NewIndex(corpus(t), o)
		for _, q := range []string{"create issue", "issue issue issue", "list calendar events", "x"} {
			rs := ix.Search(q, SearchOptions{TopK: -1, MinScore: -1})
			for i, r := range rs {
				if r.Score < 0 || r.Score > 1 || (i > 0 && r.Score > rs[i-1].Score) {
					t.Errorf("%+v %q: results %v", o, q, rs)
					break
				}
			}
		}
	}
}

func TestSearch_TopKAndMinScoreDefaults(t *testing.T) {
	ix := NewIndex(corpus(t), Options{})
	if got := ix.Search("file", SearchOptions{MinScore: -1}); len(got) != 5 {
		t.Errorf("default TopK: %d results", len(got))
	}
	for _, r := range ix.Search("create issue", SearchOptions{TopK: -1}) {
		if r.Score < 0.1 {
			t.Errorf("default MinScore let through %+v", r)
		}
	}
	if got := ix.Search("penguins and icebergs", SearchOptions{}); len(got) != 0 {
		t.Errorf("unrelated query found %v", got)
	}
}

func TestSearch_NamespaceQueriesReturnTheWholeNamespace(t *testing.T) {
	ix := NewIndex(corpus(t), Options{})
	want := []string{"github_create_issue", "github_list_issues", "github_merge_pull_request"}
	for _, q := range []string{"github.*", "github_*", "namespace:github", " namespace: GitHub "} {
		got := ix.Search(q, SearchOptions{TopK: 1})
		if !cmp.Equal(names(got), want) {
			t.Errorf("%q = %v", q, names(got))
		}
		for _, r := range got {
			if r.Score != 1 {
				t.Errorf("%q: score %v", q, r.Score)
			}
		}
	}
	if got := ix.Search("nosuch.*", SearchOptions{}); len(got) != 0 {
		t.Errorf("unknown namespace: %v", got)
	}
}

func TestSearch_ExactNameComesFirst(t *testing.T) {
	ix := NewIndex(corpus(t), Options{})
	got := ix.Search("linear_search_issues", SearchOptions{})
	if len(got) == 0 || got[0].Name != "linear_search_issues" || got[0].Score != 1 {
		t.Fatalf("got %v", got)
	}
	for _, r := range got[1:] {
		if r.Name == "linear_search_issues" {
			t.Error("listed twice")
		}
	}
}

func TestSearch_FilterHidesButTopKStillFills(t *testing.T) {
	ix := NewIndex(corpus(t), Options{})
	all := ix.Search("issue", SearchOptions{TopK: 3, MinScore: -1})
	hide := all[0].Name
	got := ix.Search("issue", SearchOptions{TopK: 3, MinScore: -1, Filter: func(t *Tool) bool { return t.Name != hide }})
	if len(got) != 3 || got[0].Name == hide || got[0].Name != all[1].Name {
		t.Errorf("filtered = %v (all %v)", names(got), names(all))
	}
}

func TestSearch_HintFavoursTheNamedNamespace(t *testing.T) {
	ix := NewIndex(corpus(t), Options{})
	if got := ix.Search("create an issue in Linear", SearchOptions{}); len(got) == 0 || got[0].Name != "linear_create_issue" {
		t.Errorf("in Linear: %v", names(got))
	}
	if got := ix.Search("create an issue on GitHub", SearchOptions{}); len(got) == 0 || got[0].Name != "github_create_issue" {
		t.Errorf("on GitHub: %v", names(got))
	}
}

func TestShortDescription_FirstSentenceCapped(t *testing.T) {
	cases := map[string]string{
		"Create an issue. Needs push access.":   "Create an issue.",
		"List files in v1.2 of the repo. More.": "List files in v1.2 of the repo.",
		"First line\nsecond line":               "First line",
		"No period":                             "No period",
		strings.Repeat("word ", 60):             strings.TrimSpace(strings.Repeat("word ", 29)) + "...",
	}
	for in, want := range cases {
		if got := shortDescription(in); got != want {
			t.Errorf("shortDescription(%q) = %q, want %q", in, got, want)
		}
	}
}
