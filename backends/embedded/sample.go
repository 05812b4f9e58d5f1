//go:build llamacpp

package embedded

import (
	"cmp"
	"errors"
	"math"
	"math/bits"
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

// sampler picks tokens from logits in Go. It reuses its buffers across steps, so a step
// allocates nothing once the buffers have grown.
//
// A token's weight is exp((logit-max)/temperature), computed in float64 exactly as the
// reference algorithm (sort every finite token by weight, highest first and ties by id,
// keep top_k, keep the shortest prefix holding top_p of the mass, then walk the prefix
// with one uniform draw) does, and the candidates are walked in the same order, so a
// seed gives the same tokens. The work is what differs: top_k selects its candidates
// with a bounded heap on the raw logits, and top_p sorts only the tokens above a logit
// threshold found from a histogram of the mass. The one difference: with top_p and no
// top_k cut, the total mass is summed in token-id order instead of weight order, so the
// cut can move by one token only when the running mass lands within rounding (about
// 1e-16 relative) of top_p times the total.
//
// NaN and -Inf logits are never sampled; a +Inf logit is taken greedily.
type sampler struct {
	p     sampling
	rng   *rand.Rand
	allow []uint64
	probs []float64 // by token id: the temperature-only path
	keys  []uint64  // candidates, as candKey
	cands []cand
	mass  [massBins]float64 // mass by distance below the max, top_p only
}

type cand struct {
	id int
	p  float64
}

// The top_p histogram: massBinsPerUnit bins for each unit of (max-logit)/temperature;
// everything further below the max than the bins reach falls into the last one.
const (
	massBins        = 1024
	massBinsPerUnit = 16
)

var errAllMasked = errors.New("the mask allows no token")

var negInf = float32(math.Inf(-1))

func newSampler(p sampling, vocab int) *sampler {
	return &sampler{
		p:     p,
		rng:   rand.New(rand.NewPCG(p.seed, p.seed^0x9e3779b97f4a7c15)),
		allow: make([]uint64, (vocab+63)/64),
	}
}

// costlyMasker is a Masker whose Allowed is costly at some steps (a grammar applied to
// the whole vocabulary) and which can say cheaply whether one token is allowed.
type costlyMasker interface {
	Masker
	// Costly reports whether Allowed is costly at this step.
	Costly() bool
	// Allows reports whether token tok may come next.
	Allows(tok int) bool
}

// sample picks the next token. It overwrites logits (a copy from GetLogitsIth).
func (s *sampler) sample(logits []float32, m Masker) (int, error) {
	if m != nil {
		if tok, ok := s.sampleUnmaskedFirst(logits, m); ok {
			return tok, nil
		}
		clear(s.allow)
		if m.Allowed(s.allow) {
			applyMask(logits, s.allow)
		}
	}
	if s.p.temperature <= 0 {
		return greedy(logits)
	}
	maxL, n := maxFinite(logits)
	if n == 0 {
		return 0, errAllMasked
	}
	if math.IsInf(float64(maxL), 1) {
		return greedy(logits)
	}
	inv := 1 / s.p.temperature
	k := s.p.topK
	if k >= n {
		k = 0 // keeps every token, as no top_k does
	}
	switch {
	case k > 0:
		return s.sampleTopK(logits, maxL, inv, k)
	case s.p.topP < 1:
		return s.sampleTopP(logits, maxL, inv)
	default:
		return s.sampleAll(logits, maxL, inv), nil
	}
}

// sampleUnmaskedFirst draws from the unmasked logits and keeps the token when a costly
// mask allows it, so that a step whose draw the mask allows never computes the mask.
// For greedy decoding and for temperature alone this is exact: the greedy pick, if
// allowed, is the best allowed token, and a draw from the whole softmax kept when allowed
// and otherwise redrawn from the masked one is a draw from the masked softmax (rejection
// sampling: P(a) = p(a) + (1-Z)·p(a)/Z = p(a)/Z). It only takes another draw from the
// seeded source. With top_k or top_p it is not exact, and ok is false: the caller masks
// first.
func (s *sampler) sampleUnmaskedFirst(logits []float32, m Masker) (tok int, ok bool) {
	cm, isCostly := m.(costlyMasker)
	if !isCostly || !cm.Costly() || s.p.topK > 0 || s.p.topP < 1 {
		return 0, false
	}
	var err error
	if s.p.temperature <= 0 {
		tok, err = greedy(logits)
	} else {
		maxL, n := maxFinite(logits)
		switch {
		case n == 0:
			return 0, false
		case math.IsInf(float64(maxL), 1):
			tok, err = greedy(logits)
		default:
			tok = s.sampleAll(logits, maxL, 1/s.p.temperature)
		}
	}
	if err != nil || !cm.Allows(tok) {
		return 0, false
	}
	return tok, true
}

// maxFinite returns the highest logit that is not NaN or -Inf, and how many there are.
func maxFinite(logits []float32) (float32, int) {
	maxL, n := negInf, 0
	for _, l := range logits {
		if l > negInf {
			n++
			if l > maxL {
				maxL = l
			}
		}
	}
	return maxL, n
}

// sampleAll draws from the softmax over every token, walking them in id order.
func (s *sampler) sampleAll(logits []float32, maxL float32, inv float64) int {
	if cap(s.probs) < len(logits) {
		s.probs = make([]float64, len(logits))
	}
	probs := s.probs[:len(logits)]
	var sum float64
	for id, l := range logits {
		var p float64
		if l > negInf {
			p = math.Exp(float64(l-maxL) * inv)
		}
		probs[id] = p
		sum += p
	}
	// Adding or subtracting the zeros of masked tokens changes nothing, so this is the
	// reference walk over the finite tokens.
	r := s.rng.Float64() * sum
	last := 0
	for id, p := range probs {
		if p == 0 {
			continue
		}
		if r -= p; r < 0 {
			return id
		}
		last = id
	}
	return last
}

// sampleTopK keeps the k best tokens (k is below the number of finite logits).
func (s *sampler) sampleTopK(logits []float32, maxL float32, inv float64, k int) (int, error) {
	keys := s.topKeys(logits, k)
	cs := s.candidates(logits, keys, maxL, inv)
	if boundaryTies(logits, cs, maxL, inv) {
		return s.sampleSorted(logits, maxL, inv)
	}
	return s.draw(s.cutTopP(trimZeros(cs))), nil
}

// sampleTopP keeps the shortest prefix, by weight, holding top_p of the mass. Only the
// tokens in the histogram bins that reach top_p are sorted; the others cannot be in it.
func (s *sampler) sampleTopP(logits []float32, maxL float32, inv float64) (int, error) {
	clear(s.mass[:])
	var sum float64
	for _, l := range logits {
		if !(l > negInf) {
			continue
		}
		p := math.Exp(float64(l-maxL) * inv)
		sum += p
		s.mass[massBin(l, maxL, inv)] += p
	}
	target := s.p.topP * sum
	var acc float64
	b := 0
	for ; b < massBins-1; b++ {
		if acc += s.mass[b]; acc >= target && s.mass[b] > 0 {
			break
		}
	}
	for ; b < massBins; b++ {
		// A token in a bin before the last has a weight of at least e^-64, so an empty
		// bin is one with no mass.
		if b < massBins-1 && s.mass[b] == 0 {
			continue
		}
		// The bin falls as the logit rises, so the tokens in bins up to b are the
		// logits from the lowest in bin b up.
		keys := s.keys[:0]
		for id, l := range logits {
			if l > negInf && (b == massBins-1 || massBin(l, maxL, inv) <= b) {
				keys = append(keys, candKey(l, id))
			}
		}
		s.keys = keys
		slices.Sort(keys)
		cs := trimZeros(s.candidates(logits, keys, maxL, inv))
		// The bins' sum can round differently from the candidates' running sum: when
		// that running sum falls short of the target, take the next bin too.
		var run float64
		cut := -1
		for i, c := range cs {
			if run += c.p; run >= target {
				cut = i
				break
			}
		}
		if cut < 0 && b < massBins-1 {
			continue
		}
		if cut < 0 {
			return s.draw(cs, run), nil
		}
		if cs[cut].p == cs[len(cs)-1].p && boundaryTies(logits, cs, maxL, inv) {
			return s.sampleSorted(logits, maxL, inv)
		}
		return s.draw(cs[:cut+1], run), nil
	}
	return s.sampleSorted(logits, maxL, inv)
}

// massBin is the top_p histogram bin of finite logit l: the bins count units of
// (max-l)/temperature, massBinsPerUnit to a unit, and the last holds everything further
// down. It never rises as l rises.
func massBin(l, maxL float32, inv float64) int {
	if t := -float64(l-maxL) * inv * massBinsPerUnit; t < massBins-1 {
		return int(t)
	}
	return massBins - 1
}

// candKey orders candidates by logit, highest first, then by id: ascending keys. -0 and
// +0 share a key, as they share a weight.
func candKey(l float32, id int) uint64 {
	b := math.Float32bits(l)
	if b == 1<<31 {
		b = 0
	}
	if b>>31 != 0 {
		b = ^b
	} else {
		b |= 1 << 31
	}
	return uint64(^b)<<32 | uint64(uint32(id))
}

func keyID(k uint64) int { return int(uint32(k)) }

// topKeys returns the keys of the k best finite logits, sorted. It keeps a max-heap of
// k keys; as ids rise during the scan, a logit no higher than the heap's worst cannot
// enter, so most tokens cost one comparison.
func (s *sampler) topKeys(logits []float32, k int) []uint64 {
	h := s.keys[:0]
	var worst float32
	for id, l := range logits {
		if len(h) < k {
			if l > negInf {
				h = append(h, candKey(l, id))
				heapUp(h, len(h)-1)
				worst = logits[keyID(h[0])]
			}
			continue
		}
		if l > worst {
			h[0] = candKey(l, id)
			heapDown(h)
			worst = logits[keyID(h[0])]
		}
	}
	s.keys = h
	slices.Sort(h)
	return h
}

func heapUp(h []uint64, i int) {
	for i > 0 {
		parent := (i - 1) / 2
		if h[parent] >= h[i] {
			return
		}
		h[parent], h[i] = h[i], h[parent]
		i = parent
	}
}

func heapDown(h []uint64) {
	i := 0
	for {
		c := 2*i + 1
		if c >= len(h) {
			return
		}
		if c+1 < len(h) && h[c+1] > h[c] {
			c++
		}
		if h[i] >= h[c] {
			return
		}
		h[i], h[c] = h[c], h[i]
		i = c
	}
}

// candidates turns sorted keys into weighted candidates in the reference order: weight
// highest first, ties by id. Sorting by logit gives that order except where distinct
// logits round to one weight; such runs are re-sorted by id.
func (s *sampler) candidates(logits []float32, keys []uint64, maxL float32, inv float64) []cand {
	cs := s.cands[:0]
	for _, k := range keys {
		id := keyID(k)
		cs = append(cs, cand{id, math.Exp(float64(logits[id]-maxL) * inv)})
	}
	s.cands = cs
	for i := 0; i < len(cs); {
		j := i + 1
		for j < len(cs) && cs[j].p == cs[i].p {
			j++
		}
		if j-i > 1 && logits[cs[i].id] != logits[cs[j-1].id] {
			slices.SortFunc(cs[i:j], func(a, b cand) int { return cmp.Compare(a.id, b.id) })
		}
		i = j
	}
	return cs
}

// boundaryTies reports whether a logit below the candidates' lowest has the same
// non-zero weight, so that a token left out could tie, by weight, with one kept and
// precede it by id. Only the full sort then gives the reference order.
func boundaryTies(logits []float32, cs []cand, maxL float32, inv float64) bool {
	last := cs[len(cs)-1]
	if last.p == 0 {
		return false
	}
	below := math.Nextafter32(logits[last.id], negInf)
	return below > negInf && math.Exp(float64(below-maxL)*inv) == last.p
}

// trimZeros drops the candidates whose weight underflowed to 0: they sort last and can
// never be drawn. The first candidate is the max, with weight 1.
func trimZeros(cs []cand) []cand {
	for len(cs) > 1 && cs[len(cs)-1].p == 0 {
		cs = cs[:len(cs)-1]
	}
	return cs
}

// cutTopP sums the candidates and keeps the shortest prefix holding top_p of the mass.
func (s *sampler) cutTopP(cs []cand) ([]cand, float64) {
	var sum float64
	for _, c := range cs {
		sum += c.p
	}
	if s.p.topP < 1 {
		var acc float64
		for i, c := range cs {
			if acc += c.p; acc >= s.p.topP*sum {
				return cs[:i+1], acc
			}
		}
	}
	return cs, sum
}

// draw walks the candidates, in order, with one uniform draw scaled to their sum.
func (s *sampler) draw(cs []cand, sum float64) int {
	r := s.rng.Float64() * sum
	for _, c := range cs {
		if r -= c.p; r < 0 {
			return c.id
		}
	}
	return cs[len(cs)-1].id
}

// sampleSorted is the reference algorithm: every finite token sorted by weight. It is
// the fallback for logits whose weights tie across the candidates' boundary.
func (s *sampler) sampleSorted(logits []float32, maxL float32, inv float64) (int, error) {
	cs := s.cands[:0]
	for id, l := range logits {
		if l > negInf {
			cs = append(cs, cand{id, math.Exp(float64(l-maxL) * inv)})
		}
	}
	s.cands = cs
	slices.SortFunc(cs, func(a, b cand) int {
		if c := cmp.Compare(b.p, a.p); c != 0 {
			return c
		}
		return cmp.Compare(a.id, b.id)
	})
	if s.p.topK > 0 && s.p.topK < len(cs) {
		cs = cs[:s.p.topK]
	}
	return s.draw(s.cutTopP(trimZeros(cs))), nil
}

// applyMask sets the logit of every token whose bit is clear to -Inf.
func applyMask(logits []float32, allow []uint64) {
	for w, word := range allow {
		base := w * 64
		if base >= len(logits) {
			return
		}
		switch word {
		case math.MaxUint64:
		case 0:
			for i := range logits[base:min(base+64, len(logits))] {
				logits[base+i] = negInf
			}
		default:
			for clr := ^word; clr != 0; clr &= clr - 1 {
				if i := base + bits.TrailingZeros64(clr); i < len(logits) {
					logits[i] = negInf
				}
			}
		}
	}
}

// greedy returns the first token with the highest logit.
func greedy(logits []float32) (int, error) {
	best, bestL := -1, negInf
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
