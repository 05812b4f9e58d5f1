package kvcache

import (
	"errors"
	"fmt"
	"math"
)

// PrefillCost models how long an engine takes to prefill a prompt, in seconds: a fixed
// cost per call, a cost per computed token, and for each computed token a cost per token
// of context before it (attention reads the whole prefix, cached or not). So reusing a
// cached prefix is not free: it makes every new token after it dearer.
//
// For one call that reuses c cached tokens and computes n new ones:
//
//	Fixed + n·PerToken + PerTokenContext·(n·c + n(n−1)/2) + c·PerCachedToken
type PrefillCost struct {
	// Fixed is the seconds every call costs (scheduling, the first decode step, HTTP).
	Fixed float64
	// PerToken is the seconds per computed token at context zero.
	PerToken float64
	// PerTokenContext is the seconds per computed token per token of context before it.
	PerTokenContext float64
	// PerCachedToken is the seconds per reused token: zero for a cache in GPU memory,
	// more for one offloaded to host memory or disk.
	PerCachedToken float64
}

// Seconds is the modelled prefill time of a call reusing cached tokens and computing
// computed new ones.
func (p PrefillCost) Seconds(cached, computed int) float64 {
	return p.seconds(float64(cached), float64(computed))
}

// seconds is Seconds for the expected (fractional) token counts of the cost model.
func (p PrefillCost) seconds(c, n float64) float64 {
	c, n = max(c, 0), max(n, 0)
	return p.Fixed + n*p.PerToken + p.PerTokenContext*(n*c+n*max(n-1, 0)/2) + c*p.PerCachedToken
}

// IsZero reports whether p is the zero PrefillCost, which means "the default" where a
// PrefillCost is configured.
func (p PrefillCost) IsZero() bool { return p == PrefillCost{} }

// PrefillSample is one measured call: cached tokens reused, computed tokens prefilled,
// and the seconds until the first output token.
type PrefillSample struct {
	Cached, Computed int
	Seconds          float64
}

// H200Llama8BSamples are three prefill timings measured on one NVIDIA H200 with a
// random-weight Llama-architecture model in Llama-3.1-8B shape, Hugging Face transformers
// with SDPA attention, bf16, a prompt of a 2k-token conversation plus the tool catalog and
// 120 new tokens: with 100 tools (17,120 prompt tokens) 617 ms on a cache miss and 46 ms on
// a hit of all but the 120 new tokens; with 5 tools (2,870 tokens) 87 ms on a miss. The
// slice is the caller's.
//
// The same measurement gave figures the samples leave out, which the model does not
// reproduce (TestDefaultPrefill_HeldOutH200Figures holds these numbers): 5 tools on a hit,
// 49 ms (DefaultPrefill: 42 ms); 500 tools (77,120 tokens), 4,798 ms on a miss and 146 ms
// on a hit (DefaultPrefill: 8.22 s and 63 ms). Its quadratic term overstates a long
// prompt prefilled from scratch, and a hit's cost grows with the cached length faster
// than it says. A Qwen2.5-32B-shaped model took 2,252 ms on a miss and 94 ms on a hit at
// 100 tools.
func H200Llama8BSamples() []PrefillSample {
	return []PrefillSample{
		{Cached: 0, Computed: 17120, Seconds: 0.617},
		{Cached: 17000, Computed: 120, Seconds: 0.046},
		{Cached: 0, Computed: 2870, Seconds: 0.087},
	}
}

// DefaultPrefill is FitPrefill of H200Llama8BSamples, to four significant figures: the
// three figures fit exactly, with 39.5 ms per call, 13.1 µs per token and 2.41 ns per
// token per token of context (41 µs a token at 17k of context). Time figures from a tiny
// test model must not replace it: on a tiny random-weight model attention dominates, so a
// long cached prompt can look slower than a short recomputed one, which is false for a
// real-size model.
func DefaultPrefill() PrefillCost {
	return PrefillCost{Fixed: 0.03949, PerToken: 1.309e-5, PerTokenContext: 2.411e-9}
}

// DecodeCost models the time to generate output tokens: a cost per token and a cost
// per token per token of context, since each decoded token reads the whole KV cache.
type DecodeCost struct {
	// PerToken is the seconds per output token at context zero.
	PerToken float64
	// PerTokenContext is the seconds per output token per token of context.
	PerTokenContext float64
}

// Seconds is the modelled time to decode out tokens after a context of ctx tokens.
func (d DecodeCost) Seconds(ctx, out int) float64 {
	return d.seconds(float64(ctx), float64(out))
}

func (d DecodeCost) seconds(c, n float64) float64 {
	c, n = max(c, 0), max(n, 0)
	return n*d.PerToken + d.PerTokenContext*(n*c+n*max(n-1, 0)/2)
}

// IsZero reports whether d is the zero DecodeCost, which means "the default" where a
// DecodeCost is configured.
func (d DecodeCost) IsZero() bool { return d == DecodeCost{} }

// DefaultDecode is derived, not measured: single-stream decoding on an H200 (4.8 TB/s)
// of an 8B model reads its 16 GB of weights per token (3.35 ms) and 128 KiB of KV per
// token of context (27.3 ns). Batching shares the weight reads, not the KV reads, unless
// the engine runs cascade attention over a shared prefix; so the context term is an
// upper bound there.
func DefaultDecode() DecodeCost {
	return DecodeCost{PerToken: 3.35e-3, PerTokenContext: 2.73e-8}
}

