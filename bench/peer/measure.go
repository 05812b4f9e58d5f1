package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime"
	"strings"
	"time"

	"github.com/maskgate/maskgate/bench/overhead/workload"
)

// Scenario is one kind of request at one open-loop arrival rate.
type Scenario struct {
	Tools  int     `json:"tools"`
	Stream bool    `json:"stream"`
	Rate   float64 `json:"rate"` // requests per second while a path has its turn
}

// DefaultScenarios are the five the bench runs unless told otherwise.
var DefaultScenarios = []Scenario{
	{Tools: 4, Rate: 300},
	{Tools: 4, Rate: 800},
	{Tools: 4, Stream: true, Rate: 800},
	{Tools: 200, Rate: 100},
	{Tools: 200, Rate: 300},
}

func (s Scenario) kind() string {
	if s.Stream {
		return "streamed"
	}
	return "whole"
}

// Config is one run. The zero value of each field is its default.
type Config struct {
	// Quick shortens the run: 1 s rounds and short warm-ups.
	Quick bool
	// Round is how long each path sends in each round. If zero, 4 s (1 s with Quick).
	Round time.Duration
	// Rounds is how many times each path takes its turn per scenario. If zero, 3.
	Rounds int
	// Warmup is how long each path is sent the scenario's load, unmeasured, before its
	// first round. If zero, 1 s (300 ms with Quick).
	Warmup time.Duration
	// Prime is how many requests each path is sent per kind of body, closed-loop, before
	// the first scenario. If zero, 2000 (300 with Quick).
	Prime int
	// Settle is the pause between one path's turn and the next, for the last one's
	// stragglers and garbage collection. If zero, 300 ms (100 ms with Quick).
	Settle time.Duration
	// Timeout bounds each request. If zero, 10 s.
	Timeout time.Duration
	// MaxInFlight bounds the outstanding requests on a path; an arrival above it counts
	// as failed, so the schedule stays open-loop. If zero, 2048.
	MaxInFlight int
	// Think is how long the upstream waits before it answers. Zero: it answers at once.
	Think time.Duration
	// Scenarios are run in order. If empty, DefaultScenarios.
	Scenarios []Scenario
	// NodeDir holds the package.json and package-lock.json that pin Portkey. If empty,
	// bench/peer/testdata/node of the checkout around the working directory.
	NodeDir string
	// Progress, if set, gets a line per round.
	Progress io.Writer
}

func (c Config) withDefaults() Config {
	def := func(d *time.Duration, full, quick time.Duration) {
		if *d == 0 {
			*d = full
			if c.Quick {
				*d = quick
			}
		}
	}
	def(&c.Round, 4*time.Second, time.Second)
	def(&c.Warmup, time.Second, 300*time.Millisecond)
	def(&c.Settle, 300*time.Millisecond, 100*time.Millisecond)
	def(&c.Timeout, 10*time.Second, 10*time.Second)
	if c.Prime == 0 {
		c.Prime = 2000
		if c.Quick {
			c.Prime = 300
		}
	}
	if c.Rounds == 0 {
		c.Rounds = 3
	}
	if c.MaxInFlight == 0 {
		c.MaxInFlight = 2048
	}
	if len(c.Scenarios) == 0 {
		c.Scenarios = DefaultScenarios
	}
	if c.Progress == nil {
		c.Progress = io.Discard
	}
	return c
}

func (c Config) validate() error {
	switch {
	case c.Round < 0 || c.Warmup < 0 || c.Settle < 0 || c.Timeout < 0 || c.Think < 0:
		return fmt.Errorf("durations must not be negative")
	case c.Rounds < 0 || c.MaxInFlight < 0 || c.Prime < 0:
		return fmt.Errorf("-rounds, -prime and -max-inflight must not be negative")
	}
	for _, s := range c.Scenarios {
		if s.Tools < 0 || s.Rate <= 0 || s.Rate > 100_000 {
			return fmt.Errorf("scenario %+v: give 0 or more tools and a rate of 1 to 100000 requests per second", s)
		}
	}
	return nil
}

