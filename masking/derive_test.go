package masking

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// sameMask checks that a (from the cache) and b (compiled fresh) allow the
// same tokens in every state they reach together: a breadth-first walk
// over pairs of states from the start, stepping both along every token the
// sets allow, comparing the sets, phases and what AcceptCall says, and that
// both refuse a sample of the tokens they do not allow. maxPairs bounds the
// walk (0: none).
func sameMask(t *testing.T, a, b *Mask, maxPairs int, r *rand.Rand) {
	t.Helper()
	if x, y := slices.Sorted(slices.Values(a.Names())), slices.Sorted(slices.Values(b.Names())); !slices.Equal(x, y) {
		t.Fatalf("names %q, want %q", x, y)
	}
	type pair struct{ a, b int32 }
	start := pair{a.NewState().s, b.NewState().s}
	seen := map[pair]bool{start: true}
	queue := []pair{start}
	var ia, ib []int32
	for len(queue) > 0 && (maxPairs == 0 || len(seen) <= maxPairs) {
		p := queue[0]
		queue = queue[1:]
		sa, sb := State{m: a, s: p.a}, State{m: b, s: p.b}
		if sa.Phase() != sb.Phase() {
			t.Fatalf("phase %s, want %s", sa.Phase(), sb.Phase())
		}
		setA, setB := sa.Allowed(), sb.Allowed()
		ia, ib = setA.AppendIDs(ia[:0]), setB.AppendIDs(ib[:0])
		if setA.All() != setB.All() || setA.Count() != setB.Count() || !slices.Equal(ia, ib) {
			t.Fatalf("phase %s: %d tokens allowed, want %d", sa.Phase(), setA.Count(), setB.Count())
		}
		for _, id := range ia {
			na, nb := sa, sb
			afterA, errA := na.AcceptCall(int(id))
			afterB, errB := nb.AcceptCall(int(id))
			if errA != nil || errB != nil || afterA != afterB {
				t.Fatalf("token %d: %d %v, want %d %v", id, afterA, errA, afterB, errB)
			}
			if q := (pair{na.s, nb.s}); !seen[q] {
				seen[q] = true
				queue = append(queue, q)
			}
		}
		for range 8 {
			id := r.IntN(a.ix.n)
			if !setB.Has(id) {
				na := sa
				if na.Accept(id) == nil || setA.Has(id) {
					t.Fatalf("token %d accepted, which a fresh mask refuses", id)
				}
			}
		}
	}
}

// syntheticVocab is a vocabulary cut from calls to the names in format f:
// random pieces of call text (many crossing the trigger, the fixed text, a
// name, the closer and the end marker, some spanning a whole call and into
// the next), every single byte, and the format's markers as special tokens.
func syntheticVocab(r *rand.Rand, f Format, names []string) *Index {
	seen := map[string]bool{}
	var pieces [][]byte
	special := map[int]bool{}
	add := func(p string, sp bool) {
		if key := fmt.Sprint(sp, p); !seen[key] {
			seen[key] = true
			if sp {
				special[len(pieces)] = true
			}
			pieces = append(pieces, []byte(p))
		}
	}
	for b := range 256 {
		add(string(rune(b))[:1], false)
	}
	for _, m := range []string{f.Lead, f.Trigger, f.NameOpen, f.NameClose, f.End} {
		if m != "" {
			add(m, true)
			add(m, false)
		}
	}
	add("", false)
	var text strings.Builder
	for range 30 {
		text.WriteString([]string{"ok ", "x", "<", "\n", " {", "}"}[r.IntN(6)])
		text.WriteString(f.Trigger + f.NameOpen + names[r.IntN(len(names))] + f.NameClose + `{"a": 1}` + f.End)
	}
	s := text.String()
	for range 400 {
		i := r.IntN(len(s))
		j := min(len(s), i+1+r.IntN(1+r.IntN(40)))
		add(s[i:j], false)
	}
	ix, err := NewIndex(SliceVocab{Pieces: pieces, Special: special})
	if err != nil {
		panic(err)
	}
	return ix
}

