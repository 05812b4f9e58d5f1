package main

import (
	"fmt"
	"io"
)

// markdown writes, per catalog, one table per query set and one of the score cuts.
func (r *Report) markdown(w io.Writer) {
	for i, c := range r.Catalogs {
		if i > 0 {
			fmt.Fprintln(w)
		}
		fmt.Fprintf(w, "## %s: %d tools\n", c.Name, c.Tools)
		for _, s := range c.Sets {
			fmt.Fprintf(w, "\n%s, %d queries\n\n", s.Name, s.Rows[0].Queries)
			fmt.Fprintln(w, "| search | recall@1 | recall@5 | MRR@10 | no result | under 5 |")
			fmt.Fprintln(w, "|---|---:|---:|---:|---:|---:|")
			for _, row := range s.Rows {
				fmt.Fprintf(w, "| %s | %.3f | %.3f | %.3f | %d | %d |\n", row.Search, row.Recall1, row.Recall5, row.MRR, row.Empty, row.Short)
			}
		}
		fmt.Fprintf(w, "\nScore cuts on the full lexical search: right answers found in the first ten without a cut that the cut keeps, "+
			"and off-topic queries (offtopic.txt) it leaves with no result.\n\n")
		fmt.Fprintln(w, "| cut | right answers kept | off-topic with no result |")
		fmt.Fprintln(w, "|---|---:|---:|")
		for _, x := range c.Cuts {
			fmt.Fprintf(w, "| %s | %d of %d | %d of %d |\n", x.Cut, x.RightKept, x.Right, x.OffTopicEmpty, x.OffTopic)
		}
	}
}

// misses writes the queries a configuration did not rank first.
func (r *Report) misses(w io.Writer, search string) {
	for _, c := range r.Catalogs {
		for _, s := range c.Sets {
			for _, row := range s.Rows {
				if row.Search != search {
					continue
				}
				fmt.Fprintf(w, "\n%s, %s: %d not first\n", s.Name, search, len(row.misses))
				for _, m := range row.misses {
					fmt.Fprintln(w, "  "+m)
				}
			}
		}
	}
}
