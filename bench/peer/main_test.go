package main

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/maskgate/maskgate/internal/nodetest"
)

// TestMain lets the test binary serve as the proxy and maskgate children, as the bench
// binary does.
func TestMain(m *testing.M) {
	if up := os.Getenv(childEnv); up != "" {
		os.Exit(serveChild(os.Getenv(childKindEnv), up))
	}
	os.Exit(m.Run())
}

// TestMeasure_QuickFourPaths runs one small scenario through all four paths, Portkey
// installed from the pinned lock, and checks the report's shape, never its timings:
// speed is what the bench reports, not what a test asserts. The scenario is a stream, the
// kind that breaks in Portkey without the @hono/node-server pin.
func TestMeasure_QuickFourPaths(t *testing.T) {
	nodetest.Node(t, "testdata/node")
	nodeDir, err := filepath.Abs("testdata/node")
	if err != nil {
		t.Fatal(err)
	}
	sc := Scenario{Tools: 4, Stream: true, Rate: 100}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	rep, err := Measure(ctx, Config{Quick: true, Prime: 100, Scenarios: []Scenario{sc}, NodeDir: nodeDir})
	if err != nil {
		t.Fatal(err)
	}

	if rep.Truncated {
		t.Error("report is truncated")
	}
	if rep.Portkey != "1.15.2" || rep.HonoServer != "1.13.8" || rep.Node == "" {
		t.Errorf("versions: Portkey %q, @hono/node-server %q, node %q; want the pinned 1.15.2 and 1.13.8", rep.Portkey, rep.HonoServer, rep.Node)
	}
	if len(rep.Scenarios) != 1 {
		t.Fatalf("%d scenarios, want 1", len(rep.Scenarios))
	}
	s := rep.Scenarios[0]
	if s.Scenario != sc || s.BodyBytes < 1500 {
		t.Errorf("scenario %+v, %d bytes", s.Scenario, s.BodyBytes)
	}
	var names []string
	for _, p := range s.Paths {
		names = append(names, p.Path)
		if p.Errors != 0 || p.OK != p.Sent || p.OK < 3*80 {
			t.Errorf("%s: %d sent, %d ok, %d failed (first: %s); want about 300, all ok", p.Path, p.Sent, p.OK, p.Errors, p.FirstError)
		}
		l := p.Latency
		if !(0 < l.P50 && l.P50 <= l.P90 && l.P90 <= l.P99 && l.P99 <= l.Max) || l.Mean <= 0 {
			t.Errorf("%s: latency out of order or not positive: %+v", p.Path, l)
		}
		if p.FirstEvent == nil || p.FirstEvent.P50 <= 0 || p.FirstEvent.P50 > l.P50 {
			t.Errorf("%s: time to first event %+v against total p50 %v", p.Path, p.FirstEvent, l.P50)
		}
		if len(p.Rounds) != 3 {
			t.Errorf("%s: %d rounds, want 3", p.Path, len(p.Rounds))
		}
		if !finitePositive(p.ServedRate) {
			t.Errorf("%s: served rate %g", p.Path, p.ServedRate)
		}
		if p.Path == pathDirect {
			if p.CPUPerRequest != nil {
				t.Errorf("direct has a CPU figure: %v", *p.CPUPerRequest)
			}
			continue
		}
		if p.CPUPerRequest == nil || *p.CPUPerRequest <= 0 || *p.CPUPerRequest > time.Second {
			t.Errorf("%s: CPU per request %v, want a positive figure", p.Path, p.CPUPerRequest)
		}
	}
	if diff := cmp.Diff([]string{pathDirect, pathProxy, pathMaskgate, pathPortkey}, names); diff != "" {
		t.Errorf("paths (-want +got):\n%s", diff)
	}

	// The files: Markdown with one row per scenario, JSON that reads back, SVG that
	// parses as XML with the three series.
	dir := t.TempDir()
	files, err := rep.write(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 3 {
		t.Fatalf("wrote %v", files)
	}
	md := readFile(t, filepath.Join(dir, "peer.md"))
	for _, want := range []string{
		"| body | rate | direct p50 / p99 | bare proxy p50 / p99, CPU per request | maskgate p50 / p99, CPU per request | Portkey p50 / p99, CPU per request | maskgate ÷ bare proxy: p50, CPU |",
		"| 4 tools (2.3 KB), streamed | 100/s |",
		fmt.Sprintf("same %d cores", rep.NumCPU), // the note that the load generator shares them
	} {
		if !strings.Contains(md, want) {
			t.Errorf("peer.md lacks %q:\n%s", want, md)
		}
	}
	var back Report
	if err := json.Unmarshal([]byte(readFile(t, filepath.Join(dir, "peer.json"))), &back); err != nil {
		t.Fatalf("peer.json: %v", err)
	}
	lat, cpu := s.OverProxy()
	mg, px := s.Paths[2], s.Paths[1]
	if want := float64(mg.Latency.P50) / float64(px.Latency.P50); lat != want || cpu <= 0 {
		t.Errorf("maskgate over the proxy: ×%g latency (want ×%g from the two p50s), ×%g CPU", lat, want, cpu)
	}
	if !strings.Contains(md, fmt.Sprintf(" ×%.2f, ×%.2f |", lat, cpu)) {
		t.Errorf("peer.md lacks the ratio column ×%.2f, ×%.2f:\n%s", lat, cpu, md)
	}
	if len(back.Scenarios) != 1 || len(back.Scenarios[0].Paths) != 4 || back.Scenarios[0].Paths[2].Latency != s.Paths[2].Latency {
		t.Errorf("peer.json does not hold the report: %+v", back.Scenarios)
	}
	series, bars := svgSeries(t, readFile(t, filepath.Join(dir, "peer.svg")))
	if diff := cmp.Diff(map[string][]string{
		"latency": {pathDirect, pathProxy, pathMaskgate, pathPortkey},
		"cpu":     {pathProxy, pathMaskgate, pathPortkey},
	}, series); diff != "" {
		t.Errorf("SVG series by panel (-want +got):\n%s", diff)
	}
	if bars != 7 {
		t.Errorf("SVG has %d bars, want 7 (4 latency, 3 CPU)", bars)
	}
}

// svgSeries parses doc as XML to the end and returns the series of each panel, in
// order, and the number of bars.
func svgSeries(t *testing.T, doc string) (map[string][]string, int) {
	t.Helper()
	series := map[string][]string{}
	bars := 0
	sawSVG := false
	dec := xml.NewDecoder(strings.NewReader(doc))
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("peer.svg is not well-formed XML: %v", err)
		}
		el, ok := tok.(xml.StartElement)
		if !ok {
			continue
		}
		attr := func(name string) string {
			for _, a := range el.Attr {
				if a.Name.Local == name {
					return a.Value
				}
			}
			return ""
		}
		switch {
		case el.Name.Local == "svg":
			sawSVG = el.Name.Space == "http://www.w3.org/2000/svg"
		case el.Name.Local == "g" && attr("class") == "series":
			series[attr("data-panel")] = append(series[attr("data-panel")], attr("data-series"))
		case el.Name.Local == "rect" && attr("class") == "bar":
			bars++
			if h := attr("height"); h == "" || strings.HasPrefix(h, "-") || h == "NaN" {
				t.Errorf("bar with height %q", h)
			}
		}
	}
	if !sawSVG {
		t.Error("peer.svg has no svg element in the SVG namespace")
	}
	return series, bars
}

