package main

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/maskgate/maskgate/toolsearch"
)

// A labelled query: the text and the names of the tools that answer it.
type labelled struct {
	text  string
	tools []string
}

// A configuration of the search to evaluate: index options and the score cut.
type config struct {
	name string
	opt  toolsearch.Options
	// minScore is SearchOptions.MinScore: -1 ranks alone, 0 is the default cut.
	minScore float64
}

// Names of the rows the tests and the README refer to.
const (
	plainBM25  = "BM25 plain"
	fullNoCut  = "lexical (full)"
	defaultCut = "lexical, default cut"
	oldCut     = "lexical, min_score 0.1"
)

func configs() []config {
	return []config{
		{plainBM25, toolsearch.Options{Plain: true}, -1},
		{fullNoCut, toolsearch.Options{}, -1},
		{defaultCut, toolsearch.Options{}, 0},
		{oldCut, toolsearch.Options{}, 0.1},
		{"keyword scorer", toolsearch.Options{Scorer: toolsearch.Keyword}, -1},
		{"lexical, no stemming", toolsearch.Options{NoStem: true}, -1},
		{"lexical, no synonyms", toolsearch.Options{SynonymWeight: -1}, -1},
		{"lexical, no namespace hints", toolsearch.Options{HintPenalty: -1}, -1},
		{"lexical, no name boost", toolsearch.Options{NameBoost: -1}, -1},
		{"lexical, equal field weights", toolsearch.Options{Weights: toolsearch.Weights{
			Name: 1, Description: 1, Keywords: 1, ParamNames: 1, ParamDescriptions: 1}}, -1},
	}
}

// cuts are the score cuts whose effect on the full lexical search the report shows.
func cuts() []config {
	return []config{
		{"none", toolsearch.Options{}, -1},
		{"min_score 0.1 (the old default)", toolsearch.Options{}, 0.1},
		{"default", toolsearch.Options{}, 0},
	}
}

// Row is one configuration's figures on one query set. Empty and Short count the queries
// with no result and with fewer than five in the first five (for the ranking alone, those
// that match fewer tools).
type Row struct {
	Search  string  `json:"search"`
	Queries int     `json:"queries"`
	Recall1 float64 `json:"recall_at_1"`
	Recall5 float64 `json:"recall_at_5"`
	MRR     float64 `json:"mrr_at_10"`
	Empty   int     `json:"no_result"`
	Short   int     `json:"under_five"`
	misses  []string
}

// Set is the figures of every configuration on one query set.
type Set struct {
	Name string `json:"name"`
	Rows []Row  `json:"rows"`
}

// Cut is what one score cut does with the full lexical search on one catalog: how many
// right answers found in the first ten without a cut (all the catalog's query sets) it
// still returns in the first ten, and how many off-topic queries it leaves with no result.
type Cut struct {
	Cut           string `json:"cut"`
	Right         int    `json:"right"`
	RightKept     int    `json:"right_kept"`
	OffTopic      int    `json:"off_topic"`
	OffTopicEmpty int    `json:"off_topic_empty"`
}

// Catalog is the evaluation on one catalog.
type Catalog struct {
	Name  string `json:"name"`
	Tools int    `json:"tools"`
	Sets  []Set  `json:"sets"`
	Cuts  []Cut  `json:"cuts"`
}

// Report is the whole evaluation.
type Report struct {
	Catalogs     []Catalog       `json:"catalogs"`
	Multilingual []*Multilingual `json:"multilingual,omitempty"`
}

// A catalog and its query sets, as laid out in the data directory.
type layout struct {
	name  string
	files func(dir string) ([]string, error)
	sets  [][2]string // set name, queries file
}

var layouts = []layout{
	{
		name:  "development catalog (catalog.json)",
		files: func(dir string) ([]string, error) { return []string{filepath.Join(dir, "catalog.json")}, nil },
		sets:  [][2]string{{"development (queries.txt)", "queries.txt"}, {"held out (heldout.txt)", "heldout.txt"}},
	},
	{
		name: "MCP servers (mcp/*.json)",
		files: func(dir string) ([]string, error) {
			fs, err := filepath.Glob(filepath.Join(dir, "mcp", "*.json"))
			sort.Strings(fs)
			if err == nil && len(fs) == 0 {
				err = fmt.Errorf("%s: no tools files", filepath.Join(dir, "mcp"))
			}
			return fs, err
		},
		sets: [][2]string{{"MCP servers (mcp_queries.txt)", "mcp_queries.txt"}},
	},
}

