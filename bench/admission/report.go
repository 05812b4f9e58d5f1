package main

import (
	"fmt"
	"io"
	"runtime"
	"time"
)

// Markdown writes the run as the README's tables.
func (r *Report) Markdown(w io.Writer) {
	c := r.Config
	fmt.Fprintf(w, "%d streaming clients per key, %g arrivals/s per key for %s, %s between upstream events; GOMAXPROCS %d\n\n",
		c.Clients, c.Rate, c.Duration, c.ChunkDelay, runtime.GOMAXPROCS(0))
	fmt.Fprintln(w, "| key | limit | sent | 200 | 429 | other | 200 allowed at most | dropped by generator | stream p50 | stream p99 |")
	fmt.Fprintln(w, "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|")
	for _, k := range r.Keys {
		fmt.Fprintf(w, "| %s | %s | %d | %d | %d | %d | %d | %d | %s | %s |\n", k.Key, k.Limit, k.Sent, k.OK, k.TooMany, k.Other,
			k.ExpectedOKAtMost, k.Dropped, k.P50.Round(10*time.Microsecond), k.P99.Round(10*time.Microsecond))
	}
	m := r.Memory
	fmt.Fprintf(w, "\n| memory | start | first half (max) | second half (max) | end |\n|---|---:|---:|---:|---:|\n")
	fmt.Fprintf(w, "| HeapInuse (%d samples) | %s | %s | %s | |\n", m.Samples, mib(m.HeapStart), mib(m.HeapFirst), mib(m.HeapSecond))
	if m.RSSStart > 0 {
		fmt.Fprintf(w, "| RSS | %s | | | %s |\n", mib(m.RSSStart), mib(m.RSSEnd))
	}
	fmt.Fprintf(w, "| live heap after GC, nothing in flight | | %s | %s | |\n", mib(m.LiveHalf), mib(m.LiveEnd))
	fmt.Fprintf(w, "\nretained per request over the second half: %.0f bytes (%d requests; at most %d)\n", m.RetainedPerRequest, m.SecondHalfRequests, r.Config.MaxRetained)
	fmt.Fprintf(w, "\ngoroutines at most: %d\n", m.MaxGoroutines)
	if len(r.Problems) == 0 {
		fmt.Fprintln(w, "\nchecks: no errors below the limits, 429s above them, memory flat: pass")
	} else {
		fmt.Fprintf(w, "\nchecks failed: %v\n", r.Problems)
	}
}