func TestPercentile_NearestRank(t *testing.T) {
	ms := func(ns ...int) []time.Duration {
		var out []time.Duration
		for _, n := range ns {
			out = append(out, time.Duration(n)*time.Millisecond)
		}
		return out
	}
	hundred := make([]time.Duration, 100)
	for i := range hundred {
		hundred[i] = time.Duration(i+1) * time.Millisecond
	}
	for _, tt := range []struct {
		name   string
		sorted []time.Duration
		p      float64
		want   time.Duration
	}{
		{"empty", nil, 0.5, 0},
		{"one", ms(7), 0.5, 7 * time.Millisecond},
		{"one p99", ms(7), 0.99, 7 * time.Millisecond},
		{"two p50 is the lower", ms(1, 2), 0.5, time.Millisecond},
		{"two p51 is the upper", ms(1, 2), 0.51, 2 * time.Millisecond},
		{"hundred p50", hundred, 0.50, 50 * time.Millisecond},
		{"hundred p90", hundred, 0.90, 90 * time.Millisecond},
		{"hundred p99", hundred, 0.99, 99 * time.Millisecond},
		{"hundred p100", hundred, 1, 100 * time.Millisecond},
		{"ten p99 is the max", ms(1, 2, 3, 4, 5, 6, 7, 8, 9, 10), 0.99, 10 * time.Millisecond},
		{"ten p1 is the min", ms(1, 2, 3, 4, 5, 6, 7, 8, 9, 10), 0.01, time.Millisecond},
	} {
		if got := percentile(tt.sorted, tt.p); got != tt.want {
			t.Errorf("%s: percentile(%v, %g) = %v, want %v", tt.name, tt.sorted, tt.p, got, tt.want)
		}
	}
}

