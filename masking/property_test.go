package masking

import (
	"math/rand/v2"
	"testing"
)

// TestProperty_AllowedNamesEmittable: every allowed name of random catalogs
// and random loaded subsets can be emitted through the mask, under random
// tokenizations that put token boundaries across the fixed text and the name.
func TestProperty_AllowedNamesEmittable(t *testing.T) {
	l := loadLlama(t)
	for seed := range uint64(8) {
		r := rand.New(rand.NewPCG(seed, 11))
		cat := catalog(r, 40+r.IntN(200))
		loaded := subset(r, cat)
		m := compile(t, l, Spec{Allowed: loaded, Mode: Mode(r.IntN(2))})
		for _, name := range loaded {
			for try := range 3 {
				var rr *rand.Rand
				if try > 0 {
					rr = r
				}
				st := m.NewState()
				emit(t, &st, []int{l.toolCall}, l)
				emit(t, &st, l.tokenize(callText(name), rr), l)
				emit(t, &st, []int{l.endCall}, l)
			}
		}
	}
}

// TestProperty_DisabledNamesUnreachable: random walks over mask-allowed tokens
// only ever close an allowed name, and never dead-end.
func TestProperty_DisabledNamesUnreachable(t *testing.T) {
	l := loadLlama(t)
	for seed := range uint64(6) {
		r := rand.New(rand.NewPCG(seed, 22))
		cat := catalog(r, 300)
		loaded := subset(r, cat)
		if seed == 0 {
			loaded = loaded[:1] // a loaded set of one
		}
		allowed := map[string]bool{}
		for _, n := range loaded {
			allowed[n] = true
		}
		m := compile(t, l, Spec{Allowed: loaded})
		seen := map[string]bool{}
		for range 400 {
			st := m.NewState()
			emit(t, &st, []int{l.toolCall}, l)
			name, ok := walkName(t, &st, r, l)
			if !ok {
				continue
			}
			if !allowed[name] {
				t.Fatalf("seed %d: disabled name %q completed (allowed %d of %d)", seed, name, len(loaded), len(cat))
			}
			seen[name] = true
		}
		if seed == 0 && len(seen) != 1 {
			t.Fatalf("loaded set of one: emitted %v", seen)
		}
	}
}

// TestProperty_LoadedSetOfOne: with one name loaded out of a catalog sharing
// its prefixes, the name position admits exactly that name's paths.
func TestProperty_LoadedSetOfOne(t *testing.T) {
	l := loadLlama(t)
	m := compile(t, l, Spec{Allowed: []string{"get_file"}, Mode: ModeRequired})
	r := rand.New(rand.NewPCG(9, 9))
	for range 300 {
		st := m.NewState()
		emit(t, &st, []int{l.toolCall}, l)
		if name, ok := walkName(t, &st, r, l); ok && name != "get_file" {
			t.Fatalf("emitted %q", name)
		}
	}
}

func subset(r *rand.Rand, cat []string) []string {
	var out []string
	for _, n := range cat {
		if r.IntN(3) == 0 {
			out = append(out, n)
		}
	}
	if len(out) == 0 {
		out = cat[:1]
	}
	r.Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
	return out
}
