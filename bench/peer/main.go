package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
)

func main() {
	if up := os.Getenv(childEnv); up != "" {
		os.Exit(serveChild(os.Getenv(childKindEnv), up))
	}
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run returns the exit status: 0 when every request succeeded, 1 when the run could not
// be made or some requests failed (the figures leave those out), 2 for bad flags.
func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("peer", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var c Config
	fs.BoolVar(&c.Quick, "quick", false, "1 s rounds and short warm-ups (the figures are rougher)")
	fs.DurationVar(&c.Round, "round", 0, "how long each path sends per round (default 4s, 1s with -quick)")
	fs.IntVar(&c.Rounds, "rounds", 0, "rounds per scenario; each path takes one turn a round (default 3)")
	fs.DurationVar(&c.Timeout, "timeout", 0, "bound on each request; one that runs out counts as failed (default 10s)")
	fs.DurationVar(&c.Think, "think", 0, "upstream think time before it answers")
	fs.IntVar(&c.Prime, "prime", 0, "closed-loop warm-up requests per path and body before the first scenario (default 2000, 300 with -quick)")
	fs.StringVar(&c.NodeDir, "node-dir", "", "folder with the package-lock.json that pins Portkey (default bench/peer/testdata/node)")
	out := fs.String("out", "", "folder for peer.md, peer.json and peer.svg (default bench/peer/out)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "peer: unexpected argument %q; all settings are flags\n", fs.Arg(0))
		return 2
	}
	if err := c.withDefaults().validate(); err != nil {
		fmt.Fprintf(stderr, "peer: %v\n", err)
		return 2
	}
	if *out == "" {
		wd, err := os.Getwd()
		if err == nil {
			var root string
			if root, err = moduleRoot(wd); err == nil {
				*out = filepath.Join(root, "bench", "peer", "out")
			}
		}
		if err != nil {
			fmt.Fprintf(stderr, "peer: %v; give -out\n", err)
			return 2
		}
	}
	c.Progress = stderr

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	rep, err := Measure(ctx, c)
	if err != nil {
		fmt.Fprintf(stderr, "peer: %v\n", err)
		return 1
	}
	files, err := rep.write(*out)
	if err != nil {
		fmt.Fprintf(stderr, "peer: %v\n", err)
		return 1
	}
	var md bytes.Buffer
	if err := rep.Markdown(&md); err != nil {
		fmt.Fprintf(stderr, "peer: %v\n", err)
		return 1
	}
	_, _ = stdout.Write(md.Bytes())
	fmt.Fprintf(stderr, "peer: wrote %v\n", files)
	if n := rep.failed(); n > 0 {
		fmt.Fprintf(stderr, "peer: %d requests failed; the figures leave them out\n", n)
		return 1
	}
	return 0
}

// write puts the report in dir as Markdown, JSON and SVG, and returns the files' paths.
func (r *Report) write(dir string) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	var md, svg bytes.Buffer
	if err := r.Markdown(&md); err != nil {
		return nil, err
	}
	if err := r.SVG(&svg); err != nil {
		return nil, err
	}
	js, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return nil, err
	}
	var files []string
	for _, f := range []struct {
		name string
		b    []byte
	}{{"peer.md", md.Bytes()}, {"peer.json", append(js, '\n')}, {"peer.svg", svg.Bytes()}} {
		p := filepath.Join(dir, f.name)
		if err := os.WriteFile(p, f.b, 0o644); err != nil {
			return nil, err
		}
		files = append(files, p)
	}
	return files, nil
}

// failed counts failed requests across the report.
func (r *Report) failed() int {
	n := 0
	for _, s := range r.Scenarios {
		for _, p := range s.Paths {
			n += p.Errors
		}
	}
	return n
}
