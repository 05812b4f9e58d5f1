package main

import (
	"fmt"
	"io"
	"strings"
	"time"
)

// pathTitles are the paths' names in tables and figures.
var pathTitles = map[string]string{pathDirect: "direct", pathProxy: "bare proxy", pathMaskgate: "maskgate", pathPortkey: "Portkey"}

// path returns the scenario's figures for the named path, or nil.
func (s ScenarioResult) path(name string) *PathResult {
	for i := range s.Paths {
		if s.Paths[i].Path == name {
			return &s.Paths[i]
		}
	}
	return nil
}

// OverProxy is maskgate's p50 latency and CPU per request over the bare proxy's, both
// processes of their own measured in the same rounds: what the gateway adds to the
// least a Go process in the middle costs. Zero where either figure is missing.
func (s ScenarioResult) OverProxy() (latency, cpu float64) {
	mg, px := s.path(pathMaskgate), s.path(pathProxy)
	if mg == nil || px == nil {
		return 0, 0
	}
	if px.Latency.P50 > 0 && mg.OK > 0 {
		latency = float64(mg.Latency.P50) / float64(px.Latency.P50)
	}
	if mg.CPUPerRequest != nil && px.CPUPerRequest != nil && *px.CPUPerRequest > 0 {
		cpu = float64(*mg.CPUPerRequest) / float64(*px.CPUPerRequest)
	}
	return latency, cpu
}

// label names a scenario's body: "4 tools (2.3 KB), whole".
func (s ScenarioResult) label() string {
	return fmt.Sprintf("%d tools (%s), %s", s.Tools, kb(s.BodyBytes), s.kind())
}