func TestSummarize_SortsAndAverages(t *testing.T) {
	ds := []time.Duration{9, 3, 5, 1, 7, 2, 8, 4, 10, 6}
	got := summarize(ds)
	want := Latency{P50: 5, P90: 9, P99: 10, Max: 10, Mean: 5}
	if got != want {
		t.Errorf("summarize = %+v, want %+v", got, want)
	}
	if !slices.IsSorted(ds) {
		t.Errorf("input not sorted in place: %v", ds)
	}
	if (summarize(nil) != Latency{}) {
		t.Error("summarize(nil) is not zero")
	}
}

// TestCheckAnswer_ToleratesReserializingGateways: a gateway may rewrite the JSON or drop
// the usage chunk, but not lose text chunks or the end of the stream.
func TestCheckAnswer_ToleratesReserializingGateways(t *testing.T) {
	var stream bytes.Buffer
	for _, e := range streamEvents {
		stream.Write(e)
	}
	stream.WriteString(doneFrame)
	full := stream.Bytes()
	noUsage := bytes.Replace(full, streamEvents[len(streamEvents)-1], nil, 1)
	noText := bytes.Replace(full, streamEvents[2], nil, 1)
	cut := full[:len(full)-len(doneFrame)]
	for _, tt := range []struct {
		name   string
		status int
		body   []byte
		stream bool
		ok     bool
	}{
		{"whole", 200, wholeAnswer, false, true},
		{"whole, re-serialized", 200, []byte(`{"object":"chat.completion","provider":"openai","choices":[{"message":{"content":"… take a jacket."}}]}`), false, true},
		{"whole, error status", 502, wholeAnswer, false, false},
		{"whole, not the upstream's", 200, []byte(`{"object":"chat.completion"}`), false, false},
		{"stream", 200, full, true, true},
		{"stream without usage", 200, noUsage, true, true},
		{"stream missing a text chunk", 200, noText, true, false},
		{"stream cut before [DONE]", 200, cut, true, false},
	} {
		if err := checkAnswer(tt.status, tt.body, tt.stream); (err == nil) != tt.ok {
			t.Errorf("%s: err = %v, want ok %v", tt.name, err, tt.ok)
		}
	}
}

func TestProcCPU_ThisProcess(t *testing.T) {
	d, err := procCPU(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	self, err := selfCPU()
	if err != nil {
		t.Fatal(err)
	}
	// Both count this process's CPU; /proc in whole ticks, read first.
	if d < 0 || d > self+clockTick {
		t.Errorf("/proc says %v, getrusage %v", d, self)
	}
}

func finitePositive(f float64) bool { return f > 0 && !math.IsInf(f, 0) && !math.IsNaN(f) }

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
