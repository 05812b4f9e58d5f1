package main

import (
	"fmt"
	"io"
)

// markdown writes one table per query set.
func (r *Report) markdown(w io.Writer) {
	fmt.Fprintf(w, "Tool search retrieval: %d tools.\n", r.Tools)
	for _, s := range r.Sets {
		fmt.Fprintf(w, "\n%s, %d queries\n\n", s.Name, s.Rows[0].Queries)
		fmt.Fprintln(w, "| search | recall@1 | recall@5 | MRR@10 |")
		fmt.Fprintln(w, "|---|---:|---:|---:|")
		for _, row := range s.Rows {
			fmt.Fprintf(w, "| %s | %.3f | %.3f | %.3f |\n", row.Search, row.Recall1, row.Recall5, row.MRR)
		}
	}
	th := r.Threshold
	fmt.Fprintf(w, "\nmin_score %.2g (full lexical search): keeps %d of %d right answers found in the first ten; "+
		"leaves %d of %d off-topic queries (offtopic.txt) with no result.\n",
		th.MinScore, th.RightKept, th.Right, th.OffTopicEmpty, th.OffTopic)
}

// misses writes the queries a configuration did not rank first.
func (r *Report) misses(w io.Writer, search string) {
	for _, s := range r.Sets {
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
