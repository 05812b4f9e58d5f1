package main

import (
	"math"
	"slices"
	"time"
)

// Percentiles of a latency distribution. In JSON they are nanoseconds.
type Percentiles struct {
	P50 time.Duration `json:"p50_ns"`
	P90 time.Duration `json:"p90_ns"`
	P99 time.Duration `json:"p99_ns"`
	Max time.Duration `json:"max_ns"`
}

// minus is p - q, percentile by percentile.
func (p Percentiles) minus(q Percentiles) Percentiles {
	return Percentiles{P50: p.P50 - q.P50, P90: p.P90 - q.P90, P99: p.P99 - q.P99, Max: p.Max - q.Max}
}

// Ratios are one path's added latency over another's, percentile by percentile. A ratio
// is absent (nil) when the other path added nothing measurable (zero or less).
type Ratios struct {
	P50 *float64 `json:"p50"`
	P90 *float64 `json:"p90"`
	P99 *float64 `json:"p99"`
	Max *float64 `json:"max"`
}

func ratios(num, den Percentiles) *Ratios {
	div := func(a, b time.Duration) *float64 {
		if b <= 0 {
			return nil
		}
		r := float64(a) / float64(b)
		return &r
	}
	return &Ratios{P50: div(num.P50, den.P50), P90: div(num.P90, den.P90), P99: div(num.P99, den.P99), Max: div(num.Max, den.Max)}
}

// percentiles uses the nearest-rank definition: the smallest value with at least p of
// the sample at or below it. ds is sorted in place.
func percentiles(ds []time.Duration) Percentiles {
	if len(ds) == 0 {
		return Percentiles{}
	}
	slices.Sort(ds)
	rank := func(p float64) time.Duration {
		i := int(math.Ceil(p * float64(len(ds))))
		return ds[min(max(i-1, 0), len(ds)-1)]
	}
	return Percentiles{P50: rank(0.50), P90: rank(0.90), P99: rank(0.99), Max: ds[len(ds)-1]}
}

// Row is one path's figures for one measure.
type Row struct {
	Path       string  `json:"path"`
	OK         int     `json:"ok"`
	Errors     int     `json:"errors"`
	FirstError string  `json:"first_error,omitempty"`
	Rate       float64 `json:"achieved_rate"` // requests sent per second of the path's turns
	// LagP99 is how late the pacer sent requests, 99th percentile.
	LagP99  time.Duration `json:"send_lag_p99_ns"`
	Latency Percentiles   `json:"latency"`
	// Added is Latency less the direct path's (absent for direct).
	Added *Percentiles `json:"added,omitempty"`
	// VsProxy is the gateway's Added over the proxy's (gateway only).
	VsProxy *Ratios `json:"added_vs_proxy,omitempty"`
}

// summarize turns one path's samples into a Row; pick chooses the latency measured.
func summarize(path string, ss []sample, span time.Duration, pick func(sample) time.Duration) Row {
	r := Row{Path: path}
	var lat, lag []time.Duration
	sent := 0
	for _, s := range ss {
		if !s.sent {
			continue
		}
		sent++
		if s.err != nil {
			if r.Errors == 0 {
				r.FirstError = s.err.Error()
			}
			r.Errors++
			continue
		}
		r.OK++
		lat = append(lat, pick(s))
		lag = append(lag, s.lag)
	}
	if span > 0 {
		r.Rate = float64(sent) / span.Seconds()
	}
	r.Latency = percentiles(lat)
	r.LagP99 = percentiles(lag).P99
	return r
}

// compare fills in the proxy's and gateway's added latency; rows are direct, proxy,
// gateway.
func compare(rows []Row) {
	direct, proxy, gw := &rows[0], &rows[1], &rows[2]
	pa, ga := proxy.Latency.minus(direct.Latency), gw.Latency.minus(direct.Latency)
	proxy.Added, gw.Added = &pa, &ga
	gw.VsProxy = ratios(ga, pa)
}