// randomSpec is a loaded set of cat: a random subset, prev grown by a name
// or two, prev shrunk, everything, or (rarely) with a name outside cat.
func randomSpec(r *rand.Rand, f Format, cat, prev []string) Spec {
	spec := Spec{Format: f, Mode: Mode(r.IntN(3))}
	switch k := r.IntN(8); {
	case k < 3 && len(prev) > 0:
		spec.Allowed = append(slices.Clone(prev), cat[r.IntN(len(cat))])
		if r.IntN(2) == 0 {
			spec.Allowed = append(spec.Allowed, cat[r.IntN(len(cat))])
		}
	case k < 4 && len(prev) > 1:
		spec.Allowed = slices.Delete(slices.Clone(prev), 0, 1+r.IntN(len(prev)-1))
	case k < 5:
		spec.Allowed = slices.Clone(cat)
	default:
		for _, n := range cat {
			if r.IntN(3) == 0 {
				spec.Allowed = append(spec.Allowed, n)
			}
		}
	}
	if r.IntN(10) == 0 {
		spec.Allowed = append(spec.Allowed, "outside")
	}
	r.Shuffle(len(spec.Allowed), func(i, j int) { spec.Allowed[i], spec.Allowed[j] = spec.Allowed[j], spec.Allowed[i] })
	if spec.Mode == ModeSpecified {
		if len(spec.Allowed) == 0 {
			spec.Namespace = "g"
		} else {
			n := spec.Allowed[r.IntN(len(spec.Allowed))]
			spec.Namespace = n[:1+r.IntN(len(n))]
			if !strings.HasPrefix(n, spec.Namespace) {
				spec.Namespace = n
			}
		}
	}
	return spec
}

// TestDerive_AllowsExactlyWhatCompileAllows: over random catalogs in every
// format, with vocabularies cut from their calls, a Cache with the catalog
// precompiled serves a conversation of loaded sets (grown by a name or two,
// shrunk, the whole catalog, random, in every mode; some with a name outside
// the catalog); every mask it returns, derived from the catalog or from the
// previous turn's mask with its token sets partly computed, must allow
// exactly what Compile's mask of the same spec allows, in every state
// reachable from the start.
func TestDerive_AllowsExactlyWhatCompileAllows(t *testing.T) {
	formats := FormatNames()
	derived := 0
	for seed := range uint64(60) {
		r := rand.New(rand.NewPCG(seed, 16))
		f, _ := FormatByName(formats[int(seed)%len(formats)])
		var cat []string
		for _, n := range catalog(r, 2+r.IntN(25)) {
			if checkName(n, f.NameClose[0]) == nil {
				cat = append(cat, n)
			}
		}
		ix := syntheticVocab(r, f, cat)
		c := &Cache{Max: 1 + r.IntN(4)}
		if err := c.Precompile(ix, Spec{Format: f, Allowed: cat, Mode: ModeRequired}); err != nil {
			t.Fatal(err)
		}
		var prev []string
		for turn := range 8 {
			spec := randomSpec(r, f, cat, prev)
			want, werr := Compile(ix, spec)
			got, gerr := c.Get(ix, spec)
			if fmt.Sprint(werr) != fmt.Sprint(gerr) {
				t.Fatalf("seed %d turn %d: err %v, want %v", seed, turn, gerr, werr)
			}
			if werr != nil {
				continue
			}
			if got.u != want.u && got.u.index != nil {
				derived++
			}
			t.Run(fmt.Sprintf("%d/%d", seed, turn), func(t *testing.T) { sameMask(t, got, want, 4000, r) })
			prev = spec.Allowed
		}
	}
	if derived < 200 {
		t.Errorf("only %d masks derived", derived)
	}
}

