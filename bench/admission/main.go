package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run returns the exit status: 0 when every check held, 1 when one failed or the run
// could not start, 2 for bad flags.
func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("admission", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var c Config
	fs.DurationVar(&c.Duration, "duration", 0, "how long arrivals are sent (default 30s)")
	fs.Float64Var(&c.Rate, "rate", 0, "arrival `rate` per second, per key (default 200)")
	fs.IntVar(&c.Clients, "clients", 0, "concurrent streaming clients per key (default 64)")
	fs.DurationVar(&c.ChunkDelay, "chunk-delay", 0, "upstream pause before each stream event (default 2ms)")
	fs.IntVar(&c.GreedyRPM, "greedy-rpm", 0, "requests_per_minute of the key sent above its limit (default 15 × rate)")
	fs.DurationVar(&c.Sample, "sample", 0, "memory sampling period (default 250ms)")
	jsonPath := fs.String("json", "", "also write the figures to this `file` as JSON")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "admission: unexpected argument %q; all settings are flags\n", fs.Arg(0))
		return 2
	}
	if err := c.withDefaults().validate(); err != nil {
		fmt.Fprintf(stderr, "admission: %v\n", err)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	rep, err := Run(ctx, c)
	if err != nil {
		fmt.Fprintf(stderr, "admission: %v\n", err)
		return 1
	}
	rep.Markdown(stdout)
	if *jsonPath != "" {
		out, err := json.MarshalIndent(rep, "", "  ")
		if err == nil {
			err = os.WriteFile(*jsonPath, append(out, '\n'), 0o644)
		}
		if err != nil {
			fmt.Fprintf(stderr, "admission: -json: %v\n", err)
			return 1
		}
	}
	if len(rep.Problems) > 0 {
		for _, p := range rep.Problems {
			fmt.Fprintf(stderr, "admission: %s\n", p)
		}
		return 1
	}
	return 0
}