// evaluate runs every configuration over every query set in dir, and every cut over the
// off-topic queries (offtopic.txt) on every catalog.
func evaluate(dir string) (*Report, error) {
	off, err := readLines(filepath.Join(dir, "offtopic.txt"))
	if err != nil {
		return nil, err
	}
	rep := &Report{}
	for _, l := range layouts {
		files, err := l.files(dir)
		if err != nil {
			return nil, err
		}
		tools, err := toolsearch.ReadFiles(files...)
		if err != nil {
			return nil, err
		}
		cat, err := toolsearch.New(tools)
		if err != nil {
			return nil, err
		}
		c := Catalog{Name: l.name, Tools: cat.Len()}
		ixs := map[string]*toolsearch.Index{}
		index := func(name string, o toolsearch.Options) *toolsearch.Index {
			if ixs[name] == nil {
				ixs[name] = toolsearch.NewIndex(cat, o)
			}
			return ixs[name]
		}
		full := index(fullNoCut, toolsearch.Options{})
		for _, cut := range cuts() {
			c.Cuts = append(c.Cuts, Cut{Cut: cut.name})
		}
		for _, set := range l.sets {
			qs, err := readQueries(filepath.Join(dir, set[1]), cat)
			if err != nil {
				return nil, err
			}
			s := Set{Name: set[0]}
			for _, cf := range configs() {
				key := cf.name
				if cf.minScore >= 0 {
					key = fullNoCut // the cut rows share the full search's index
				}
				s.Rows = append(s.Rows, score(index(key, cf.opt), cf, qs))
			}
			c.Sets = append(c.Sets, s)
			for i, cut := range cuts() {
				c.Cuts[i].keep(full, cut.minScore, qs)
			}
		}
		for i, cut := range cuts() {
			c.Cuts[i].offTopic(full, cut.minScore, off)
		}
		rep.Catalogs = append(rep.Catalogs, c)
	}
	return rep, nil
}

// keep counts, for each query whose right tool is in the first ten without a cut, whether
// the cut still returns it there.
func (c *Cut) keep(ix *toolsearch.Index, minScore float64, qs []labelled) {
	for _, q := range qs {
		if rank(ix.Search(q.text, toolsearch.SearchOptions{TopK: 10, MinScore: -1}), q) == 0 {
			continue
		}
		c.Right++
		if rank(ix.Search(q.text, toolsearch.SearchOptions{TopK: 10, MinScore: minScore}), q) > 0 {
			c.RightKept++
		}
	}
}

// offTopic counts the queries the cut leaves with no result at the default five.
func (c *Cut) offTopic(ix *toolsearch.Index, minScore float64, off []string) {
	for _, q := range off {
		c.OffTopic++
		if len(ix.Search(q, toolsearch.SearchOptions{MinScore: minScore})) == 0 {
			c.OffTopicEmpty++
		}
	}
}

// rank is the 1-based position of the first right tool in res, or 0.
func rank(res []toolsearch.Result, q labelled) int {
	for i, x := range res {
		if contains(q.tools, x.Name) {
			return i + 1
		}
	}
	return 0
}

// score runs qs with the first ten results. Under a cut that depends only on the query
// and the best score, the first five of ten are what a search for five returns.
func score(ix *toolsearch.Index, cf config, qs []labelled) Row {
	r := Row{Search: cf.name, Queries: len(qs)}
	for _, q := range qs {
		res := ix.Search(q.text, toolsearch.SearchOptions{TopK: 10, MinScore: cf.minScore})
		if len(res) == 0 {
			r.Empty++
		}
		if len(res) < 5 {
			r.Short++
		}
		rank := rank(res, q)
		if rank == 1 {
			r.Recall1++
		}
		if rank >= 1 && rank <= 5 {
			r.Recall5++
		}
		if rank > 0 {
			r.MRR += 1 / float64(rank)
		}
		if rank != 1 {
			var got []string
			for i := 0; i < len(res) && i < 3; i++ {
				got = append(got, fmt.Sprintf("%s %.2f", res[i].Name, res[i].Score))
			}
			r.misses = append(r.misses, fmt.Sprintf("rank %d  %q want %s; got %s", rank, q.text, strings.Join(q.tools, "|"), strings.Join(got, ", ")))
		}
	}
	n := float64(len(qs))
	r.Recall1 /= n
	r.Recall5 /= n
	r.MRR /= n
	return r
}

// readLines returns the lines of path that are neither blank nor comments.
func readLines(path string) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if line := strings.TrimSpace(sc.Text()); line != "" && !strings.HasPrefix(line, "#") {
			out = append(out, line)
		}
	}
	return out, sc.Err()
}

// readQueries reads "text | tool, tool" lines and checks every tool is in the catalog.
func readQueries(path string, cat *toolsearch.Catalog) ([]labelled, error) {
	lines, err := readLines(path)
	if err != nil {
		return nil, err
	}
	var qs []labelled
	for n, line := range lines {
		text, names, ok := strings.Cut(line, "|")
		if !ok {
			return nil, fmt.Errorf("%s: query %d: want TEXT | TOOL[, TOOL]", path, n+1)
		}
		q := labelled{text: strings.TrimSpace(text)}
		for _, name := range strings.Split(names, ",") {
			name = strings.TrimSpace(name)
			if _, ok := cat.Lookup(name); !ok {
				return nil, fmt.Errorf("%s: query %d: no tool %q in the catalog", path, n+1, name)
			}
			q.tools = append(q.tools, name)
		}
		qs = append(qs, q)
	}
	if len(qs) == 0 {
		return nil, fmt.Errorf("%s: no queries", path)
	}
	return qs, nil
}

func contains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}
