package kvcache

import (
	"errors"
	"fmt"
	"math"
	"slices"
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

// H200Llama8BSamples are three prefill timings from an external measurement, made once
// outside this repository (no command here reproduces it), on one NVIDIA H200 with a
// random-weight Llama-architecture model in Llama-3.1-8B shape, Hugging Face transformers
// with SDPA attention, bf16, a prompt of a 2k-token conversation plus the tool catalog and
// 120 new tokens: with 100 tools (17,120 prompt tokens) 617 ms on a cache miss and 46 ms on
// a hit of all but the 120 new tokens; with 5 tools (2,870 tokens) 87 ms on a miss. The
// slice is the caller's.
//
// The same measurement gave figures the samples leave out, which the model does not
// reproduce (TestDefaultPrefill_PredictionsQuotedBesideTheUnfittedMeasurements holds the
// predictions; the measured figures are external): 5 tools on a hit,
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
// cached prefix). Where the fit puts Fixed or PerTokenContext below zero, which noise on
// a busy machine does when one of them is small, that term is held at zero and the
// others refitted (fitNonNegative); so too when the context and per-token terms, which
// short contexts hardly tell apart, trade places. It fails when no fit that holds
// negative terms at zero comes near the timings, as when longer prompts come out cheaper.
func FitPrefill(samples []PrefillSample) (PrefillCost, error) {
	return FitPrefillOver(samples, PrefillCost{})
}

// FitPrefillOver is FitPrefill where a term the samples cannot tell from zero takes its
// value in prior instead of zero: samples from short contexts alone say nothing of the
// context term, and zero would make long contexts look free.
func FitPrefillOver(samples []PrefillSample, prior PrefillCost) (PrefillCost, error) {
	if len(samples) < 3 {
		return PrefillCost{}, fmt.Errorf("%w: %d samples, need 3", errFit, len(samples))
	}
	// Features per sample: 1, n, n·c + n(n−1)/2.
	rows := make([][]float64, len(samples))
	y := make([]float64, len(samples))
	for i, s := range samples {
		c, n := float64(max(s.Cached, 0)), float64(max(s.Computed, 0))
		rows[i] = []float64{1, n, n*c + n*(n-1)/2}
		y[i] = s.Seconds
	}
	x, err := fitNonNegative(rows, y, 1, []float64{prior.Fixed, prior.PerToken, prior.PerTokenContext})
	if err != nil {
		return PrefillCost{}, fmt.Errorf("%w: %v; vary prompt sizes and cached prefixes", errFit, err)
	}
	return PrefillCost{Fixed: x[0], PerToken: x[1], PerTokenContext: x[2]}, nil
}

// fitNonNegative fits y ≈ rows·x by least squares with every coefficient at least zero
// and x[must] above zero. The unconstrained fit comes first. If it breaks that, it asks
// whether the timings really say so: a term below zero by less than two standard errors
// is noise around zero (or a term standing in for another that the samples hardly tell
// apart), and then every subset of the features that keeps must is fitted, the terms
// left out held at their value in hold (zero, or a configured cost the samples cannot
// overrule), and the best one that keeps the signs taken. A term below zero by more is refused: the model does
// not fit the timings, as when longer prompts come out faster.
func fitNonNegative(rows [][]float64, y []float64, must int, hold []float64) ([]float64, error) {
	k := len(rows[0])
	all := make([]int, k)
	for j := range all {
		all[j] = j
	}
	full, rss, ok := leastSquares(rows, y, all)
	if !ok {
		return nil, errors.New("samples are collinear")
	}
	if full[must] > 0 && !slices.ContainsFunc(full, func(v float64) bool { return v < 0 }) {
		return full, nil
	}
	dof := len(y) - k
	if dof < 1 {
		return nil, fmt.Errorf("fit %v has a negative term, and %d samples cannot say whether it is noise", full, len(y))
	}
	se, ok := standardErrors(rows, rss/float64(dof))
	if !ok {
		return nil, errors.New("samples are collinear")
	}
	for j, v := range full {
		if v < 0 && v < -2*se[j] || j == must && v <= 0 && v <= -2*se[j] {
			return nil, fmt.Errorf("fit %v has term %d below zero by %.1f standard errors", full, j, -v/se[j])
		}
	}
	var best []float64
	bestRSS := math.Inf(1)
	for mask := 1; mask < 1<<k-1; mask++ { // proper subsets
		if mask&(1<<must) == 0 {
			continue
		}
		var cols []int
		for j := range k {
			if mask&(1<<j) != 0 {
				cols = append(cols, j)
			}
		}
		// The terms left out are held at their value in hold: what the rest fits is the
		// timings less what those terms account for.
		rest := slices.Clone(y)
		for i, r := range rows {
			for j := range k {
				if mask&(1<<j) == 0 {
					rest[i] -= hold[j] * r[j]
				}
			}
		}
		x, r, ok := leastSquares(rows, rest, cols)
		if !ok {
			continue
		}
		for j := range k {
			if mask&(1<<j) == 0 {
				x[j] = hold[j]
			}
		}
		if r < bestRSS && !slices.ContainsFunc(x, func(v float64) bool { return v < 0 }) && x[must] > 0 {
			best, bestRSS = x, r
		}
	}
	if best == nil {
		return nil, fmt.Errorf("fit %v has a negative term, and no fit without it keeps the signs", full)
	}
	return best, nil
}

// standardErrors are the standard errors of the unconstrained least-squares coefficients
// of rows, with residual variance sigma2: sqrt(sigma2 · (XᵀX)⁻¹ⱼⱼ), computed on columns
// scaled as leastSquares scales them.
func standardErrors(rows [][]float64, sigma2 float64) ([]float64, bool) {
	k := len(rows[0])
	scale := make([]float64, k)
	for _, r := range rows {
		for j, v := range r {
			scale[j] = max(scale[j], math.Abs(v))
		}
	}
	se := make([]float64, k)
	for j := range k {
		m := make([][]float64, k) // [ZᵀZ | eⱼ]: column j of the inverse
		for a := range m {
			m[a] = make([]float64, k+1)
			for _, r := range rows {
				for b := range k {
					m[a][b] += r[a] / scale[a] * r[b] / scale[b]
				}
			}
		}
		m[j][k] = 1
		inv, ok := solve(m)
		if !ok {
			return nil, false
		}
		se[j] = math.Sqrt(sigma2*max(inv[j], 0)) / scale[j]
	}
	return se, true
}

// leastSquares fits y ≈ rows·x over the columns cols (x is zero elsewhere) through the
// normal equations, each column scaled to at most 1 so they stay well conditioned
// (context features reach ~1e9). It returns x, the residual sum of squares, and false
// when the columns are collinear or one is zero throughout.
func leastSquares(rows [][]float64, y []float64, cols []int) ([]float64, float64, bool) {
	k := len(cols)
	scale := make([]float64, k)
	for _, r := range rows {
		for a, j := range cols {
			scale[a] = max(scale[a], math.Abs(r[j]))
		}
	}
	if slices.Contains(scale, 0) {
		return nil, 0, false
	}
	m := make([][]float64, k) // [XᵀX | Xᵀy]
	for a := range m {
		m[a] = make([]float64, k+1)
	}
	for i, r := range rows {
		for a, ja := range cols {
			xa := r[ja] / scale[a]
			for b, jb := range cols {
				m[a][b] += xa * r[jb] / scale[b]
			}
			m[a][k] += xa * y[i]
		}
	}
	z, ok := solve(m)
	if !ok {
		return nil, 0, false
	}
	x := make([]float64, len(rows[0]))
	for a, j := range cols {
		x[j] = z[a] / scale[a]
	}
	rss := 0.0
	for i, r := range rows {
		e := y[i]
		for j, v := range r {
			e -= x[j] * v
		}
		rss += e * e
	}
	return x, rss, true
}

// DecodeSample is one measured decode: Tokens output tokens generated after a context
// of Context tokens took Seconds (first output token to last).
type DecodeSample struct {
	Context, Tokens int
	Seconds         float64
}

// FitDecode fits PerToken and PerTokenContext to samples by least squares through the
// origin (DecodeCost.Seconds has no fixed term). It needs at least three samples whose
// contexts differ enough to tell the two terms apart. A context term a little below zero
// is held at zero (fitNonNegative); it fails when longer contexts decode clearly faster,
// or tokens cost nothing.
func FitDecode(samples []DecodeSample) (DecodeCost, error) {
	return FitDecodeOver(samples, DecodeCost{})
}

// FitDecodeOver is FitDecode where a term the samples cannot tell from zero takes its
// value in prior instead of zero (see FitPrefillOver).
func FitDecodeOver(samples []DecodeSample, prior DecodeCost) (DecodeCost, error) {
	if len(samples) < 3 {
		return DecodeCost{}, fmt.Errorf("%w: %d decode samples, need 3", errFit, len(samples))
	}
	// Features: n and n·c + n(n−1)/2.
	var rows [][]float64
	var y []float64
	for _, s := range samples {
		c, n := float64(max(s.Context, 0)), float64(max(s.Tokens, 0))
		if n == 0 {
			continue
		}
		rows = append(rows, []float64{n, n*c + n*(n-1)/2})
		y = append(y, s.Seconds)
	}
	if len(rows) < 3 {
		return DecodeCost{}, fmt.Errorf("%w: decode samples without tokens", errFit)
	}
	x, err := fitNonNegative(rows, y, 0, []float64{prior.PerToken, prior.PerTokenContext})
	if err != nil {
		return DecodeCost{}, fmt.Errorf("%w: %v; decode samples need different context lengths", errFit, err)
	}
	return DecodeCost{PerToken: x[0], PerTokenContext: x[1]}, nil
}

// FitDecodeConstrained fits one decode cost to plain and constrained samples together,
// with a third term, the seconds a constrained token costs beyond a plain one:
// seconds = n·PerToken + (n·c + n(n−1)/2)·PerTokenContext + n·extra for a constrained
// sample. Fitting them together keeps the context term determined over the contexts of
// both (under mask the catalog makes every context long, and a plain fit over remove's
// short contexts alone extrapolates badly). It returns the plain cost and the
// constrained one (PerToken + extra, extra ≥ 0). It needs samples of both kinds; see
// FitDecodeOver for prior.
func FitDecodeConstrained(plain, constrained []DecodeSample, prior DecodeCost) (DecodeCost, DecodeCost, error) {
	if len(plain) == 0 || len(constrained) == 0 {
		return DecodeCost{}, DecodeCost{}, fmt.Errorf("%w: %d plain and %d constrained decode samples, need both", errFit, len(plain), len(constrained))
	}
	if len(plain)+len(constrained) < 4 {
		return DecodeCost{}, DecodeCost{}, fmt.Errorf("%w: %d decode samples, need 4", errFit, len(plain)+len(constrained))
	}
	var rows [][]float64
	var y []float64
	for k, set := range [][]DecodeSample{plain, constrained} {
		for _, s := range set {
			c, n := float64(max(s.Context, 0)), float64(max(s.Tokens, 0))
			if n == 0 {
				continue
			}
			rows = append(rows, []float64{n, n*c + n*(n-1)/2, n * float64(k)})
			y = append(y, s.Seconds)
		}
	}
	x, err := fitNonNegative(rows, y, 0, []float64{prior.PerToken, prior.PerTokenContext, 0})
	if err != nil {
		return DecodeCost{}, DecodeCost{}, fmt.Errorf("%w: %v; decode samples need different context lengths", errFit, err)
	}
	return DecodeCost{PerToken: x[0], PerTokenContext: x[1]}, DecodeCost{PerToken: x[0] + x[2], PerTokenContext: x[1]}, nil
}

// solve solves the k×k system m = [A | b] by Gaussian elimination with partial
// pivoting, in place.
func solve(m [][]float64) ([]float64, bool) {
	k := len(m)
	for col := range k {
		p := col
		for r := col + 1; r < k; r++ {
			if math.Abs(m[r][col]) > math.Abs(m[p][col]) {
				p = r
			}
		}
		if math.Abs(m[p][col]) < 1e-12 {
			return nil, false
		}
		m[col], m[p] = m[p], m[col]
		for r := range k {
			if r == col {
				continue
			}
			f := m[r][col] / m[col][col]
			for c := col; c <= k; c++ {
				m[r][c] -= f * m[col][c]
			}
		}
	}
	x := make([]float64, k)
	for i := range k {
		x[i] = m[i][k] / m[i][i]
	}
	return x, true
}
