package main

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"strings"
	"time"

	"github.com/maskgate/maskgate/bench/overhead/workload"
)

// Report is the outcome of one measurement.
type Report struct {
	Started    time.Time     `json:"started"`
	Wall       time.Duration `json:"wall_ns"`
	GoVersion  string        `json:"go_version"`
	GOOS       string        `json:"goos"`
	GOARCH     string        `json:"goarch"`
	NumCPU     int           `json:"num_cpu"`
	GOMAXPROCS int           `json:"gomaxprocs"`
	Rate       float64       `json:"rate"` // target arrivals per second, per path
	N          int           `json:"n"`    // target measured requests per path and table
	Block      int           `json:"block"`
	Warmup     int           `json:"warmup"`
	Tools      int           `json:"tools"`
	BodyBytes  int           `json:"body_bytes"` // of a whole request; a stream's is 14 more
	Gateway    string        `json:"gateway"`    // "in-process", or the measured gateway's URL
	// Truncated is set when -duration or an interrupt ended the run before every
	// request was sent; counts in the rows say how far it got.
	Truncated bool `json:"truncated"`
	// ProcessCPU is the CPU time this process (generator, upstream, proxy, in-process
	// gateway) used during the run; zero where the system does not say.
	ProcessCPU time.Duration `json:"process_cpu_ns"`
	// LoadAverage is the system's one-minute load average as the run began ("" where the
	// system does not say): above the core count, other processes were competing.
	LoadAverage string  `json:"load_average,omitempty"`
	Tables      []Table `json:"tables"`
}

// Table is one measure of one kind of response, with a row per path: direct,
// ReverseProxy, gateway.
type Table struct {
	Response string `json:"response"` // "whole" or "stream"
	Measure  string `json:"measure"`  // "total" (last byte) or "first_event" (TTFT)
	Rows     []Row  `json:"rows"`
}

// Measure runs the measurement c describes, whole responses first, then streams.
func Measure(ctx context.Context, c Config) (*Report, error) {
	c = c.withDefaults()
	if err := c.validate(); err != nil {
		return nil, err
	}
	srv, err := startServers(c)
	if err != nil {
		return nil, err
	}
	defer srv.close()

	rep := &Report{Started: time.Now(), GoVersion: runtime.Version(), GOOS: runtime.GOOS, GOARCH: runtime.GOARCH,
		NumCPU: runtime.NumCPU(), GOMAXPROCS: runtime.GOMAXPROCS(0), Rate: c.Rate, N: c.N, Block: c.Block,
		Warmup: c.Warmup, Tools: c.Tools, BodyBytes: len(workload.Request(c.Tools, false)), Gateway: srv.gateway}
	rep.LoadAverage = loadAverage()
	cpu0, cpuOK := processCPU()
	p := &pacer{rate: c.Rate, timeout: c.Timeout, maxInFlight: int64(c.MaxInFlight)}
	ctx, cancel := context.WithTimeout(ctx, c.Duration)
	defer cancel()

	for _, stream := range []bool{false, true} {
		if ctx.Err() != nil {
			rep.Truncated = true
			break
		}
		body := workload.Request(c.Tools, stream)
		for _, t := range srv.targets {
			if s := p.send(t, body, stream); s.err != nil {
				return nil, preflightError(t, srv, s.err)
			}
		}
		for _, t := range srv.targets {
			p.block(ctx, t, body, stream, make([]sample, c.Warmup))
		}

		samples := make([][]sample, len(srv.targets))
		spans := make([]time.Duration, len(srv.targets))
		for i := range samples {
			samples[i] = make([]sample, c.N)
		}
		// Paths take turns, and the order rotates, so drift in the machine's load and
		// the garbage one path leaves behind fall on every path alike.
		for b, from := 0, 0; from < c.N && ctx.Err() == nil; b, from = b+1, from+c.Block {
			to := min(from+c.Block, c.N)
			for j := range srv.targets {
				i := (b + j) % len(srv.targets)
				spans[i] += p.block(ctx, srv.targets[i], body, stream, samples[i][from:to])
			}
		}
		if ctx.Err() != nil {
			rep.Truncated = true
		}

		table := func(measure string, pick func(sample) time.Duration) Table {
			t := Table{Response: "whole", Measure: measure}
			if stream {
				t.Response = "stream"
			}
			for i, tg := range srv.targets {
				t.Rows = append(t.Rows, summarize(tg.name, samples[i], spans[i], pick))
			}
			compare(t.Rows)
			return t
		}
		if stream {
			rep.Tables = append(rep.Tables, table("first_event", func(s sample) time.Duration { return s.first }))
		}
		rep.Tables = append(rep.Tables, table("total", func(s sample) time.Duration { return s.total }))
	}
	rep.Wall = time.Since(rep.Started)
	if cpu1, ok := processCPU(); ok && cpuOK {
		rep.ProcessCPU = cpu1 - cpu0
	}
	return rep, nil
}

// loadAverage reads the one-minute load average where /proc has it.
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

// preflightError explains a path that fails its first request, before any load.
func preflightError(t *target, srv *servers, err error) error {
	if t.name == pathGateway && srv.gateway != "in-process" {
		return fmt.Errorf("the gateway at %s does not answer as this tool's upstream would: %w; "+
			"route the model %q to a backend of kind vllm with url %s/v1 (fix the address with -upstream)",
			srv.gateway, err, workload.Model, srv.upstream)
	}
	return fmt.Errorf("%s path fails before any load: %w", t.name, err)
}
