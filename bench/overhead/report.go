package main

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/maskgate/maskgate/bench/overhead/workload"
)

var tableTitles = map[string]string{
	"whole/total":        "Whole response (non-streaming): to the last byte",
	"stream/first_event": "Stream: to the first event (TTFT)",
	"stream/total":       "Stream: to the last byte, [DONE] included",
}

// Markdown writes r as a heading, the conditions it was measured in, and a table per
// measure. Latencies are in microseconds.
func (r *Report) Markdown(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "## maskgate overhead: %s\n\n", r.Started.UTC().Format(time.RFC3339))
	fmt.Fprintf(&b, "- %s %s/%s, %d CPUs, GOMAXPROCS %d; wall time %s\n", r.GoVersion, r.GOOS, r.GOARCH, r.NumCPU, r.GOMAXPROCS, r.Wall.Round(time.Second))
	fmt.Fprintf(&b, "- open loop at %g req/s per path while it has its turn; %d measured requests per path and table after %d warm-up; paths alternate every %d requests in rotating order\n", r.Rate, r.N, r.Warmup, r.Block)
	fmt.Fprintf(&b, "- request: %d tools, %d bytes; upstream answers %d bytes whole, or %d chunks + usage + [DONE]\n", r.Tools, r.BodyBytes, len(workload.Completion()), workload.StreamChunks)
	fmt.Fprintf(&b, "- gateway: %s\n", r.Gateway)
	if r.ProcessCPU > 0 {
		fmt.Fprintf(&b, "- this process used %.1f s of CPU in %.1f s (%.2f cores on average)", r.ProcessCPU.Seconds(), r.Wall.Seconds(), r.ProcessCPU.Seconds()/r.Wall.Seconds())
		if r.LoadAverage != "" {
			fmt.Fprintf(&b, "; the machine's load average was %s as it began", r.LoadAverage)
		}
		b.WriteString("\n")
	}
	fmt.Fprintf(&b, "- the load generator, the upstream, the ReverseProxy and the gateway share these %d cores: a path's latency includes waiting for CPU that the others, and the generator, hold. Compare the rows with each other, not with a dedicated deployment.\n", r.GOMAXPROCS)
	b.WriteString("- latency is timed from each request's send; `lag p99` is how late the pacer sent them (timers wake about every millisecond, so at high rates requests leave in small bursts). `+` columns are the path's percentile minus direct's.\n")
	if r.Truncated {
		b.WriteString("- **truncated**: the run stopped at -duration or an interrupt before every request was sent\n")
	}
	for _, t := range r.Tables {
		title := tableTitles[t.Response+"/"+t.Measure]
		fmt.Fprintf(&b, "\n### %s (µs)\n\n", title)
		b.WriteString("| path | ok | errors | req/s | lag p99 | p50 | p90 | p99 | max | +p50 | +p90 | +p99 | +max |\n")
		b.WriteString("|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n")
		for _, row := range t.Rows {
			l := row.Latency
			fmt.Fprintf(&b, "| %s | %d | %d | %.0f | %s | %s | %s | %s | %s |", row.Path, row.OK, row.Errors, row.Rate,
				us(row.LagP99), us(l.P50), us(l.P90), us(l.P99), us(l.Max))
			if a := row.Added; a != nil {
				fmt.Fprintf(&b, " %s | %s | %s | %s |\n", sus(a.P50), sus(a.P90), sus(a.P99), sus(a.Max))
			} else {
				b.WriteString(" | | | |\n")
			}
		}
		for _, row := range t.Rows {
			if q := row.VsProxy; q != nil {
				fmt.Fprintf(&b, "\ngateway's added latency as a multiple of ReverseProxy's: p50 %s, p90 %s, p99 %s, max %s\n",
					times(q.P50), times(q.P90), times(q.P99), times(q.Max))
			}
		}
		for _, row := range t.Rows {
			if row.Errors > 0 {
				fmt.Fprintf(&b, "\n%s: %d failed; first: %s\n", row.Path, row.Errors, row.FirstError)
			}
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func us(d time.Duration) string { return fmt.Sprintf("%.1f", float64(d)/float64(time.Microsecond)) }

// sus is us with a sign: an added latency below zero is noise and shown as such.
func sus(d time.Duration) string { return fmt.Sprintf("%+.1f", float64(d)/float64(time.Microsecond)) }

func times(r *float64) string {
	if r == nil {
		return "n/a (proxy added nothing measurable)"
	}
	return fmt.Sprintf("×%.2f", *r)
}

// failed counts failed requests across the report.
func (r *Report) failed() int {
	n := 0
	for _, t := range r.Tables {
		if t.Measure != "total" {
			continue // the same requests as the stream's total
		}
		for _, row := range t.Rows {
			n += row.Errors
		}
	}
	return n
}
