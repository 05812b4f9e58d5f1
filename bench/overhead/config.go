package main

import (
	"fmt"
	"net"
	"net/url"
	"time"

	"github.com/maskgate/maskgate/bench/overhead/workload"
)

// Config is one measurement. The zero value of each field is its default.
type Config struct {
	// Rate is the open-loop arrival rate, in requests per second, on each path while it
	// has its turn. If zero, 5000.
	Rate float64
	// N is the number of measured requests per path and kind of response. If zero, 20000.
	N int
	// Block is how many requests a path sends before the next path takes its turn. If
	// zero, 1000.
	Block int
	// Warmup is the number of unmeasured requests per path and kind of response sent
	// first, to open connections. If zero, N/10 within 20..2000.
	Warmup int
	// Duration caps the whole run; what was measured by then is reported as truncated.
	// If zero, 3 minutes.
	Duration time.Duration
	// Timeout bounds each request. If zero, 10 seconds.
	Timeout time.Duration
	// MaxInFlight bounds outstanding requests per path; an arrival above it is counted
	// as an error rather than delayed, so the schedule stays open-loop. If zero, 4096.
	MaxInFlight int
	// Tools is the number of tools in each request (see workload.Request). If zero,
	// workload.FewTools.
	Tools int
	// Gateway is the base URL (without /v1) of a running gateway to measure. If empty, a
	// gateway is started in this process.
	Gateway string
	// UpstreamAddr is where the canned upstream listens. If empty, 127.0.0.1 on a free
	// port.
	UpstreamAddr string
}

func (c Config) withDefaults() Config {
	if c.Rate == 0 {
		c.Rate = 5000
	}
	if c.N == 0 {
		c.N = 20000
	}
	if c.Block == 0 {
		c.Block = 1000
	}
	if c.Warmup == 0 {
		c.Warmup = min(max(c.N/10, 20), 2000)
	}
	if c.Duration == 0 {
		c.Duration = 3 * time.Minute
	}
	if c.Timeout == 0 {
		c.Timeout = 10 * time.Second
	}
	if c.MaxInFlight == 0 {
		c.MaxInFlight = 4096
	}
	if c.Tools == 0 {
		c.Tools = workload.FewTools
	}
	if c.UpstreamAddr == "" {
		c.UpstreamAddr = "127.0.0.1:0"
	}
	return c
}

// validate names the flag at fault; c has its defaults.
func (c Config) validate() error {
	switch {
	case c.Rate < 0 || c.Rate > 1e6:
		return fmt.Errorf("-rate %g: give 1 to 1000000 requests per second", c.Rate)
	case c.N < 0 || c.Block < 0 || c.Warmup < 0 || c.MaxInFlight < 0 || c.Tools < 0:
		return fmt.Errorf("-n, -block, -warmup, -max-inflight and -tools must not be negative")
	case c.Duration < 0 || c.Timeout < 0:
		return fmt.Errorf("-duration and -timeout must not be negative")
	}
	if err := loopbackAddr(c.UpstreamAddr); err != nil {
		return fmt.Errorf("-upstream: %w", err)
	}
	if c.Gateway != "" {
		u, err := url.Parse(c.Gateway)
		if err != nil || u.Scheme != "http" || u.Host == "" {
			return fmt.Errorf("-gateway %q: give the gateway's base URL, e.g. http://127.0.0.1:4000", c.Gateway)
		}
		if !isLoopback(u.Hostname()) {
			return fmt.Errorf("-gateway %q: only a loopback address is measured (127.0.0.1, ::1, localhost); this tool sends thousands of requests a second", c.Gateway)
		}
	}
	return nil
}

// loopbackAddr accepts a listen address on a loopback host only.
func loopbackAddr(hostport string) error {
	host, _, err := net.SplitHostPort(hostport)
	if err != nil {
		return fmt.Errorf("%q: %w", hostport, err)
	}
	if !isLoopback(host) {
		return fmt.Errorf("%q: listen on a loopback address such as 127.0.0.1:18080", hostport)
	}
	return nil
}

func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