// Markdown writes the report: the conditions it was measured in, then a row per
// scenario.
func (r *Report) Markdown(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "## maskgate, a bare proxy and Portkey in front of one canned upstream: %s\n\n", r.Started.UTC().Format(time.RFC3339))
	b.WriteString("| body | rate | direct p50 / p99 | bare proxy p50 / p99, CPU per request | maskgate p50 / p99, CPU per request | Portkey p50 / p99, CPU per request | maskgate ÷ bare proxy: p50, CPU |\n")
	b.WriteString("|---|--:|--:|--:|--:|--:|--:|\n")
	for _, s := range r.Scenarios {
		fmt.Fprintf(&b, "| %s | %g/s |", s.label(), s.Rate)
		for _, p := range s.Paths {
			fmt.Fprintf(&b, " %s / %s ms", msText(p.Latency.P50), msText(p.Latency.P99))
			if p.CPUPerRequest != nil {
				fmt.Fprintf(&b, ", %s", cpuText(*p.CPUPerRequest))
			}
			switch {
			case p.Errors > 0 && p.TimedOut == p.Errors:
				fmt.Fprintf(&b, " (**%d of %d timed out at %s**)", p.Errors, p.Sent, r.Timeout)
			case p.Errors > 0:
				fmt.Fprintf(&b, " (**%d of %d failed**)", p.Errors, p.Sent)
			}
			b.WriteString(" |")
		}
		if lat, cpu := s.OverProxy(); lat > 0 && cpu > 0 {
			fmt.Fprintf(&b, " ×%.2f, ×%.2f |", lat, cpu)
		} else {
			b.WriteString(" – |")
		}
		b.WriteString("\n")
	}

	b.WriteString("\n")
	fmt.Fprintf(&b, "- Machine: %d CPUs, %s/%s", r.NumCPU, r.GOOS, r.GOARCH)
	if r.LoadAverage != "" {
		fmt.Fprintf(&b, ", load average %s as the run began (above %d, other processes were competing)", r.LoadAverage, r.NumCPU)
	}
	fmt.Fprintf(&b, ". maskgate built with %s; Portkey @portkey-ai/gateway %s on node %s with @hono/node-server %s.\n", r.GoVersion, r.Portkey, r.Node, r.HonoServer)
	fmt.Fprintf(&b, "- **The load generator and the upstream run in the bench process on the same %d cores as the gateway being measured**: a path's latency includes waiting for CPU that the generator holds, and a gateway that needs more CPU leaves less to the generator. Compare the columns with each other, not with a dedicated deployment.\n", r.NumCPU)
	fmt.Fprintf(&b, "- Open loop: requests leave on a fixed schedule at the given rate whether or not earlier ones were answered, so a gateway that falls behind queues them and its latency grows for the rest of its turn. Each scenario: %d rounds, the paths taking turns in the order direct, bare proxy, maskgate, Portkey, %s each; before the first round each path had %s of the same load unmeasured, and before the first scenario %d requests of each body closed-loop (V8 needs a few thousand to compile Portkey's hot paths).", r.Rounds, r.Round, r.Warmup, r.Prime)
	if r.Quick {
		b.WriteString(" **-quick**: rounds of 1 s, so p99 rests on few requests.")
	}
	b.WriteString("\n")
	fmt.Fprintf(&b, "- Latency is from the send to the answer's last byte ([DONE] for a stream), in ms. The upstream answers at once (think time %s): what is left is the paths' own cost. Each gateway runs in its own process: the bare proxy (`httputil.ReverseProxy` with the gateway's upstream transport, flushing every write) and maskgate (gateway.New over an openaicompat backend, tools unmanaged) re-executed from this binary, Portkey under node with `x-portkey-provider: openai` and `x-portkey-custom-host`.\n", r.Think)
	b.WriteString("- CPU per request is the gateway process's user+system CPU time over its rounds (bare proxy and maskgate: getrusage in its process, 1 µs; Portkey: /proc/PID/stat, 10 ms ticks) divided by the requests it answered. It includes what the process spends between requests during its turn (timers, garbage collection, idle wake-ups), which is more per request at low rates. direct has no process of its own.\n")
	for _, s := range r.Scenarios {
		if !s.Stream {
			continue
		}
		var parts []string
		for _, p := range s.Paths {
			if p.FirstEvent != nil {
				parts = append(parts, fmt.Sprintf("%s %s / %s ms", pathTitles[p.Path], msText(p.FirstEvent.P50), msText(p.FirstEvent.P99)))
			}
		}
		fmt.Fprintf(&b, "- %s at %g/s, time to the first event p50 / p99: %s.\n", s.label(), s.Rate, strings.Join(parts, "; "))
	}
	if len(r.Scenarios) > 0 && hasStream(r) {
		b.WriteString("- Portkey's stream handler waits 25 ms before it forwards a stream's first chunk (a fixed `setTimeout(…, 25)` in its build), so no stream through it is answered in under 25 ms. maskgate drops the upstream's usage chunk when the client did not ask for it (`stream_options.include_usage`), as OpenAI does.\n")
	}
	for _, s := range r.Scenarios {
		var behind []string
		for _, p := range s.Paths {
			if p.OK > 0 && p.ServedRate < 0.9*s.Rate {
				behind = append(behind, fmt.Sprintf("%s answered %.0f/s", pathTitles[p.Path], p.ServedRate))
			}
		}
		if len(behind) > 0 {
			fmt.Fprintf(&b, "- %s at %g/s: %s, first send to last answer; it fell behind and its queue grew through each turn.\n", s.label(), s.Rate, strings.Join(behind, ", "))
		}
	}
	if r.Truncated {
		b.WriteString("- **Truncated**: an interrupt stopped the run early.\n")
	}
	if r.failed() > 0 {
		b.WriteString("- Percentiles are over the requests answered; where some failed or timed out, the true tail is worse than shown.\n")
	}
	for _, s := range r.Scenarios {
		for _, p := range s.Paths {
			if p.Errors > 0 {
				fmt.Fprintf(&b, "- %s at %g/s, %s: %d of %d failed; first: %s\n", s.label(), s.Rate, pathTitles[p.Path], p.Errors, p.Sent, p.FirstError)
			}
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func hasStream(r *Report) bool {
	for _, s := range r.Scenarios {
		if s.Stream {
			return true
		}
	}
	return false
}

// msText gives a latency in milliseconds to about three significant figures.
func msText(d time.Duration) string {
	v := ms(d)
	switch {
	case v < 10:
		return fmt.Sprintf("%.2f", v)
	case v < 100:
		return fmt.Sprintf("%.1f", v)
	default:
		return fmt.Sprintf("%.0f", v)
	}
}

// cpuText gives a CPU time in µs below a millisecond, in ms above.
func cpuText(d time.Duration) string {
	if d < time.Millisecond {
		return fmt.Sprintf("%.0f µs", float64(d)/float64(time.Microsecond))
	}
	return fmt.Sprintf("%.2f ms", ms(d))
}

func kb(n int) string {
	if n < 10_000 {
		return fmt.Sprintf("%.1f KB", float64(n)/1000)
	}
	return fmt.Sprintf("%.0f KB", float64(n)/1000)
}