// Report is what one run measured.
type Report struct {
	Started     time.Time     `json:"started"`
	Wall        time.Duration `json:"wall_ns"`
	Quick       bool          `json:"quick"`
	GoVersion   string        `json:"go_version"`
	GOOS        string        `json:"goos"`
	GOARCH      string        `json:"goarch"`
	NumCPU      int           `json:"num_cpu"`
	LoadAverage string        `json:"load_average,omitempty"` // one-minute, as the run began
	Node        string        `json:"node_version"`
	Portkey     string        `json:"portkey_version"`
	HonoServer  string        `json:"hono_node_server_version"`
	Round       time.Duration `json:"round_ns"`
	Rounds      int           `json:"rounds"`
	Warmup      time.Duration `json:"warmup_ns"`
	Prime       int           `json:"prime_requests"`
	Think       time.Duration `json:"think_ns"`
	Timeout     time.Duration `json:"timeout_ns"`
	// Truncated is set when an interrupt ended the run early.
	Truncated bool             `json:"truncated"`
	Scenarios []ScenarioResult `json:"scenarios"`
}

// ScenarioResult has one PathResult per path: direct, proxy, maskgate, portkey.
type ScenarioResult struct {
	Scenario
	BodyBytes int          `json:"body_bytes"`
	Paths     []PathResult `json:"paths"`
}

// PathResult is one path's figures over all rounds of a scenario.
type PathResult struct {
	Path   string `json:"path"`
	Sent   int    `json:"sent"`
	OK     int    `json:"ok"`
	Errors int    `json:"errors"`
	// TimedOut counts the errors that were the request timeout running out.
	TimedOut   int    `json:"timed_out"`
	FirstError string `json:"first_error,omitempty"`
	// Latency is to the answer's last byte ([DONE] for a stream), timed from the send.
	Latency Latency `json:"latency"`
	// FirstEvent is to the end of a stream's first event (streams only).
	FirstEvent *Latency `json:"first_event,omitempty"`
	// ServedRate is the answers per second over the path's rounds, first send to last
	// answer: below the offered rate, the path fell behind and its queue grew.
	ServedRate float64 `json:"served_rate"`
	// LagP99 is how late the load generator sent requests against the schedule.
	LagP99 time.Duration `json:"send_lag_p99_ns"`
	// CPU is the gateway process's user+system CPU time over the rounds, and
	// CPUPerRequest that over the requests answered. Absent for direct.
	CPU           *time.Duration `json:"cpu_ns,omitempty"`
	CPUPerRequest *time.Duration `json:"cpu_per_request_ns,omitempty"`
	// CPUResolution is the granularity of the CPU reading: 1 µs from getrusage
	// (maskgate), 10 ms from /proc/PID/stat (Portkey).
	CPUResolution time.Duration `json:"cpu_resolution_ns,omitempty"`
	Rounds        []RoundResult `json:"rounds"`
}

// RoundResult is one turn of one path.
type RoundResult struct {
	// Wall is from the first send to the last answer; ServedRate is OK over it. A
	// path that keeps up serves about the offered rate.
	Wall       time.Duration  `json:"wall_ns"`
	ServedRate float64        `json:"served_rate"`
	OK         int            `json:"ok"`
	Errors     int            `json:"errors"`
	P50        time.Duration  `json:"p50_ns"`
	P99        time.Duration  `json:"p99_ns"`
	CPU        *time.Duration `json:"cpu_ns,omitempty"`
}

