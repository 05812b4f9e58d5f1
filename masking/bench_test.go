package masking

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

var benchSizes = []int{100, 1000, 10000}

func benchNames(n int) []string {
	return catalog(rand.New(rand.NewPCG(uint64(n), 77)), n)
}

// BenchmarkCompile is the cost of a cache miss: tries only (lazy sets), and
// with every token set computed (Warm).
func BenchmarkCompile(b *testing.B) {
	l := loadLlama(b)
	for _, n := range benchSizes {
		names := benchNames(n)
		b.Run(fmt.Sprintf("tools=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Compile(l.ix, Spec{Format: Hermes(), Allowed: names}); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(fmt.Sprintf("tools=%d/warm", n), func(b *testing.B) {
			b.ReportAllocs()
			var states int
			for b.Loop() {
				m, _ := Compile(l.ix, Spec{Format: Hermes(), Allowed: names})
				m.Warm()
				states = m.States()
			}
			b.ReportMetric(float64(states), "states")
		})
	}
}

// BenchmarkStep is one decoding step once the mask is built: Allowed, copied
// into the engine's bitset, then Accept, over the tokens of whole calls to
// random allowed names (trigger, fixed text, name, arguments, end).
func BenchmarkStep(b *testing.B) {
	l := loadLlama(b)
	for _, n := range benchSizes {
		names := benchNames(n)
		m, err := Compile(l.ix, Spec{Format: Hermes(), Allowed: names})
		if err != nil {
			b.Fatal(err)
		}
		r := rand.New(rand.NewPCG(1, 1))
		var seq []int
		for range 256 {
			seq = append(seq, l.toolCall)
			seq = append(seq, l.tokenize(callText(names[r.IntN(len(names))]), r)...)
			seq = append(seq, l.endCall)
		}
		dst := NewBitset(l.ix.Len())
		run := func(b *testing.B) {
			st := m.NewState()
			i := 0
			for b.Loop() {
				st.Allowed().CopyTo(dst)
				if err := st.Accept(seq[i]); err != nil {
					b.Fatal(err)
				}
				if i++; i == len(seq) {
					i = 0
				}
			}
		}
		b.Run(fmt.Sprintf("tools=%d/first-pass", n), func(b *testing.B) {
			b.ReportAllocs()
			m2, _ := Compile(l.ix, Spec{Format: Hermes(), Allowed: names})
			st := m2.NewState()
			i := 0
			for b.Loop() {
				st.Allowed().CopyTo(dst)
				if err := st.Accept(seq[i]); err != nil {
					b.Fatal(err)
				}
				if i++; i == len(seq) {
					i = 0
				}
			}
		})
		m.Warm()
		b.Run(fmt.Sprintf("tools=%d", n), func(b *testing.B) { b.ReportAllocs(); run(b) })
	}
}

// BenchmarkCacheHit is the per-request lookup: hashing the allowed set.
func BenchmarkCacheHit(b *testing.B) {
	l := loadLlama(b)
	names := benchNames(10000)
	var c Cache
	spec := Spec{Format: Hermes(), Allowed: names}
	if _, err := c.Get(l.ix, spec); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		c.Get(l.ix, spec)
	}
}

func BenchmarkNewIndex(b *testing.B) {
	l := loadLlama(b)
	b.ReportAllocs()
	for b.Loop() {
		NewIndex(l.vocab)
	}
}

// BenchmarkAccept_Refused is a refused token: what a caller probing whether
// tokens are allowed pays for most of them.
func BenchmarkAccept_Refused(b *testing.B) {
	l := loadLlama(b)
	m, err := Compile(l.ix, Spec{Format: Hermes(), Allowed: benchNames(100)})
	if err != nil {
		b.Fatal(err)
	}
	st := m.NewState()
	if err := st.Accept(l.toolCall); err != nil {
		b.Fatal(err)
	}
	set := st.Allowed()
	refused := 0
	for set.Has(refused) {
		refused++
	}
	b.ReportAllocs()
	for b.Loop() {
		probe := st
		if probe.Accept(refused) == nil {
			b.Fatal("accepted")
		}
	}
}