// TestDerive_Llama: the same on Llama 3.2's vocabulary with catalogs of a few
// hundred names, comparing along random calls (the walk over every
// reachable state would visit the whole vocabulary from free text).
func TestDerive_Llama(t *testing.T) {
	l := loadLlama(t)
	for seed := range uint64(3) {
		r := rand.New(rand.NewPCG(seed, 61))
		cat := catalog(r, 100+r.IntN(300))
		c := &Cache{}
		if err := c.Precompile(l.ix, Spec{Format: Hermes(), Allowed: cat}); err != nil {
			t.Fatal(err)
		}
		var prev []string
		for turn := range 4 {
			spec := randomSpec(r, Hermes(), cat, prev)
			want, werr := Compile(l.ix, spec)
			got, gerr := c.Get(l.ix, spec)
			if fmt.Sprint(werr) != fmt.Sprint(gerr) {
				t.Fatalf("err %v, want %v", gerr, werr)
			}
			if werr != nil {
				continue
			}
			// The id lists are reused: in free text each holds the whole vocabulary,
			// and a fresh pair per step was most of this test's cost under -race.
			var ia, ib []int32
			for range 40 {
				sa, sb := got.NewState(), want.NewState()
				toks := []int{l.toolCall}
				toks = append(toks, l.tokenize(callText(cat[r.IntN(len(cat))]), r)...)
				toks = append(toks, l.endCall)
				for _, id := range toks {
					a, b := sa.Allowed(), sb.Allowed()
					ia, ib = a.AppendIDs(ia[:0]), b.AppendIDs(ib[:0])
					if a.Count() != b.Count() || !slices.Equal(ia, ib) {
						t.Fatalf("seed %d turn %d phase %s: %d tokens allowed, want %d", seed, turn, sb.Phase(), a.Count(), b.Count())
					}
					errA, errB := sa.Accept(id), sb.Accept(id)
					if (errA == nil) != (errB == nil) {
						t.Fatalf("token %q: %v, want %v", l.vocab.Pieces[id], errA, errB)
					}
					if errB != nil {
						break // a disabled name: the rest of the call is refused
					}
				}
			}
			prev = spec.Allowed
		}
	}
}

// TestDerive_Concurrent: parallel subtests share a Cache with a precompiled
// catalog, getting masks of random loaded sets (derived from each other
// while others fill their token sets) and checking each against a fresh
// Compile; run with -race.
func TestDerive_Concurrent(t *testing.T) {
	r := rand.New(rand.NewPCG(4, 4))
	cat := catalog(r, 30)
	ix := syntheticVocab(r, Hermes(), cat)
	c := &Cache{Max: 3}
	if err := c.Precompile(ix, Spec{Format: Hermes(), Allowed: cat}); err != nil {
		t.Fatal(err)
	}
	for g := range 4 {
		t.Run(fmt.Sprint(g), func(t *testing.T) {
			t.Parallel()
			r := rand.New(rand.NewPCG(uint64(g), 5))
			var prev []string
			for range 12 {
				spec := randomSpec(r, Hermes(), cat, prev)
				spec.Mode = ModeAuto
				want, werr := Compile(ix, spec)
				got, gerr := c.Get(ix, spec)
				if werr != nil || gerr != nil {
					t.Fatalf("err %v / %v", gerr, werr)
				}
				sameMask(t, got, want, 300, r)
				prev = spec.Allowed
			}
		})
	}
}

func TestPrecompile_DerivesKeysBySetAndKeepsFewBases(t *testing.T) {
	r := rand.New(rand.NewPCG(8, 8))
	cat := catalog(r, 20)
	ix := syntheticVocab(r, Hermes(), cat)
	var c Cache
	if err := c.Precompile(ix, Spec{Format: Hermes(), Allowed: cat}); err != nil {
		t.Fatal(err)
	}
	c.Precompile(ix, Spec{Format: Hermes(), Allowed: cat}) // kept already: nothing
	if len(c.bases) != 1 {
		t.Fatalf("%d bases", len(c.bases))
	}
	base := c.bases[0]
	a, _ := c.Get(ix, Spec{Format: Hermes(), Allowed: []string{cat[3], cat[1]}})
	b, _ := c.Get(ix, Spec{Format: Hermes(), Allowed: []string{cat[1], cat[3], cat[1]}})
	if a.u != base.u || a != b {
		t.Error("a loaded set of the catalog, in any order, must be one derived mask")
	}
	if o, _ := c.Get(ix, Spec{Format: Hermes(), Allowed: []string{cat[1], "not_in_catalog"}}); o.u == base.u {
		t.Error("a name outside the catalog must be compiled")
	}
	if _, err := c.Get(ix, Spec{Format: Hermes(), Allowed: []string{cat[1]}, Mode: ModeSpecified, Namespace: "\x00"}); err == nil {
		t.Error("mode specified with no name in the namespace must be an error, as Compile's")
	}
	if err := c.Precompile(ix, Spec{Format: Hermes(), Allowed: []string{`bad"name`}}); err == nil {
		t.Error("a name that cannot be masked must fail Precompile")
	}
	for i := range maxBases + 2 {
		c.Precompile(ix, Spec{Format: Hermes(), Allowed: cat[i:]})
	}
	if len(c.bases) != maxBases || !slices.Equal(c.bases[0].u.names, cat[maxBases+1:]) {
		t.Errorf("%d bases kept, newest first", len(c.bases))
	}
}