// Measure runs c: it installs Portkey if need be, starts the upstream in this process,
// maskgate and Portkey as child processes, and runs every scenario's rounds.
func Measure(ctx context.Context, c Config) (*Report, error) {
	c = c.withDefaults()
	if err := c.validate(); err != nil {
		return nil, err
	}
	if c.NodeDir == "" {
		wd, err := os.Getwd()
		if err != nil {
			return nil, err
		}
		if c.NodeDir, err = nodeDirFrom(wd); err != nil {
			return nil, err
		}
	}
	node, err := installPortkey(ctx, c.NodeDir)
	if err != nil {
		return nil, err
	}

	up := httptest.NewUnstartedServer(upstream(c.Think))
	up.Config.ErrorLog = log.New(io.Discard, "", 0)
	up.Start()
	defer up.Close()

	px, pxChild, err := startGoChild(pathProxy, up.URL, c.MaxInFlight)
	if err != nil {
		return nil, err
	}
	defer pxChild.stop()
	mg, mgChild, err := startGoChild(pathMaskgate, up.URL, c.MaxInFlight)
	if err != nil {
		return nil, err
	}
	defer mgChild.stop()
	pk, pkChild, err := startPortkey(node, c.NodeDir, up.URL, c.MaxInFlight)
	if err != nil {
		return nil, err
	}
	defer pkChild.stop()
	direct := &path{name: pathDirect, url: up.URL + "/v1/chat/completions", header: requestHeader(),
		client: &http.Client{Transport: clientTransport(c.MaxInFlight)}}
	paths := []*path{direct, px, mg, pk}
	defer func() {
		for _, p := range paths {
			p.client.CloseIdleConnections()
		}
	}()

	rep := &Report{Started: time.Now(), Quick: c.Quick, GoVersion: runtime.Version(), GOOS: runtime.GOOS,
		GOARCH: runtime.GOARCH, NumCPU: runtime.NumCPU(), LoadAverage: loadAverage(), Node: nodeVersion(node),
		Portkey: installedVersion(c.NodeDir, "@portkey-ai/gateway"), HonoServer: installedVersion(c.NodeDir, "@hono/node-server"),
		Round: c.Round, Rounds: c.Rounds, Warmup: c.Warmup, Prime: c.Prime, Think: c.Think, Timeout: c.Timeout}
	fmt.Fprintf(c.Progress, "peer: proxy pid %d, maskgate pid %d, Portkey %s pid %d (node %s), upstream %s\n", px.pid, mg.pid, rep.Portkey, pk.pid, rep.Node, up.URL)

	if err := prime(ctx, c, paths); err != nil {
		return nil, err
	}
	for _, sc := range c.Scenarios {
		if ctx.Err() != nil {
			rep.Truncated = true
			break
		}
		res, err := runScenario(ctx, c, sc, paths)
		if err != nil {
			return nil, err
		}
		if res != nil {
			rep.Scenarios = append(rep.Scenarios, *res)
		}
		if ctx.Err() != nil {
			rep.Truncated = true
		}
	}
	rep.Wall = time.Since(rep.Started)
	for _, ch := range []*child{pxChild, mgChild, pkChild} {
		// An interrupt from a terminal reaches the children too; only an exit
		// nobody asked for is an error.
		if ch.exited() && ctx.Err() == nil {
			return nil, fmt.Errorf("%s exited during the run: %v; stderr: %s", ch.cmd.Path, ch.cmd.ProcessState, ch.stderr)
		}
	}
	return rep, nil
}

// prime sends every path c.Prime requests of each body the scenarios use, 16 at a time,
// after checking that each path answers each of them.
func prime(ctx context.Context, c Config, paths []*path) error {
	type bodyKind struct {
		tools  int
		stream bool
	}
	seen := map[bodyKind]bool{}
	for _, sc := range c.Scenarios {
		k := bodyKind{sc.Tools, sc.Stream}
		if seen[k] {
			continue
		}
		seen[k] = true
		body := workload.Request(k.tools, k.stream)
		for _, p := range paths {
			if o := send(p, body, k.stream, c.Timeout); o.err != nil {
				if ctx.Err() != nil {
					return nil
				}
				return fmt.Errorf("%s fails before any load (%d tools, %s): %w", p.name, sc.Tools, sc.kind(), o.err)
			}
			start := time.Now()
			n, err := warmUp(ctx, p, body, k.stream, c.Prime, 16, c.Timeout)
			if n > c.Prime/10 && ctx.Err() == nil {
				return fmt.Errorf("%s: %d of %d warm-up requests failed (%d tools, %s); first: %w", p.name, n, c.Prime, sc.Tools, sc.kind(), err)
			}
			fmt.Fprintf(c.Progress, "peer: warmed up %-8s with %d requests, %d tools %s, in %s\n", p.name, c.Prime, sc.Tools, sc.kind(), time.Since(start).Round(time.Millisecond))
		}
	}
	return nil
}

