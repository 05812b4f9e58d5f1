//go:build llamacpp

package embedded

import (
	"cmp"
	"errors"
	"math"
	"math/rand/v2"
	"slices"
)

// sampling holds a request's sampling parameters.
type sampling struct {
	temperature float64 // 0: greedy
	topK        int     // 0: off
	topP        float64 // 1: off
	seed        uint64
}

// sampler picks tokens from logits in Go. It reuses its buffers across steps.
type sampler struct {
	p     sampling
	rng   *rand.Rand
	allow []uint64
	cands []cand
}

type cand struct {
	id int
	p  float64
}

var errAllMasked = errors.New("the mask allows no token")

func newSampler(p sampling, vocab int) *sampler {
	return &sampler{
		p:     p,
		rng:   rand.New(rand.NewPCG(p.seed, p.seed^0x9e3779b97f4a7c15)),
		allow: make([]uint64, (vocab+63)/64),
	}
}

// sample picks the next token. It overwrites logits (a copy from GetLogitsIth).
func (s *sampler) sample(logits []float32, m Masker) (int, error) {
	if m != nil {
		clear(s.allow)
		if m.Allowed(s.allow) {
			applyMask(logits, s.allow)
		}
	}
	if s.p.temperature <= 0 {
		return greedy(logits)
	}

	// Softmax over the finite logits, at the request's temperature.
	maxL := float32(math.Inf(-1))
	for _, l := range logits {
		maxL = max(maxL, l)
	}
	if math.IsInf(float64(maxL), -1) {
		return 0, errAllMasked
	}
	inv := 1 / s.p.temperature
	s.cands = s.cands[:0]
	var sum float64
	for id, l := range logits {
		if math.IsInf(float64(l), -1) {
			continue
		}
		p := math.Exp(float64(l-maxL) * inv)
		sum += p
		s.cands = append(s.cands, cand{id, p})
	}
	cs := s.cands
	if (s.p.topK > 0 && s.p.topK < len(cs)) || s.p.topP < 1 {
		// Highest first; ties by id so that a seed gives the same tokens everywhere.
		slices.SortFunc(cs, func(a, b cand) int {
			if c := cmp.Compare(b.p, a.p); c != 0 {
				return c
			}
			return cmp.Compare(a.id, b.id)
		})
		if s.p.topK > 0 && s.p.topK < len(cs) {
			cs = cs[:s.p.topK]
		}
		sum = 0
		for _, c := range cs {
			sum += c.p
		}
		if s.p.topP < 1 {
			var acc float64
			for i, c := range cs {
				acc += c.p
				if acc >= s.p.topP*sum {
					cs = cs[:i+1]
					sum = acc
					break
				}
			}
		}
	}
	r := s.rng.Float64() * sum
	for _, c := range cs {
		r -= c.p
		if r < 0 {
			return c.id, nil
		}
	}
	return cs[len(cs)-1].id, nil
}

// applyMask sets the logit of every token whose bit is clear to -Inf.
func applyMask(logits []float32, allow []uint64) {
	neg := float32(math.Inf(-1))
	for w, bits := range allow {
		base := w * 64
		if bits == math.MaxUint64 {
			continue
		}
		for b := range 64 {
			if i := base + b; i < len(logits) && bits&(1<<b) == 0 {
				logits[i] = neg
			}
		}
	}
}

func greedy(logits []float32) (int, error) {
	best, bestL := -1, float32(math.Inf(-1))
	for id, l := range logits {
		if l > bestL {
			best, bestL = id, l
		}
	}
	if best < 0 {
		return 0, errAllMasked
	}
	return best, nil
}
