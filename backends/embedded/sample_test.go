//go:build llamacpp

package embedded

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// referenceSampler is the sampler as it was before candidate selection: softmax over
// every finite token, a full sort for top_k and top_p. The fast paths must give the same
// tokens for the same seed.
type referenceSampler struct {
	p   sampling
	rng *rand.Rand
}

func newReferenceSampler(p sampling) *referenceSampler {
	return &referenceSampler{p: p, rng: rand.New(rand.NewPCG(p.seed, p.seed^0x9e3779b97f4a7c15))}
}

func (s *referenceSampler) sample(logits []float32) int {
	if s.p.temperature <= 0 {
		tok, _ := greedy(logits)
		return tok
	}
	return s.draw(s.candidates(logits))
}

// candidates are the tokens the reference draws from, in its walk order, and their
// weights' sum. They depend on the logits and the parameters only, not on the seed.
func (s *referenceSampler) candidates(logits []float32) ([]cand, float64) {
	maxL := float32(math.Inf(-1))
	for _, l := range logits {
		maxL = max(maxL, l)
	}
	inv := 1 / s.p.temperature
	var cs []cand
	var sum float64
	for id, l := range logits {
		if math.IsInf(float64(l), -1) {
			continue
		}
		p := math.Exp(float64(l-maxL) * inv)
		sum += p
		cs = append(cs, cand{id, p})
	}
	if (s.p.topK > 0 && s.p.topK < len(cs)) || s.p.topP < 1 {
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
	return cs, sum
}

// draw is the reference's one uniform draw over candidates.
func (s *referenceSampler) draw(cs []cand, sum float64) int {
	r := s.rng.Float64() * sum
	for _, c := range cs {
		r -= c.p
		if r < 0 {
			return c.id
		}
	}
	return cs[len(cs)-1].id
}

// setMasker allows a fixed set of tokens at every step.
type setMasker struct{ allowed []int }

func (m setMasker) Allowed(dst []uint64) bool {
	for _, t := range m.allowed {
		dst[t/64] |= 1 << (t % 64)
	}
	return true
}

func (setMasker) Accept(int) error { return nil }

func configs(vocab int) []sampling {
	var out []sampling
	for _, temp := range []float64{0, 0.5, 1, 2} {
		for _, k := range []int{0, 1, 5, 40, vocab - 1, vocab, vocab + 5} {
			for _, p := range []float64{1, 0.95, 0.9, 0.5, 0} {
				out = append(out, sampling{temperature: temp, topK: k, topP: p})
			}
		}
	}
	return out
}

func name(p sampling) string {
	return fmt.Sprintf("temp%g_k%d_p%g", p.temperature, p.topK, p.topP)
}

// logitSets are synthetic vocabularies with the shapes that matter to candidate
// selection: smooth, heavy ties, masked entries, weights that underflow to 0, and
// distinct logits whose weights round to one value.
func logitSets(vocab int) map[string][]float32 {
	r := rand.New(rand.NewPCG(1, 2))
	sets := map[string][]float32{}
	gen := func(name string, f func(i int) float32) {
		l := make([]float32, vocab)
		for i := range l {
			l[i] = f(i)
		}
		sets[name] = l
	}
	gen("gaussian", func(int) float32 { return float32(r.NormFloat64() * 3) })
	gen("ties", func(int) float32 { return float32(math.Round(r.NormFloat64()*4) / 2) })
	gen("masked", func(int) float32 {
		if r.IntN(4) == 0 {
			return float32(math.Inf(-1))
		}
		return float32(r.NormFloat64() * 2)
	})
	gen("underflow", func(int) float32 { return float32(r.NormFloat64() * 400) })
	gen("rounding", func(i int) float32 {
		// 0, 1e-30 and friends all have weight exactly 1 at the max.
		if i%7 == 0 {
			return float32(r.IntN(5)) * 1e-30
		}
		return float32(r.NormFloat64() - 3)
	})
	gen("signedzero", func(i int) float32 {
		if i%3 == 0 {
			return float32(math.Copysign(0, float64(r.IntN(2)*2-1)))
		}
		return float32(r.NormFloat64() - 4)
	})
	return sets
}

func TestSample_SameTokensAsFullSort(t *testing.T) {
	for _, vocab := range []int{64, 3001} {
		for setName, src := range logitSets(vocab) {
			for _, p := range configs(vocab) {
				p.seed = 42
				s, ref := newSampler(p, vocab), newReferenceSampler(p)
				// Every step samples the same logits, so the reference's candidates (its
				// full sort, the costly part) are the same at every step: only its draw
				// is repeated. The sampler under test still does all its work each step.
				var refCands []cand
				var refSum float64
				if p.temperature > 0 {
					refCands, refSum = ref.candidates(src)
				}
				logits := make([]float32, vocab)
				for step := range 25 {
					copy(logits, src)
					got, err := s.sample(logits, nil)
					if err != nil {
						t.Fatalf("%d/%s/%s: %v", vocab, setName, name(p), err)
					}
					var want int
					if p.temperature > 0 {
						want = ref.draw(refCands, refSum)
					} else {
						want = ref.sample(src)
					}
					if got != want {
						t.Fatalf("%d/%s/%s step %d: token %d, full sort gives %d", vocab, setName, name(p), step, got, want)
					}
				}
			}
		}
	}
}

// softmax returns the weights at temperature temp, normalised.
func softmax(logits []float32, temp float64) []float64 {
	maxL := slices.Max(logits)
	w := make([]float64, len(logits))
	var sum float64
	for i, l := range logits {
		w[i] = math.Exp(float64(l-maxL) / temp)
		sum += w[i]
	}
	for i := range w {
		w[i] /= sum
	}
	return w
}

// checkFrequencies draws n tokens and compares their frequencies with want.
func checkFrequencies(t *testing.T, p sampling, logits []float32, want []float64, n int) {
	t.Helper()
	s := newSampler(p, len(logits))
	buf := make([]float32, len(logits))
	counts := make([]int, len(logits))
	for range n {
		copy(buf, logits)
		tok, err := s.sample(buf, nil)
		if err != nil {
			t.Fatal(err)
		}
		counts[tok]++
	}
	for i, w := range want {
		got := float64(counts[i]) / float64(n)
		if w == 0 && counts[i] != 0 {
			t.Errorf("%s: token %d drawn %d times, want never", name(p), i, counts[i])
		}
		// 5 standard deviations of a frequency over n draws.
		if tol := 5 * math.Sqrt(w*(1-w)/float64(n)); math.Abs(got-w) > tol+1e-9 {
			t.Errorf("%s: token %d frequency %.4f, want %.4f ± %.4f", name(p), i, got, w, tol)
		}
	}
}

func TestSample_FrequenciesMatchSoftmax(t *testing.T) {
	logits := []float32{2, 1, 0.5, 0, -1, -3, 1.5, 0.25}
	for _, temp := range []float64{0.7, 1, 1.8} {
		checkFrequencies(t, sampling{temperature: temp, topP: 1, seed: 7}, logits, softmax(logits, temp), 200_000)
	}
}

func TestSample_TopKKeepsTheKBestRenormalised(t *testing.T) {
	logits := []float32{2, 1, 0.5, 0, -1, -3, 1.5, 0.25}
	// The three best are tokens 0, 6 and 1.
	w := softmax([]float32{2, 1, 1.5}, 1)
	want := []float64{w[0], w[1], 0, 0, 0, 0, w[2], 0}
	checkFrequencies(t, sampling{temperature: 1, topK: 3, topP: 1, seed: 8}, logits, want, 200_000)
}

func TestSample_TopPCutsTailExactly(t *testing.T) {
	// Weights 0.4, 0.3, 0.2, 0.1: top_p 0.65 keeps the first two (0.7 ≥ 0.65), 0.75 the
	// first three.
	logits := []float32{float32(math.Log(0.3)), float32(math.Log(0.1)), float32(math.Log(0.4)), float32(math.Log(0.2))}
	checkFrequencies(t, sampling{temperature: 1, topP: 0.65, seed: 9}, logits, []float64{3.0 / 7, 0, 4.0 / 7, 0}, 200_000)
	checkFrequencies(t, sampling{temperature: 1, topP: 0.75, seed: 9}, logits, []float64{3.0 / 9, 0, 4.0 / 9, 2.0 / 9}, 200_000)
	// The cut is also exact on a large vocabulary, where only the top bins are sorted.
	big := make([]float32, 20_000)
	for i := range big {
		big[i] = -20
	}
	copy(big[1000:], logits)
	w := softmax(big, 1)
	// Tokens 1000..1003 hold all but ~4e-5 of the mass; 0.65 of it still means 1002, 1000.
	want := make([]float64, len(big))
	want[1002], want[1000] = w[1002]/(w[1002]+w[1000]), w[1000]/(w[1002]+w[1000])
	checkFrequencies(t, sampling{temperature: 1, topP: 0.65, seed: 10}, big, want, 20_000)
}

func TestSample_TopKOneIsGreedy(t *testing.T) {
	for setName, src := range logitSets(5000) {
		if setName == "rounding" {
			continue // there the full sort breaks weight ties by id, not by logit
		}
		for seed := range uint64(20) {
			s := newSampler(sampling{temperature: 1.3, topK: 1, topP: 1, seed: seed}, len(src))
			logits := slices.Clone(src)
			got, err := s.sample(logits, nil)
			if err != nil {
				t.Fatal(err)
			}
			want, _ := greedy(src)
			if got != want {
				t.Fatalf("%s seed %d: top_k 1 gives %d, greedy %d", setName, seed, got, want)
			}
		}
	}
}

func TestSample_MaskedNeverDrawn(t *testing.T) {
	const vocab = 4000
	r := rand.New(rand.NewPCG(3, 4))
	src := make([]float32, vocab)
	allowed := map[int]bool{}
	var m setMasker
	for i := range src {
		src[i] = float32(r.NormFloat64())
		if r.IntN(50) == 0 {
			allowed[i] = true
			m.allowed = append(m.allowed, i)
		} else {
			src[i] += 10 // the masked tokens are the likeliest
		}
	}
	src[5] = float32(math.NaN())
	for _, p := range configs(vocab) {
		p.seed = 5
		s := newSampler(p, vocab)
		logits := make([]float32, vocab)
		for range 200 {
			copy(logits, src)
			tok, err := s.sample(logits, m)
			if err != nil {
				t.Fatalf("%s: %v", name(p), err)
			}
			if !allowed[tok] {
				t.Fatalf("%s: drew masked token %d", name(p), tok)
			}
		}
	}
}

func TestSample_AllMaskedIsError(t *testing.T) {
	const vocab = 300
	for _, p := range configs(vocab) {
		s := newSampler(p, vocab)
		logits := make([]float32, vocab)
		if _, err := s.sample(logits, setMasker{}); !errors.Is(err, errAllMasked) {
			t.Errorf("%s, mask allows nothing: err %v, want errAllMasked", name(p), err)
		}
		for i := range logits {
			logits[i] = float32(math.Inf(-1))
		}
		logits[7] = float32(math.NaN())
		if _, err := s.sample(logits, nil); !errors.Is(err, errAllMasked) {
			t.Errorf("%s, all -Inf or NaN: err %v, want errAllMasked", name(p), err)
		}
	}
}

func TestSample_SameSeedSameTokens(t *testing.T) {
	src := logitSets(3000)["gaussian"]
	draw := func(p sampling) []int {
		s := newSampler(p, len(src))
		logits := make([]float32, len(src))
		var toks []int
		for range 50 {
			copy(logits, src)
			tok, err := s.sample(logits, nil)
			if err != nil {
				t.Fatal(err)
			}
			toks = append(toks, tok)
		}
		return toks
	}
	for _, p := range []sampling{{temperature: 1, topP: 1}, {temperature: 1, topK: 40, topP: 1}, {temperature: 1, topP: 0.9}} {
		p.seed = 11
		a, b := draw(p), draw(p)
		if !slices.Equal(a, b) {
			t.Errorf("%s: seed 11 gave %v then %v", name(p), a, b)
		}
		p.seed = 12
		if c := draw(p); slices.Equal(a, c) {
			t.Errorf("%s: seeds 11 and 12 gave the same tokens %v", name(p), a)
		}
	}
}

func TestApplyMask_ClearsExactlyTheClearBits(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, n := range []int{1, 63, 64, 65, 200} {
		allow := make([]uint64, (n+63)/64)
		for w := range allow {
			switch r.IntN(3) {
			case 0:
			case 1:
				allow[w] = math.MaxUint64
			default:
				allow[w] = r.Uint64()
			}
		}
		logits := make([]float32, n)
		applyMask(logits, allow)
		for i, l := range logits {
			if want := allow[i/64]&(1<<(i%64)) == 0; math.IsInf(float64(l), -1) != want {
				t.Fatalf("n %d token %d: logit %v, masked %v", n, i, l, want)
			}
		}
	}
}

// BenchmarkSamplePeaked is one sampling step over 128k logits shaped like a model's:
// Gaussian, so that top_p keeps hundreds of tokens rather than BenchmarkSample's tens of
// thousands.
func BenchmarkSamplePeaked(b *testing.B) {
	const vocab = 128256
	r := rand.New(rand.NewPCG(1, 1))
	src := make([]float32, vocab)
	for i := range src {
		src[i] = float32(r.NormFloat64() * 2.5)
	}
	for _, p := range []sampling{{temperature: 0}, {temperature: 1, topP: 1}, {temperature: 1, topK: 40, topP: 1}, {temperature: 1, topP: 0.9}} {
		b.Run(name(p), func(b *testing.B) {
			s := newSampler(p, vocab)
			logits := make([]float32, vocab)
			for b.Loop() {
				copy(logits, src)
				if _, err := s.sample(logits, nil); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// costlySet is setMasker with the costly-step abilities, counting how often the full set
// was asked for.
type costlySet struct {
	setMasker
	full int
}

func (m *costlySet) Allowed(dst []uint64) bool { m.full++; return m.setMasker.Allowed(dst) }
func (*costlySet) Costly() bool                { return true }
func (m *costlySet) Allows(tok int) bool       { return slices.Contains(m.allowed, tok) }

// TestSample_UnmaskedFirstIsTheMaskedDistribution: with a costly mask, greedy decoding
// picks the best allowed token and temperature sampling draws from the masked softmax
// (checked by frequency over 60,000 draws against the exact masked probabilities), while
// the full mask is asked only when a draw was refused; with top_k the mask comes first.
func TestSample_UnmaskedFirstIsTheMaskedDistribution(t *testing.T) {
	logits := []float32{2, 1.5, 1, 0.5, 0, -0.5, -1, 3}
	allowed := []int{1, 2, 5} // token 7, the best, is refused
	m := &costlySet{setMasker: setMasker{allowed: allowed}}
	if tok, err := newSampler(sampling{temperature: 0}, len(logits)).sample(slices.Clone(logits), m); err != nil || tok != 1 {
		t.Errorf("greedy: %d, %v; want 1, the best allowed", tok, err)
	}
	var z float64
	want := map[int]float64{}
	for _, id := range allowed {
		want[id] = math.Exp(float64(logits[id]))
		z += want[id]
	}
	const draws = 60000
	s := newSampler(sampling{temperature: 1, topP: 1, seed: 9}, len(logits))
	m.full = 0
	got := map[int]int{}
	for range draws {
		tok, err := s.sample(slices.Clone(logits), m)
		if err != nil {
			t.Fatal(err)
		}
		got[tok]++
	}
	for tok, n := range got {
		p, ok := want[tok]
		if !ok {
			t.Fatalf("drew refused token %d", tok)
		}
		p /= z
		if sd := math.Sqrt(p * (1 - p) / draws); math.Abs(float64(n)/draws-p) > 5*sd {
			t.Errorf("token %d: frequency %.4f, want %.4f", tok, float64(n)/draws, p)
		}
	}
	// The unmasked softmax puts mass 1-Z/total on refused tokens: that is how often the
	// full mask must be asked.
	var total float64
	for _, l := range logits {
		total += math.Exp(float64(l))
	}
	if refused := 1 - z/total; math.Abs(float64(m.full)/draws-refused) > 0.02 {
		t.Errorf("full mask asked on %.3f of draws, want about %.3f", float64(m.full)/draws, refused)
	}
	m.full = 0
	if _, err := newSampler(sampling{temperature: 1, topK: 2, topP: 1}, len(logits)).sample(slices.Clone(logits), m); err != nil || m.full != 1 {
		t.Errorf("top_k: full mask asked %d times, want 1 (the unmasked draw is not exact there)", m.full)
	}
}
