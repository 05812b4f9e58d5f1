package main

import (
	"fmt"
	"io"
	"path/filepath"
	"sort"
	"strings"

	"github.com/maskgate/maskgate/toolsearch"
)

// A multilingual catalog is MCP servers' tools files, some of them described in Chinese,
// Japanese or Korean; its query sets, one a language (QUERIES/LANG.txt), are labelled as
// the other sets, and its task set gives, for each multi-step request, the tools of each
// step. There are two (mlLayouts): the development one, whose sets the CJK analysis and
// the clause splitter were written against, and the held-out one, whose sets were written
// and committed after both, with the analysis frozen, before any search ran on them.
type mlLayout struct {
	name     string   // "development" or "held out"
	catalogs []string // subdirectories of tools files (*.json)
	queries  string   // subdirectory of LANG.txt query sets
	tasks    string   // the task set
}

var mlLayouts = []mlLayout{
	{"development", []string{"mcp", "mcp_cjk"}, "multilingual", "tasks.txt"},
	{"held out", []string{"mcp", "mcp_cjk", "mcp_heldout"}, "multilingual_heldout", "tasks_heldout.txt"},
}

// Languages of the multilingual query sets, in report order.
var languages = []string{"zh", "ja", "ko", "en"}

// taskSet is the name of the task-shaped set in Multilingual.Sets.
const taskSet = "tasks"

// MLRow is one search configuration's figures on one multilingual or task set: recall@5
// and recall@10 (for a query, whether a right tool is in the first five or ten; for a task,
// the share of its steps that are) and MRR@10 (1/rank of the first right tool).
type MLRow struct {
	Search   string  `json:"search"`
	Queries  int     `json:"queries"`
	Recall5  float64 `json:"recall_at_5"`
	Recall10 float64 `json:"recall_at_10"`
	MRR      float64 `json:"mrr_at_10"`
}

// MLSet is the figures of every configuration on one set.
type MLSet struct {
	Name string  `json:"name"`
	Rows []MLRow `json:"rows"`
}

// Multilingual is the evaluation on one multilingual catalog.
type Multilingual struct {
	Name     string   `json:"name"`     // "development" or "held out"
	Catalogs []string `json:"catalogs"` // its tools files' subdirectories
	Queries  string   `json:"queries"`  // its query sets' subdirectory
	Tasks    string   `json:"tasks"`    // its task set
	Tools    int      `json:"tools"`
	Sets     []MLSet  `json:"sets"`
}

// mlConfigs are the searches the multilingual sets are run with.
func mlConfigs() []config {
	return []config{
		{plainBM25, toolsearch.Options{Plain: true}, -1},
		{fullNoCut, toolsearch.Options{}, -1},
		{defaultCut, toolsearch.Options{}, 0},
	}
}

// A task: its text and, for each step, the tools that do it.
type task struct {
	text  string
	steps [][]string
}

