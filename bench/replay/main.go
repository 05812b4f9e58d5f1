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
	"strconv"
	"strings"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stdout, os.Stderr, os.Getenv))
}

// run returns the exit status: 0 when the replay ran and its files are written, 1 when
// it could not, 2 for bad flags.
func run(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) int {
	fs := flag.NewFlagSet("replay", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var c Config
	fs.StringVar(&c.Target, "target", TargetModel, "what answers the gateway: model (the kvcache prefix model), embedded (llama.cpp in-process; -tags llamacpp) or url")
	catalogs := fs.String("catalogs", "", "catalog sizes in tools, comma-separated (default 20,100,500 on the prefix model, 20 on an engine)")
	scenarios := fs.String("scenarios", "", "fresh, profile, concurrent, long, comma-separated (default fresh,profile,long)")
	strategies := fs.String("strategies", "", "gateway strategies, comma-separated (default eager,remove,mask,allowed_tools,validate,index,auto)")
	fs.IntVar(&c.Sessions, "sessions", 10, "sessions of one profile in the profile scenarios")
	fs.IntVar(&c.Turns, "turns", 20, "turns per session")
	fs.IntVar(&c.LongTurns, "long-turns", 80, "turns of the long session")
	fs.IntVar(&c.Concurrency, "concurrency", 4, "sessions at once in the concurrent scenario")
	seed := fs.Uint64("seed", 1, "seed of the catalogs and sessions")
	fs.Float64Var(&c.Stray, "stray", 0.25, "share of tasks whose tool the model calls before loading it, where it can see it (0 to 1)")
	fs.IntVar(&c.BlockSize, "block-size", 16, "prefix model: tokens per cache block (16 as vLLM; 1 as llama.cpp)")
	fs.BoolVar(&c.Unconstrained, "unconstrained", false, "prefix model: an engine that cannot enforce the allowed set")
	fs.IntVar(&c.Context, "context", 0, "prefix model: the context window auto's cost model is told, in tokens (0: none)")
	fs.BoolVar(&c.Progressive, "progressive", false, "the gateway loads the top search results for each user message itself")
	fs.IntVar(&c.Paste, "paste", 0, "words of pasted context each user message carries (0: none)")
	fs.IntVar(&c.Gen, "gen", 16, "engine targets: output tokens decoded per round")
	fs.StringVar(&c.URL, "url", "", "url target: the engine's base URL as its clients write it (http://127.0.0.1:8000/v1 for vLLM, the server root for llama-server and Ollama)")
	fs.StringVar(&c.Kind, "kind", "", "url target: vllm, llamacpp, openai, sglang or ollama")
	fs.StringVar(&c.Model, "model", "", "url target: the model name the engine serves")
	keyEnv := fs.String("api-key-env", "", "url target: name of an environment variable holding the engine's API key")
	fs.StringVar(&c.GGUF, "gguf", "", "embedded target: GGUF file (default: the tiny random-weight model)")
	fs.IntVar(&c.Slots, "slots", 0, "embedded target: KV cache slots (default concurrency+1)")
	fs.IntVar(&c.NumCtx, "ctx", 0, "embedded target: context tokens per slot (default 32768)")
	fs.IntVar(&c.Threads, "threads", 0, "embedded target: CPU threads (default one per core)")
	quick := fs.Bool("quick", false, "a few seconds' smoke run: 20 tools, 6-turn sessions, 3 per profile, 10-turn long session, prefix model")
	out := fs.String("out", "replay-results", "output `directory` for results.md, results.json and the SVG plots")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "replay: unexpected argument %q; all settings are flags\n", fs.Arg(0))
		return 2
	}
	c.Seed = *seed
	if c.Stray == 0 {
		c.Stray = -1 // the flag's 0 means none; Config's zero means the default
	}
	var err error
	if c.Catalogs, err = ints(*catalogs); err != nil {
		fmt.Fprintf(stderr, "replay: -catalogs: %v\n", err)
		return 2
	}
	c.Scenarios, c.Strategies = list(*scenarios), list(*strategies)
	if *quick {
		c = quickConfig(c)
	}
	if *keyEnv != "" {
		if c.APIKey = getenv(*keyEnv); c.APIKey == "" {
			fmt.Fprintf(stderr, "replay: -api-key-env: environment variable %s is empty\n", *keyEnv)
			return 2
		}
	}
	c.Progress = stderr
	c = c.withDefaults()
	if err := c.validate(); err != nil {
		fmt.Fprintf(stderr, "replay: %v\n", err)
		return 2
	}

	t, err := newTarget(c)
	if err != nil {
		fmt.Fprintf(stderr, "replay: %v\n", err)
		return 1
	}
	defer t.close()
	fmt.Fprintf(stderr, "replay: target %s; %s\n", t.info().Name, t.info().Times)
	rep, err := Replay(ctx, c, t)
	if err != nil {
		fmt.Fprintf(stderr, "replay: %v\n", err)
		return 1
	}
	md, err := writeResults(rep, *out)
	if err != nil {
		fmt.Fprintf(stderr, "replay: -out %s: %v\n", *out, err)
		return 1
	}
	stdout.Write(md)
	return 0
}

// quickConfig is -quick: the smallest replay that still exercises every strategy and
// scenario.
func quickConfig(c Config) Config {
	c.Target = TargetModel
	c.Catalogs = []int{20}
	c.Turns, c.LongTurns, c.Sessions, c.Concurrency = 6, 10, 3, 2
	if len(c.Scenarios) == 0 {
		c.Scenarios = []string{ScenarioFresh, ScenarioProfile, ScenarioConcurrent, ScenarioLong}
	}
	return c
}

// writeResults writes results.md, results.json and the plots into dir and returns the
// Markdown.
func writeResults(rep *Report, dir string) ([]byte, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	plots, err := writePlots(rep, dir)
	if err != nil {
		return nil, err
	}
	var md bytes.Buffer
	if err := rep.Markdown(&md, plots); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(dir, "results.md"), md.Bytes(), 0o644); err != nil {
		return nil, err
	}
	js, err := json.Marshal(rep) // compact: per-turn records make it long
	if err != nil {
		return nil, err
	}
	return md.Bytes(), os.WriteFile(filepath.Join(dir, "results.json"), append(js, '\n'), 0o644)
}

func list(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

func ints(s string) ([]int, error) {
	var out []int
	for _, f := range list(s) {
		n, err := strconv.Atoi(f)
		if err != nil {
			return nil, fmt.Errorf("%q is not a number of tools", f)
		}
		out = append(out, n)
	}
	return out, nil
}
