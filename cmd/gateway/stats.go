package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/maskgate/maskgate/gateway/observe"
)

// stats is `gateway stats`: a running gateway's live numbers, read from its
// GET /admin/events (the dashboard's stream) and printed as a plain-text table at each
// event, every second, until interrupted. It returns the exit status: 0 when
// interrupted or after -n events, 1 when the gateway cannot be read, 2 for bad flags.
func stats(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("gateway stats", flag.ContinueOnError)
	fs.SetOutput(stderr)
	base := fs.String("url", "http://127.0.0.1:4000", "the gateway's `URL`")
	keyEnv := fs.String("admin-key-env", "", "the environment `variable` that holds the admin key (required)")
	count := fs.Int("n", 0, "stop after this many snapshots (0: until interrupted)")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: gateway stats -url URL -admin-key-env VAR [-n N]\n\nThe gateway's live numbers per backend × profile × strategy, every second.\n\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *keyEnv == "" || fs.NArg() > 0 {
		fs.Usage()
		return 2
	}
	key := getenv(*keyEnv)
	if key == "" {
		fmt.Fprintf(stderr, "gateway stats: environment variable %s is empty; export the gateway's admin key in it\n", *keyEnv)
		return 2
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimRight(*base, "/")+"/admin/events", nil)
	if err != nil {
		fmt.Fprintf(stderr, "gateway stats: -url: %v\n", err)
		return 2
	}
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Accept", "text/event-stream")
	resp, err := (&http.Client{Transport: newTransport()}).Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return 0
		}
		fmt.Fprintf(stderr, "gateway stats: %v\n", err)
		return 1
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		var e struct {
			Error struct{ Message string } `json:"error"`
		}
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
		msg := strings.TrimSpace(string(b))
		if json.Unmarshal(b, &e) == nil && e.Error.Message != "" {
			msg = e.Error.Message
		}
		fmt.Fprintf(stderr, "gateway stats: GET /admin/events: %s: %s\n", resp.Status, msg)
		return 1
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 16<<20)
	n := 0
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			continue
		}
		var snap observe.LiveSnapshot
		if err := json.Unmarshal([]byte(data), &snap); err != nil {
			fmt.Fprintf(stderr, "gateway stats: an event that is not a snapshot: %v\n", err)
			return 1
		}
		printSnapshot(stdout, &snap)
		if n++; *count > 0 && n >= *count {
			return 0
		}
	}
	if ctx.Err() != nil || errors.Is(sc.Err(), context.Canceled) {
		return 0
	}
	fmt.Fprintf(stderr, "gateway stats: the gateway ended the stream (%v); it may be shutting down\n", orEOF(sc.Err()))
	return 1
}

func orEOF(err error) error {
	if err == nil {
		return io.EOF
	}
	return err
}

// printSnapshot writes one snapshot: a summary line, then a row per backend × profile ×
// strategy and the total, then a blank line.
func printSnapshot(w io.Writer, s *observe.LiveSnapshot) {
	threads := "threads -"
	if s.Threads != nil {
		threads = fmt.Sprintf("threads %d", s.Threads.Count)
	} else if s.ThreadsError != "" {
		threads = "threads ? (" + s.ThreadsError + ")"
	}
	t := &s.Totals
	fmt.Fprintf(w, "%s  up %s  requests %d (%.1f/s)  errors %d  hit rate %s (10 s: %s)  %s\n",
		s.Time.Local().Format("2006-01-02 15:04:05"), (time.Duration(s.UptimeS) * time.Second).String(),
		t.Requests, t.RequestsPerS, t.Errors, percent(t.HitRate), percent(t.HitRateWindow), threads)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "BACKEND\tPROFILE\tSTRATEGY\tREQ\tREQ/S\tERR\tHIT\tHIT 10S\tPROMPT/S\tCACHED/S\tCOMPUTED/S\tPROMPT\tCACHED\tCOMPUTED\tTTFT P50/P95\tTPOT P50/P95\tDISABLED")
	rowLine := func(r *observe.LiveRow, backend, profile, strategy string) {
		if r.AutoChoice != "" {
			strategy += " (auto: " + r.AutoChoice + ")"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%.1f\t%d\t%s\t%s\t%.0f\t%.0f\t%.0f\t%d\t%d\t%d\t%s\t%s\t%d\n",
			backend, profile, strategy, r.Requests, r.RequestsPerS, r.Errors, percent(r.HitRate), percent(r.HitRateWindow),
			r.PromptPerS, r.CachedPerS, r.ComputedPerS, r.PromptTokens, r.CachedTokens, r.ComputedTokens,
			millis(r.TTFTMS), millis(r.TPOTMS), r.DisabledCalls)
	}
	for i := range s.Rows {
		r := &s.Rows[i]
		rowLine(r, r.Backend, orDash(r.Profile), r.Strategy)
	}
	rowLine(t, "total", "", "")
	tw.Flush()
	for i := range s.Rows {
		if a := s.Rows[i].Auto; a != nil {
			fmt.Fprintf(w, "auto %s/%s: %s (%s); per session:", s.Rows[i].Backend, orDash(s.Rows[i].Profile), a.Strategy, a.Reason)
			for _, e := range a.Estimates {
				fmt.Fprintf(w, " %s %.3gs", e.Strategy, e.SecondsPerSession)
			}
			if len(a.Unfit) > 0 {
				fmt.Fprintf(w, "; outgrow the context: %s", strings.Join(a.Unfit, ", "))
			}
			fmt.Fprintln(w)
		}
	}
	fmt.Fprintln(w)
}

func percent(r *float64) string {
	if r == nil {
		return "-"
	}
	return fmt.Sprintf("%.1f%%", 100**r)
}

func millis(p observe.Percentiles) string {
	if p.N == 0 || p.P50 == nil || p.P95 == nil {
		return "-"
	}
	return fmt.Sprintf("%.1f/%.1f ms", *p.P50, *p.P95)
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