// errFit is returned by FitPrefill when the samples do not determine a cost.
var errFit = errors.New("kvcache: prefill samples do not determine a cost")

// FitPrefill fits Fixed, PerToken and PerTokenContext to samples by least squares
// (PerCachedToken stays zero: on a GPU it is folded into the context term). It needs at
// least three samples of different shapes (say, two sizes from scratch and one on a
// cached prefix) and fails when they imply a negative cost, which noisy or mislabelled
// timings do.
func FitPrefill(samples []PrefillSample) (PrefillCost, error) {
	if len(samples) < 3 {
		return PrefillCost{}, fmt.Errorf("%w: %d samples, need 3", errFit, len(samples))
	}
	// Features per sample: 1, n, n·c + n(n−1)/2. Columns are scaled to at most 1 so the
	// normal equations stay well conditioned (the third is up to ~1e9).
	var scale [3]float64
	rows := make([][4]float64, len(samples))
	for i, s := range samples {
		c, n := float64(max(s.Cached, 0)), float64(max(s.Computed, 0))
		rows[i] = [4]float64{1, n, n*c + n*(n-1)/2, s.Seconds}
		for j := range 3 {
			scale[j] = max(scale[j], math.Abs(rows[i][j]))
		}
	}
	for j := range 3 {
		if scale[j] == 0 {
			return PrefillCost{}, fmt.Errorf("%w: feature %d is zero in every sample", errFit, j)
		}
	}
	var m [3][4]float64 // [XᵀX | Xᵀy]
	for _, r := range rows {
		for j := range 3 {
			for k := range 3 {
				m[j][k] += r[j] / scale[j] * r[k] / scale[k]
			}
			m[j][3] += r[j] / scale[j] * r[3]
		}
	}
	x, ok := solve3(m)
	if !ok {
		return PrefillCost{}, fmt.Errorf("%w: samples are collinear; vary prompt sizes and cached prefixes", errFit)
	}
	p := PrefillCost{Fixed: x[0] / scale[0], PerToken: x[1] / scale[1], PerTokenContext: x[2] / scale[2]}
	if p.Fixed < 0 || p.PerToken < 0 || p.PerTokenContext < 0 {
		return PrefillCost{}, fmt.Errorf("%w: fit %+v has a negative term", errFit, p)
	}
	return p, nil
}

// DecodeSample is one measured decode: Tokens output tokens generated after a context
// of Context tokens took Seconds (first output token to last).
type DecodeSample struct {
	Context, Tokens int
	Seconds         float64
}

// FitDecode fits PerToken and PerTokenContext to samples by least squares through the
// origin (DecodeCost.Seconds has no fixed term). It needs at least three samples whose
// contexts differ enough to tell the two terms apart, and fails when they imply a
// negative cost.
func FitDecode(samples []DecodeSample) (DecodeCost, error) {
	if len(samples) < 3 {
		return DecodeCost{}, fmt.Errorf("%w: %d decode samples, need 3", errFit, len(samples))
	}
	// Features: n and n·c + n(n−1)/2, each scaled to at most 1.
	var scale [2]float64
	rows := make([][3]float64, 0, len(samples))
	for _, s := range samples {
		c, n := float64(max(s.Context, 0)), float64(max(s.Tokens, 0))
		if n == 0 {
			continue
		}
		r := [3]float64{n, n*c + n*(n-1)/2, s.Seconds}
		rows = append(rows, r)
		scale[0], scale[1] = max(scale[0], r[0]), max(scale[1], r[1])
	}
	if len(rows) < 3 || scale[0] == 0 || scale[1] == 0 {
		return DecodeCost{}, fmt.Errorf("%w: decode samples without tokens", errFit)
	}
	var a, b, c, y0, y1 float64 // [a b; b c] x = [y0 y1]
	for _, r := range rows {
		x0, x1 := r[0]/scale[0], r[1]/scale[1]
		a, b, c = a+x0*x0, b+x0*x1, c+x1*x1
		y0, y1 = y0+x0*r[2], y1+x1*r[2]
	}
	det := a*c - b*b
	if math.Abs(det) < 1e-12*a*c {
		return DecodeCost{}, fmt.Errorf("%w: decode samples are collinear; they need different context lengths", errFit)
	}
	d := DecodeCost{PerToken: (y0*c - y1*b) / det / scale[0], PerTokenContext: (a*y1 - b*y0) / det / scale[1]}
	if d.PerToken < 0 || d.PerTokenContext < 0 {
		return DecodeCost{}, fmt.Errorf("%w: fit %+v has a negative term", errFit, d)
	}
	return d, nil
}

// solve3 solves a 3×3 system by Gaussian elimination with partial pivoting.
func solve3(m [3][4]float64) ([3]float64, bool) {
	for col := range 3 {
		p := col
		for r := col + 1; r < 3; r++ {
			if math.Abs(m[r][col]) > math.Abs(m[p][col]) {
				p = r
			}
		}
		if math.Abs(m[p][col]) < 1e-12 {
			return [3]float64{}, false
		}
		m[col], m[p] = m[p], m[col]
		for r := range 3 {
			if r == col {
				continue
			}
			f := m[r][col] / m[col][col]
			for k := col; k < 4; k++ {
				m[r][k] -= f * m[col][k]
			}
		}
	}
	return [3]float64{m[0][3] / m[0][0], m[1][3] / m[1][1], m[2][3] / m[2][2]}, true
}
