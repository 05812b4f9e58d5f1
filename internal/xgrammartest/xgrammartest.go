package xgrammartest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/maskgate/maskgate/internal/nodetest"
)

// Case is one structural tag and what to try on it.
type Case struct {
	// Name says which tag this is, in failure messages.
	Name string
	// Tag is the structural tag's JSON text, as the engine gets it.
	Tag []byte
	// Outputs are whole model outputs, checked from the first byte to the
	// last.
	Outputs []Output
	// Vocab, Stop and Walks drive a GrammarMatcher: Vocab is a raw
	// vocabulary (token id = index, text as is), Stop its stop tokens, and
	// each walk a token sequence; Result.Walks has the matcher's verdict.
	Vocab []string
	Stop  []int
	Walks [][]int
}

// Output is one model output and the verdict the caller expects.
type Output struct {
	Text string
	// Accept is whether the tag must accept Text whole.
	Accept bool
	// Kind names what Text is ("allowed call", "disabled name", ...), for
	// Report's counts.
	Kind string
}

// Result is xgrammar's verdict on one Case.
type Result struct {
	// Err is why xgrammar refused to compile the tag; empty if it did.
	Err string `json:"error"`
	// Accepted is, per output, whether the tag accepted it.
	Accepted []bool `json:"accepted"`
	Walks    []Walk `json:"walks"`
}

// Walk is a GrammarMatcher's verdict on one token walk.
type Walk struct {
	// RejectedAt is the index of the first token the matcher refused, or
	// -1.
	RejectedAt int `json:"rejected_at"`
	// Allowed is the token ids the matcher's bitmask allows after the whole
	// walk (none when a token was refused).
	Allowed []int `json:"allowed"`
}

// Run checks every case in one node process and returns xgrammar's version
// (the npm package's) and one Result per case, in order. It fails the test
// if node cannot run the check; a tag xgrammar refuses is a Result, not a
// failure.
func Run(t testing.TB, cases []Case) (version string, results []Result) {
	t.Helper()
	dir := nodeDir(t)
	node := nodetest.Node(t, dir)

	type wireCase struct {
		Tag     string   `json:"tag"`
		Outputs []string `json:"outputs"`
		Vocab   []string `json:"vocab,omitempty"`
		Stop    []int    `json:"stop,omitempty"`
		Walks   [][]int  `json:"walks,omitempty"`
	}
	req := struct {
		Cases []wireCase `json:"cases"`
	}{Cases: make([]wireCase, len(cases))}
	for i, c := range cases {
		w := wireCase{Tag: string(c.Tag), Outputs: make([]string, len(c.Outputs)), Vocab: c.Vocab, Stop: c.Stop, Walks: c.Walks}
		for j, o := range c.Outputs {
			w.Outputs[j] = o.Text
		}
		req.Cases[i] = w
	}
	in, err := json.Marshal(req)
	if err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "check.mjs")
	cmd.Dir = dir
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "NODE_NO_WARNINGS=1"}
	cmd.Stdin = bytes.NewReader(in)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("node check.mjs in %s: %v\n%s", dir, err, stderr.Bytes())
	}
	var out struct {
		Version string   `json:"version"`
		Results []Result `json:"results"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &out); err != nil {
		t.Fatalf("node check.mjs printed no JSON answer: %v\nstdout: %.2000s\nstderr: %s", err, stdout.Bytes(), stderr.Bytes())
	}
	if len(out.Results) != len(cases) {
		t.Fatalf("node check.mjs answered %d cases of %d", len(out.Results), len(cases))
	}
	for i, r := range out.Results {
		if r.Err == "" && len(r.Accepted) != len(cases[i].Outputs) {
			t.Fatalf("%s: %d verdicts for %d outputs", cases[i].Name, len(r.Accepted), len(cases[i].Outputs))
		}
	}
	return out.Version, out.Results
}

// Report is what Check found.
type Report struct {
	// Version is xgrammar's (the npm package's).
	Version string
	// Results are Run's, one per case.
	Results []Result
	// Right counts, per Output.Kind, the outputs xgrammar judged as the
	// caller expected; Wrong those it did not.
	Right, Wrong map[string]int
}

// Check runs cases (Run) and fails the test for every tag xgrammar refuses
// to compile and every output it judges otherwise than Output.Accept says.
// Walks are left to the caller, in Report.Results.
func Check(t testing.TB, cases []Case) Report {
	t.Helper()
	version, results := Run(t, cases)
	rep := Report{Version: version, Results: results, Right: map[string]int{}, Wrong: map[string]int{}}
	for i, c := range cases {
		r := results[i]
		if r.Err != "" {
			t.Errorf("%s: xgrammar %s refused the tag: %s\n%s", c.Name, version, r.Err, c.Tag)
			for _, o := range c.Outputs {
				rep.Wrong[o.Kind]++
			}
			continue
		}
		for j, o := range c.Outputs {
			if r.Accepted[j] == o.Accept {
				rep.Right[o.Kind]++
				continue
			}
			rep.Wrong[o.Kind]++
			verdict := "accepted"
			if !r.Accepted[j] {
				verdict = "refused"
			}
			t.Errorf("%s: xgrammar %s %s %s %q\ntag: %.3000s", c.Name, version, verdict, o.Kind, o.Text, c.Tag)
		}
	}
	return rep
}

// nodeDir is testdata/node of this package, found from the test's working
// directory (its package's folder) through the module root.
func nodeDir(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return filepath.Join(dir, "internal", "xgrammartest", "testdata", "node")
		} else if !errors.Is(err, os.ErrNotExist) {
			t.Fatal(err)
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatalf("no go.mod above the test's folder: internal/xgrammartest runs inside the maskgate module")
		}
		dir = parent
	}
}
