package main

import (
	"math"
	"slices"
	"time"
)

// Latency summarizes a distribution. In JSON the figures are nanoseconds.
type Latency struct {
	P50  time.Duration `json:"p50_ns"`
	P90  time.Duration `json:"p90_ns"`
	P99  time.Duration `json:"p99_ns"`
	Max  time.Duration `json:"max_ns"`
	Mean time.Duration `json:"mean_ns"`
}

// percentile is the nearest-rank percentile of sorted: the smallest value with at least
// the fraction p (0 < p <= 1) of the sample at or below it. It is zero for an empty
// sample.
func percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	rank := int(math.Ceil(p * float64(len(sorted))))
	return sorted[min(max(rank, 1), len(sorted))-1]
}

// summarize sorts ds in place and returns its percentiles and mean.
func summarize(ds []time.Duration) Latency {
	if len(ds) == 0 {
		return Latency{}
	}
	slices.Sort(ds)
	var sum time.Duration
	for _, d := range ds {
		sum += d
	}
	return Latency{
		P50:  percentile(ds, 0.50),
		P90:  percentile(ds, 0.90),
		P99:  percentile(ds, 0.99),
		Max:  ds[len(ds)-1],
		Mean: sum / time.Duration(len(ds)),
	}
}
