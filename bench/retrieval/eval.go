package main

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/maskgate/maskgate/toolsearch"
)

// A labelled query: the text and the names of the tools that answer it.
type labelled struct {
	text  string
	tools []string
}

// A configuration of the search to evaluate.
type config struct {
	name string
	opt  toolsearch.Options
}

func configs() []config {
	return []config{
		{"BM25 plain", toolsearch.Options{Plain: true}},
		{"lexical (full)", toolsearch.Options{}},
		{"keyword scorer", toolsearch.Options{Scorer: toolsearch.Keyword}},
		{"lexical, no stemming", toolsearch.Options{NoStem: true}},
		{"lexical, no synonyms", toolsearch.Options{SynonymWeight: -1}},
		{"lexical, no namespace hints", toolsearch.Options{HintPenalty: -1}},
		{"lexical, no name boost", toolsearch.Options{NameBoost: -1}},
		{"lexical, equal field weights", toolsearch.Options{Weights: toolsearch.Weights{
			Name: 1, Description: 1, Keywords: 1, ParamNames: 1, ParamDescriptions: 1}}},
	}
}

// Row is one configuration's figures on one query set.
type Row struct {
	Search  string  `json:"search"`
	Queries int     `json:"queries"`
	Recall1 float64 `json:"recall_at_1"`
	Recall5 float64 `json:"recall_at_5"`
	MRR     float64 `json:"mrr_at_10"`
	misses  []string
}

// Set is the figures of every configuration on one query set.
type Set struct {
	Name string `json:"name"`
	Rows []Row  `json:"rows"`
}

// Report is the whole evaluation.
type Report struct {
	Tools     int       `json:"tools"`
	Sets      []Set     `json:"sets"`
	Threshold Threshold `json:"min_score"`
}

// Threshold is what the default MinScore does with the full lexical search: how many
// right answers (found in the first ten, both query sets) score at least MinScore, and how
// many off-topic queries it leaves without any result.
type Threshold struct {
	MinScore      float64 `json:"min_score"`
	Right         int     `json:"right"`
	RightKept     int     `json:"right_kept"`
	OffTopic      int     `json:"off_topic"`
	OffTopicEmpty int     `json:"off_topic_empty"`
}

// evaluate runs every configuration over every query set in dir.
func evaluate(dir string) (*Report, error) {
	tools, err := toolsearch.ReadFiles(filepath.Join(dir, "catalog.json"))
	if err != nil {
		return nil, err
	}
	cat, err := toolsearch.New(tools)
	if err != nil {
		return nil, err
	}
	rep := &Report{Tools: cat.Len(), Threshold: Threshold{MinScore: 0.1}}
	full := toolsearch.NewIndex(cat, toolsearch.Options{})
	for _, set := range []struct{ name, file string }{
		{"development (queries.txt)", "queries.txt"},
		{"held out (heldout.txt)", "heldout.txt"},
	} {
		qs, err := readQueries(filepath.Join(dir, set.file), cat)
		if err != nil {
			return nil, err
		}
		rep.Threshold.add(full, qs)
		s := Set{Name: set.name}
		for _, c := range configs() {
			s.Rows = append(s.Rows, score(toolsearch.NewIndex(cat, c.opt), c.name, qs))
		}
		rep.Sets = append(rep.Sets, s)
	}
	off, err := readLines(filepath.Join(dir, "offtopic.txt"))
	if err != nil {
		return nil, err
	}
	for _, q := range off {
		rep.Threshold.OffTopic++
		if len(full.Search(q, toolsearch.SearchOptions{MinScore: rep.Threshold.MinScore})) == 0 {
			rep.Threshold.OffTopicEmpty++
		}
	}
	return rep, nil
}

// add counts, for each query whose right tool is in the first ten, whether it scores at
// least the threshold.
func (th *Threshold) add(ix *toolsearch.Index, qs []labelled) {
	for _, q := range qs {
		for _, r := range ix.Search(q.text, toolsearch.SearchOptions{TopK: 10, MinScore: -1}) {
			if contains(q.tools, r.Name) {
				th.Right++
				if r.Score >= th.MinScore {
					th.RightKept++
				}
				break
			}
		}
	}
}

func score(ix *toolsearch.Index, name string, qs []labelled) Row {
	r := Row{Search: name, Queries: len(qs)}
	for _, q := range qs {
		res := ix.Search(q.text, toolsearch.SearchOptions{TopK: 10, MinScore: -1})
		rank := 0
		for i, x := range res {
			if contains(q.tools, x.Name) {
				rank = i + 1
				break
			}
		}
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
