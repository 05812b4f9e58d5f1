package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"syscall"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run returns the exit status: 0 when every request succeeded, 1 when the measurement
// could not run or some requests failed (the table still shows the rest), 2 for bad flags.
func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("overhead", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var c Config
	fs.Float64Var(&c.Rate, "rate", 5000, "open-loop arrival `rate` in requests per second, per path")
	fs.IntVar(&c.N, "n", 20000, "measured requests per path and kind of response")
	fs.IntVar(&c.Block, "block", 1000, "requests a path sends before the next takes its turn")
	fs.IntVar(&c.Warmup, "warmup", 0, "unmeasured requests per path first (default n/10, within 20..2000)")
	fs.DurationVar(&c.Duration, "duration", 0, "stop after this long and report what was measured (default 3m)")
	fs.DurationVar(&c.Timeout, "timeout", 0, "bound on each request (default 10s)")
	fs.IntVar(&c.MaxInFlight, "max-inflight", 0, "outstanding requests per path above which an arrival counts as an error (default 4096)")
	fs.IntVar(&c.Tools, "tools", 0, "tools in each request: 4 gives about 2 KB, 500 about 300 KB (default 4)")
	fs.StringVar(&c.Gateway, "gateway", "", "base `URL` of a running gateway on loopback to measure instead of an in-process one")
	fs.StringVar(&c.UpstreamAddr, "upstream", "", "loopback `address` for the canned upstream (default 127.0.0.1 on a free port)")
	procs := fs.Int("procs", 0, "GOMAXPROCS for the whole process, generator included (default: leave it)")
	jsonPath := fs.String("json", "", "also write the figures to this `file` as JSON")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "overhead: unexpected argument %q; all settings are flags\n", fs.Arg(0))
		return 2
	}
	if *procs < 0 {
		fmt.Fprintln(stderr, "overhead: -procs must not be negative")
		return 2
	}
	if *procs > 0 {
		runtime.GOMAXPROCS(*procs)
	}
	if err := c.withDefaults().validate(); err != nil {
		fmt.Fprintf(stderr, "overhead: %v\n", err)
		return 2
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	rep, err := Measure(ctx, c)
	if err != nil {
		fmt.Fprintf(stderr, "overhead: %v\n", err)
		return 1
	}
	if err := rep.Markdown(stdout); err != nil {
		fmt.Fprintf(stderr, "overhead: %v\n", err)
		return 1
	}
	if *jsonPath != "" {
		out, err := json.MarshalIndent(rep, "", "  ")
		if err == nil {
			err = os.WriteFile(*jsonPath, append(out, '\n'), 0o644)
		}
		if err != nil {
			fmt.Fprintf(stderr, "overhead: -json: %v\n", err)
			return 1
		}
	}
	if n := rep.failed(); n > 0 {
		fmt.Fprintf(stderr, "overhead: %d requests failed; the figures leave them out\n", n)
		return 1
	}
	return 0
}
