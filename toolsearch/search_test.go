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
	// Until the default cut became relative, this asserted that no result scored under
	// 0.1; now a result under DefaultMinScore stays if it has a quarter of the best score.
	got := ix.Search("create issue", SearchOptions{TopK: -1})
	if len(got) == 0 {
		t.Fatal("create issue: no result")
	}
	for _, r := range got {
		if r.Score < min(DefaultMinScore, DefaultRelativeScore*got[0].Score)-0.001 {
			t.Errorf("default MinScore let through %+v (best %v)", r, got[0].Score)
		}
	}
	if got := ix.Search("penguins and icebergs", SearchOptions{}); len(got) != 0 {
		t.Errorf("unrelated query found %v", got)
	}
}

// The default cut keeps a weak match to a word the query says, however low the long query
// drives its score, and still returns nothing for a query that matches only through a
// synonym or the list-or-get word a question implies, scoring under DefaultMinScore.
func TestSearch_DefaultCutKeepsWeakLiteralMatchesOnly(t *testing.T) {
	ix := NewIndex(corpus(t), Options{})

	// Eighteen words, one of which a tool has: the right answer scores under 0.1.
	long := "before I pack for the long trip to Lisbon and Porto with my cousins, what will the weather be like"
	all := ix.Search(long, SearchOptions{MinScore: -1})
	if len(all) == 0 || all[0].Name != "get_weather" || all[0].Score >= DefaultMinScore {
		t.Fatalf("%q without a cut = %v; want get_weather first, under %v", long, all, DefaultMinScore)
	}
	if got := ix.Search(long, SearchOptions{}); !cmp.Equal(names(got), []string{"get_weather"}) {
		t.Errorf("%q with the default cut = %v, want [get_weather]", long, got)
	}
	// An operator's threshold is absolute, as the old default was.
	if got := ix.Search(long, SearchOptions{MinScore: 0.1}); len(got) != 0 {
		t.Errorf("%q with MinScore 0.1 = %v, want none", long, got)
	}

	// Under the floor, a result needs a quarter of the best score.
	party := "my grandmother in Lisbon wonders about the weather during her birthday picnic next Sunday afternoon"
	all = ix.Search(party, SearchOptions{MinScore: -1})
	if len(all) < 2 || all[0].Name != "get_weather" || all[1].Score >= DefaultRelativeScore*all[0].Score {
		t.Fatalf("%q without a cut = %v; want get_weather and a far weaker second", party, all)
	}
	if got := ix.Search(party, SearchOptions{}); !cmp.Equal(names(got), []string{"get_weather"}) {
		t.Errorf("%q with the default cut = %v, want [get_weather]", party, got)
	}
	// The cut is relative to the best match whether or not Filter hides it.
	hide := func(t *Tool) bool { return t.Name != "get_weather" }
	if got := ix.Search(party, SearchOptions{Filter: hide}); len(got) != 0 {
		t.Errorf("%q with get_weather hidden = %v, want none", party, got)
	}

	for _, q := range []string{
		"how tall is mount everest",       // only the question's list-or-get word matches
		"compose a limerick about a frog", // only a synonym of "compose" matches
	} {
		if all := ix.Search(q, SearchOptions{MinScore: -1}); len(all) == 0 {
			t.Errorf("%q matches nothing even without a cut; the case tests nothing", q)
		}
		if got := ix.Search(q, SearchOptions{}); len(got) != 0 {
			t.Errorf("%q with the default cut = %v, want none", q, got)
		}
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

// A search for the first k is the first k of a search for all, whatever the cut: the
// bounded ranking's pruning and partial order never change a result. Two copies of the
// retrieval benchmark's catalog make ties.
func TestSearch_TopKIsAPrefixOfTheWholeRanking(t *testing.T) {
	base, err := ReadFiles(benchData + "catalog.json")
	if err != nil {
		t.Fatalf("benchmark catalog (bench/retrieval/testdata, in the repository): %v", err)
	}
	tools := append([]Tool(nil), base...)
	for _, tool := range base {
		tool.Name += "_copy"
		tools = append(tools, tool)
	}
	c, err := New(tools)
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(benchData + "queries.txt")
	if err != nil {
		t.Fatalf("benchmark queries (bench/retrieval/testdata, in the repository): %v", err)
	}
	defer f.Close()
	var qs []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if line := sc.Text(); line != "" && !strings.HasPrefix(line, "#") {
			text, _, _ := strings.Cut(line, "|")
			qs = append(qs, strings.TrimSpace(text))
		}
	}
	qs = append(qs, "github_create_issue", "issue", "what is the meaning of life")
	for _, o := range []Options{{}, {Scorer: Keyword}, {Plain: true}} {
		ix := NewIndex(c, o)
		for _, q := range qs {
			for _, cut := range []float64{-1, 0, 0.1} {
				all := ix.Search(q, SearchOptions{TopK: -1, MinScore: cut})
				for _, k := range []int{1, 3, 5, 10} {
					got := ix.Search(q, SearchOptions{TopK: k, MinScore: cut})
					want := all[:min(k, len(all))]
					if !cmp.Equal(got, want) {
						t.Fatalf("%+v %q MinScore %v TopK %d:\n got %v\nwant %v", o, q, cut, k, names(got), names(want))
					}
				}
			}
		}
	}
}
