// Command testreport reads `go test -json` on standard input and writes what plain
// `go test` would (each package's ok or FAIL line, and the whole output of every test
// that failed), then the slowest top-level tests of the run, so that a long run shows
// which tests its minutes went to, not only which packages.
//
//	go test -json ./... | go run ./internal/testreport [-top N]
//
// A test's output is held until it ends and written only if it failed. Output that
// belongs to no test (a package's summary lines, a panic outside any test, a timeout's
// list of running tests) is written as it comes, and so is build output. When a package
// ends without a verdict for some of its tests (a crash, a timeout), their held output
// is written then, so nothing that explains a failure is lost. It exits 0: go test's own
// status is the run's.
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
)

func main() {
	top := flag.Int("top", 15, "how many of the slowest top-level tests to list at the end")
	flag.Parse()
	if err := report(os.Stdin, os.Stdout, *top); err != nil {
		fmt.Fprintf(os.Stderr, "testreport: %v\n", err)
		os.Exit(1)
	}
}

// event is one line of `go test -json` (cmd/test2json).
type event struct {
	Action     string
	Package    string
	ImportPath string // build-output, build-fail
	Test       string
	Elapsed    float64
	Output     string
}

type testKey struct{ pkg, test string }

// timing is one top-level test's run time.
type timing struct {
	pkg, test string
	seconds   float64
}

// maxHeld bounds the output held for one running test; beyond it the oldest lines go,
// and a note says how many.
const maxHeld = 1 << 20

type held struct {
	lines   []string
	bytes   int
	dropped int
}

func (h *held) add(s string) {
	h.lines = append(h.lines, s)
	h.bytes += len(s)
	for h.bytes > maxHeld && len(h.lines) > 1 {
		h.bytes -= len(h.lines[0])
		h.lines = h.lines[1:]
		h.dropped++
	}
}

func (h *held) writeTo(w io.Writer) {
	if h.dropped > 0 {
		fmt.Fprintf(w, "testreport: %d earlier lines of this test's output left out\n", h.dropped)
	}
	for _, l := range h.lines {
		io.WriteString(w, l)
	}
}

func report(r io.Reader, out io.Writer, top int) error {
	w := bufio.NewWriter(out)
	defer w.Flush()
	running := map[testKey]*held{}
	var times []timing
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
	for sc.Scan() {
		line := sc.Bytes()
		var e event
		if err := json.Unmarshal(line, &e); err != nil || e.Action == "" {
			// Not an event: go test's own messages (a vet or setup error) pass through.
			w.Write(line)
			w.WriteByte('\n')
			continue
		}
		switch {
		case e.Action == "build-output":
			io.WriteString(w, e.Output)
		case e.Test == "":
			// go test -json runs the binaries verbose, so a passing package also says
			// PASS; plain go test does not.
			if e.Action == "output" && e.Output != "PASS\n" {
				io.WriteString(w, e.Output)
			}
			if e.Action == "pass" || e.Action == "fail" || e.Action == "skip" {
				// The package is over: what never got a verdict is written now.
				var left []testKey
				for k := range running {
					if k.pkg == e.Package {
						left = append(left, k)
					}
				}
				sort.Slice(left, func(i, j int) bool { return left[i].test < left[j].test })
				for _, k := range left {
					running[k].writeTo(w)
					delete(running, k)
				}
			}
			w.Flush()
		default:
			k := testKey{e.Package, e.Test}
			switch e.Action {
			case "run":
				if running[k] == nil {
					running[k] = &held{}
				}
			case "output":
				h := running[k]
				if h == nil {
					h = &held{}
					running[k] = h
				}
				h.add(e.Output)
			case "pass", "skip":
				delete(running, k)
				if e.Action == "pass" && !strings.Contains(e.Test, "/") {
					times = append(times, timing{e.Package, e.Test, e.Elapsed})
				}
			case "fail":
				if h := running[k]; h != nil {
					h.writeTo(w)
				}
				delete(running, k)
				if !strings.Contains(e.Test, "/") {
					times = append(times, timing{e.Package, e.Test, e.Elapsed})
				}
			}
		}
	}
	if err := sc.Err(); err != nil {
		return err
	}
	// Input that ended mid-test (go test killed): write what is held.
	var left []testKey
	for k := range running {
		left = append(left, k)
	}
	sort.Slice(left, func(i, j int) bool {
		if left[i].pkg != left[j].pkg {
			return left[i].pkg < left[j].pkg
		}
		return left[i].test < left[j].test
	})
	for _, k := range left {
		running[k].writeTo(w)
	}
	if top > 0 && len(times) > 0 {
		sort.SliceStable(times, func(i, j int) bool { return times[i].seconds > times[j].seconds })
		fmt.Fprintf(w, "\ntestreport: the %d slowest tests\n", min(top, len(times)))
		for _, t := range times[:min(top, len(times))] {
			fmt.Fprintf(w, "%8.1f  %s %s\n", t.seconds, strings.TrimPrefix(t.pkg, "github.com/maskgate/maskgate/"), t.test)
		}
	}
	return nil
}