// runScenario checks each path answers, warms each up, then runs the rounds: direct,
// proxy, maskgate, portkey, direct, proxy, ...
func runScenario(ctx context.Context, c Config, sc Scenario, paths []*path) (*ScenarioResult, error) {
	body := workload.Request(sc.Tools, sc.Stream)
	res := &ScenarioResult{Scenario: sc, BodyBytes: len(body)}
	for _, p := range paths {
		if o := send(p, body, sc.Stream, c.Timeout); o.err != nil {
			if ctx.Err() != nil {
				return nil, nil
			}
			return nil, fmt.Errorf("%s fails before any load (%d tools, %s): %w", p.name, sc.Tools, sc.kind(), o.err)
		}
	}
	count := func(d time.Duration) int { return max(1, int(sc.Rate*d.Seconds()+0.5)) }
	for _, p := range paths {
		openLoop(ctx, p, body, sc.Stream, sc.Rate, count(c.Warmup), c.Timeout, c.MaxInFlight)
		pause(ctx, c.Settle)
	}

	all := make([][]outcome, len(paths))
	results := make([][]RoundResult, len(paths))
	cpu := make([]time.Duration, len(paths))
	// An interrupt from a terminal also ends the children, so once ctx is done a
	// failure to read their CPU ends the rounds rather than the run.
rounds:
	for r := 0; r < c.Rounds && ctx.Err() == nil; r++ {
		for i, p := range paths {
			var cpu0 time.Duration
			if p.cpu != nil {
				var err error
				if cpu0, err = p.cpu(); err != nil {
					if ctx.Err() != nil {
						break rounds
					}
					return nil, fmt.Errorf("%s CPU: %w", p.name, err)
				}
			}
			start := time.Now()
			out := openLoop(ctx, p, body, sc.Stream, sc.Rate, count(c.Round), c.Timeout, c.MaxInFlight)
			rr := roundResult(out)
			rr.Wall = time.Since(start)
			rr.ServedRate = float64(rr.OK) / rr.Wall.Seconds()
			if p.cpu != nil {
				cpu1, err := p.cpu()
				if err != nil {
					if ctx.Err() != nil {
						break rounds
					}
					return nil, fmt.Errorf("%s CPU: %w", p.name, err)
				}
				d := cpu1 - cpu0
				rr.CPU = &d
				cpu[i] += d
			}
			results[i] = append(results[i], rr)
			all[i] = append(all[i], out...)
			fmt.Fprintf(c.Progress, "peer: %3d tools %-8s %5g/s round %d %-8s %s\n", sc.Tools, sc.kind(), sc.Rate, r+1, p.name, rr)
			pause(ctx, c.Settle)
		}
	}
	if len(results[len(paths)-1]) == 0 {
		return nil, nil // interrupted before every path had a turn
	}
	for i, p := range paths {
		pr := summarizePath(p.name, all[i], sc.Stream)
		pr.Rounds = results[i]
		var wall time.Duration
		for _, rr := range results[i] {
			wall += rr.Wall
		}
		if wall > 0 {
			pr.ServedRate = float64(pr.OK) / wall.Seconds()
		}
		if p.cpu != nil {
			total := cpu[i]
			pr.CPU = &total
			if pr.OK > 0 {
				per := total / time.Duration(pr.OK)
				pr.CPUPerRequest = &per
			}
			pr.CPUResolution = time.Microsecond
			if p.name == pathPortkey {
				pr.CPUResolution = clockTick
			}
		}
		res.Paths = append(res.Paths, pr)
	}
	return res, nil
}

func roundResult(out []outcome) RoundResult {
	var rr RoundResult
	var lat []time.Duration
	for _, o := range out {
		switch {
		case !o.sent:
		case o.err != nil:
			rr.Errors++
		default:
			rr.OK++
			lat = append(lat, o.total)
		}
	}
	l := summarize(lat)
	rr.P50, rr.P99 = l.P50, l.P99
	return rr
}

func (r RoundResult) String() string {
	s := fmt.Sprintf("%5d ok in %5.2f s  p50 %7.2f ms  p99 %7.2f ms", r.OK, r.Wall.Seconds(), ms(r.P50), ms(r.P99))
	if r.CPU != nil && r.OK > 0 {
		s += fmt.Sprintf("  CPU %6.0f µs/req", float64(*r.CPU/time.Duration(r.OK))/float64(time.Microsecond))
	}
	if r.Errors > 0 {
		s += fmt.Sprintf("  %d FAILED", r.Errors)
	}
	return s
}

func summarizePath(name string, out []outcome, stream bool) PathResult {
	pr := PathResult{Path: name}
	var lat, first, lag []time.Duration
	for _, o := range out {
		if !o.sent {
			continue
		}
		pr.Sent++
		if o.err != nil {
			if pr.Errors == 0 {
				pr.FirstError = o.err.Error()
			}
			pr.Errors++
			if errors.Is(o.err, context.DeadlineExceeded) {
				pr.TimedOut++
			}
			continue
		}
		pr.OK++
		lat = append(lat, o.total)
		first = append(first, o.first)
		lag = append(lag, o.lag)
	}
	pr.Latency = summarize(lat)
	if stream {
		f := summarize(first)
		pr.FirstEvent = &f
	}
	pr.LagP99 = summarize(lag).P99
	return pr
}

func pause(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}

// loadAverage is the one-minute load average where /proc has it.
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return ""
	}
	if f := strings.Fields(string(b)); len(f) > 0 {
		return f[0]
	}
	return ""
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