// evaluateMultilingual evaluates every multilingual layout.
func evaluateMultilingual(dir string) ([]*Multilingual, error) {
	var out []*Multilingual
	for _, l := range mlLayouts {
		m, err := evaluateMLLayout(dir, l)
		if err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	return out, nil
}

// evaluateMLLayout runs mlConfigs over every language's queries and the tasks of l.
func evaluateMLLayout(dir string, l mlLayout) (*Multilingual, error) {
	cat, err := mlCatalog(dir, l)
	if err != nil {
		return nil, err
	}
	ixs := map[bool]*toolsearch.Index{}
	index := func(o toolsearch.Options) *toolsearch.Index {
		if ixs[o.Plain] == nil {
			ixs[o.Plain] = toolsearch.NewIndex(cat, o)
		}
		return ixs[o.Plain]
	}
	m := &Multilingual{Name: l.name, Catalogs: l.catalogs, Queries: l.queries, Tasks: l.tasks, Tools: cat.Len()}
	for _, lang := range languages {
		qs, err := readQueries(filepath.Join(dir, l.queries, lang+".txt"), cat)
		if err != nil {
			return nil, err
		}
		ts := make([]task, len(qs))
		for i, q := range qs {
			// A query is a task of one step that any of its tools does.
			ts[i] = task{text: q.text, steps: [][]string{q.tools}}
		}
		m.Sets = append(m.Sets, scoreSet(lang, ts, index))
	}
	ts, err := readTasks(filepath.Join(dir, l.tasks), cat)
	if err != nil {
		return nil, err
	}
	m.Sets = append(m.Sets, scoreSet(taskSet, ts, index))
	return m, nil
}

// mlCatalog reads the tools files of l's catalogs, in file-name order.
func mlCatalog(dir string, l mlLayout) (*toolsearch.Catalog, error) {
	var files []string
	for _, sub := range l.catalogs {
		fs, err := filepath.Glob(filepath.Join(dir, sub, "*.json"))
		if err != nil {
			return nil, err
		}
		if len(fs) == 0 {
			return nil, fmt.Errorf("%s: no tools files", filepath.Join(dir, sub))
		}
		files = append(files, fs...)
	}
	sort.Strings(files)
	tools, err := toolsearch.ReadFiles(files...)
	if err != nil {
		return nil, err
	}
	return toolsearch.New(tools)
}

func scoreSet(name string, ts []task, index func(toolsearch.Options) *toolsearch.Index) MLSet {
	s := MLSet{Name: name}
	for _, cf := range mlConfigs() {
		ix := index(cf.opt)
		r := MLRow{Search: cf.name, Queries: len(ts)}
		for _, t := range ts {
			res := ix.Search(t.text, toolsearch.SearchOptions{TopK: 10, MinScore: cf.minScore})
			r5, r10, rr := taskScore(res, t)
			r.Recall5 += r5
			r.Recall10 += r10
			r.MRR += rr
		}
		n := float64(len(ts))
		r.Recall5 /= n
		r.Recall10 /= n
		r.MRR /= n
		s.Rows = append(s.Rows, r)
	}
	return s
}

// taskScore is the share of t's steps with a tool in the first five and ten of res, and
// 1/rank of the first result that does a step (0 if none in the first ten).
func taskScore(res []toolsearch.Result, t task) (r5, r10, rr float64) {
	for _, step := range t.steps {
		at := 0
		for i, x := range res {
			if contains(step, x.Name) {
				at = i + 1
				break
			}
		}
		if at > 0 && at <= 5 {
			r5++
		}
		if at > 0 && at <= 10 {
			r10++
		}
	}
	for i, x := range res {
		if i >= 10 {
			break
		}
		for _, step := range t.steps {
			if contains(step, x.Name) {
				return r5 / float64(len(t.steps)), r10 / float64(len(t.steps)), 1 / float64(i+1)
			}
		}
	}
	return r5 / float64(len(t.steps)), r10 / float64(len(t.steps)), 0
}

// readTasks reads "text | tool/tool, tool" lines: steps separated by commas, each the
// tools that do it separated by '/'. Every tool must be in the catalog.
func readTasks(path string, cat *toolsearch.Catalog) ([]task, error) {
	lines, err := readLines(path)
	if err != nil {
		return nil, err
	}
	var ts []task
	for n, line := range lines {
		text, steps, ok := strings.Cut(line, "|")
		if !ok {
			return nil, fmt.Errorf("%s: task %d: want TEXT | TOOL[/TOOL][, TOOL...]", path, n+1)
		}
		t := task{text: strings.TrimSpace(text)}
		for _, step := range strings.Split(steps, ",") {
			var alts []string
			for _, name := range strings.Split(step, "/") {
				name = strings.TrimSpace(name)
				if _, ok := cat.Lookup(name); !ok {
					return nil, fmt.Errorf("%s: task %d: no tool %q in the catalog", path, n+1, name)
				}
				alts = append(alts, name)
			}
			t.steps = append(t.steps, alts)
		}
		if len(t.steps) < 2 {
			return nil, fmt.Errorf("%s: task %d: %d step, want two or more", path, n+1, len(t.steps))
		}
		ts = append(ts, t)
	}
	if len(ts) == 0 {
		return nil, fmt.Errorf("%s: no tasks", path)
	}
	return ts, nil
}

// markdown writes one table per set.
func (m *Multilingual) markdown(w io.Writer) {
	var cats []string
	for _, c := range m.Catalogs {
		cats = append(cats, c+"/*.json")
	}
	fmt.Fprintf(w, "\n## multilingual catalog, %s sets (%s): %d tools\n", m.Name, strings.Join(cats, ", "), m.Tools)
	for _, s := range m.Sets {
		kind := "queries (" + m.Queries + "/" + s.Name + ".txt)"
		if s.Name == taskSet {
			kind = "tasks (" + m.Tasks + "; recall: the share of a task's steps found)"
		}
		fmt.Fprintf(w, "\n%s: %d %s\n\n", s.Name, s.Rows[0].Queries, kind)
		fmt.Fprintln(w, "| search | recall@5 | recall@10 | MRR@10 |")
		fmt.Fprintln(w, "|---|---:|---:|---:|")
		for _, r := range s.Rows {
			fmt.Fprintf(w, "| %s | %.3f | %.3f | %.3f |\n", r.Search, r.Recall5, r.Recall10, r.MRR)
		}
	}
}
