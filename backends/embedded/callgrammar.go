//go:build llamacpp

package embedded

import (
	"errors"
	"fmt"
	"math"

	"github.com/ollama/ollama/llama"

	"github.com/maskgate/maskgate/masking"
)

// grammarVocab is the model's vocabulary as llama.cpp's grammar sampler reads it
// (llama.NewGrammar), built once per backend: ids 0…n-1 are the model's tokens with the
// pieces the token mask reads too (special tokens as their text, so a marker such as
// </tool_call> may come as its one token); ids n+1…n+255 are one byte each, which feed a
// grammar the bytes of a token that begins a call after its trigger; the ids after them
// are the distinct two-byte beginnings of the longer pieces. End-of-generation tokens are
// allowed by the grammar only once the call is complete.
//
// The prefixes let a step ask the grammar about few tokens instead of all of them: a
// piece the grammar refuses after its first byte, or its first two, is refused whole (it
// checks a piece character by character, and an incomplete UTF-8 sequence as what it
// could still become), so the bytes come first, then the two-byte beginnings of the
// allowed bytes, then only the longer tokens whose beginning it allowed. Pieces of one
// or two bytes get the verdict of their own prefix. Where most bytes are allowed (inside
// a string) every token is asked at once instead.
type grammarVocab struct {
	ids    []uint32
	pieces []string
	eog    []int32
	n      int // the model's vocabulary size; byte b is token n+b

	all    []int32      // the model's tokens, 0…n-1
	byByte [256][]int32 // one-byte pieces, by byte
	pairs  [256][]int32 // two-byte prefix ids, by first byte
	byPair [][]int32    // two-byte pieces, by prefix id - pairBase
	longer [][]int32    // longer pieces, by prefix id - pairBase
}

func (v *grammarVocab) pairBase() int { return v.n + 256 }

func newGrammarVocab(pieces []string, eog func(int) bool) *grammarVocab {
	n := len(pieces)
	v := &grammarVocab{ids: make([]uint32, 0, n+255), pieces: make([]string, 0, n+255), n: n, all: make([]int32, n)}
	pair := map[string]int32{}
	for id, p := range pieces {
		v.all[id] = int32(id)
		v.ids = append(v.ids, uint32(id))
		v.pieces = append(v.pieces, p)
		if eog(id) {
			v.eog = append(v.eog, int32(id))
			continue
		}
		switch {
		case len(p) == 0 || p[0] == 0: // refused by llama.cpp whatever the grammar
		case len(p) == 1:
			v.byByte[p[0]] = append(v.byByte[p[0]], int32(id))
		default:
			k, ok := pair[p[:2]]
			if !ok {
				k = int32(len(v.byPair))
				pair[p[:2]] = k
				v.byPair = append(v.byPair, nil)
				v.longer = append(v.longer, nil)
				v.pairs[p[0]] = append(v.pairs[p[0]], int32(v.pairBase())+k)
			}
			if len(p) == 2 {
				v.byPair[k] = append(v.byPair[k], int32(id))
			} else {
				v.longer[k] = append(v.longer[k], int32(id))
			}
		}
	}
	for b := 1; b < 256; b++ {
		v.ids = append(v.ids, uint32(n+b))
		v.pieces = append(v.pieces, string([]byte{byte(b)}))
	}
	// Id n (byte 0) is never a piece: llama.cpp refuses pieces that start with NUL.
	v.ids = append(v.ids, uint32(n))
	v.pieces = append(v.pieces, "")
	prefixes := make([]string, len(pair))
	for s, k := range pair {
		prefixes[k] = s
	}
	for k, s := range prefixes {
		v.ids = append(v.ids, uint32(v.pairBase()+k))
		v.pieces = append(v.pieces, s)
	}
	return v
}

// callMasker is the Masker of a request with tools. The positional token mask
// (masking.State) watches free text for the trigger and holds the name to the allowed
// ones; from the trigger on, llama.cpp's grammar sampler follows the call (masking's
// CallGBNF: each allowed name paired with its tool's arguments rule, then the call's
// closing text), so the arguments follow the tool's JSON Schema. While the mask is in
// the name, a token must satisfy both, and the grammar is applied to the mask's few
// allowed tokens only; after the name the grammar alone decides, over the whole
// vocabulary. Once the call is complete the mask takes over again: free text where calls
// are optional, end of generation only where a call was required (or parallel_tool_calls
// is false), so a forced call is one whole call.
//
// A token that completes the call and carries more text is refused: a call ends at a
// token boundary. A token that would begin a call and run past its name in one piece is
// an error (no such token is known in real vocabularies): the mask cannot ask the grammar
// before the call exists.
type callMasker struct {
	st      masking.State
	oneCall bool // one call and the end: a call was required, or parallel calls refused
	v       *grammarVocab
	grammar string
	pieces  func(int) string

	g    *llama.Grammar // within a call
	done bool           // a required call is complete: only end of generation
	bits *masking.Bitset
	tds  []llama.TokenData
	ids  []int32
	out  []int32
}

func newCallMasker(st masking.State, spec masking.Spec, v *grammarVocab, grammar string, vocab int, piece func(int) string) *callMasker {
	return &callMasker{st: st, oneCall: spec.Mode != masking.ModeAuto || spec.OneCall, v: v, grammar: grammar, pieces: piece, bits: masking.NewBitset(vocab)}
}

func (m *callMasker) Allowed(dst []uint64) bool {
	switch {
	case m.done:
		for _, id := range m.v.eog {
			dst[id/64] |= 1 << (uint(id) % 64)
		}
		return true
	case m.g == nil:
		set := m.st.Allowed()
		if set.All() {
			return false
		}
		set.CopyTo(m.bits)
		copy(dst, m.bits.Words())
		return true
	case m.st.Phase() == masking.PhaseName:
		m.ids = m.st.Allowed().AppendIDs(m.ids[:0])
		m.apply(m.ids, dst)
		return true
	}
	m.allowedByPrefix(dst)
	return true
}

// allowedByPrefix sets in dst every token the grammar allows next, asking it about the
// bytes, then the two-byte beginnings of the allowed bytes, then the longer tokens that
// begin with an allowed pair (see grammarVocab).
func (m *callMasker) allowedByPrefix(dst []uint64) {
	v := m.v
	set := func(ids []int32) {
		for _, id := range ids {
			dst[id/64] |= 1 << (uint(id) % 64)
		}
	}
	m.ids = m.ids[:0]
	for b := 1; b < 256; b++ {
		m.ids = append(m.ids, int32(v.n+b))
	}
	bytes := m.grammarAllows(m.ids)
	if len(bytes) > 128 {
		// Most bytes go (inside a string): the prefixes would only add work.
		m.apply(v.all, dst)
		return
	}
	var pairs []int32
	for _, id := range bytes {
		b := id - int32(v.n)
		set(v.byByte[b])
		pairs = append(pairs, v.pairs[b]...)
	}
	m.ids = m.ids[:0]
	for _, id := range m.grammarAllows(pairs) {
		k := id - int32(v.pairBase())
		set(v.byPair[k])
		m.ids = append(m.ids, v.longer[k]...)
	}
	set(m.grammarAllows(m.ids))
}

// grammarAllows returns the ids of the grammar allows next, in a buffer reused by the
// next call.
func (m *callMasker) grammarAllows(ids []int32) []int32 {
	tds := m.tds[:0]
	for _, id := range ids {
		tds = append(tds, llama.TokenData{ID: id})
	}
	m.tds = tds
	if len(tds) == 0 {
		return nil
	}
	m.g.Apply(tds)
	out := m.out[:0]
	for _, td := range tds {
		if !math.IsInf(float64(td.Logit), -1) {
			out = append(out, td.ID)
		}
	}
	m.out = out
	return out
}

// apply sets in dst the tokens of ids the grammar allows next.
func (m *callMasker) apply(ids []int32, dst []uint64) {
	tds := m.tds[:0]
	for _, id := range ids {
		tds = append(tds, llama.TokenData{ID: id})
	}
	m.tds = tds
	if len(tds) == 0 {
		return
	}
	m.g.Apply(tds)
	for _, td := range tds {
		if !math.IsInf(float64(td.Logit), -1) {
			dst[td.ID/64] |= 1 << (uint(td.ID) % 64)
		}
	}
}

// Costly says that Allowed applies the grammar to the whole vocabulary at this step.
func (m *callMasker) Costly() bool {
	return m.g != nil && !m.done && m.st.Phase() != masking.PhaseName
}

// Allows says whether tok may come next; the sampler asks it only when Costly.
func (m *callMasker) Allows(tok int) bool {
	return tok >= 0 && tok < m.v.n && m.allows(int32(tok))
}

// allows says whether the grammar takes token id next.
func (m *callMasker) allows(id int32) bool {
	one := []llama.TokenData{{ID: id}}
	m.g.Apply(one)
	return !math.IsInf(float64(one[0].Logit), -1)
}

var errNoGrammar = errors.New("llama.cpp refused the call grammar")

func (m *callMasker) Accept(tok int) error {
	switch {
	case m.done:
		return nil
	case m.g == nil:
		after, err := m.st.AcceptCall(tok)
		if err != nil || after < 0 {
			return err
		}
		if m.g = llama.NewGrammar(m.grammar, m.v.ids, m.v.pieces, m.v.eog); m.g == nil {
			return errNoGrammar
		}
		p := m.pieces(tok)
		for _, c := range []byte(p[len(p)-after:]) {
			id := int32(m.v.n + int(c))
			if c == 0 || !m.allows(id) {
				return fmt.Errorf("token %d (%q) starts a call and runs past what the call grammar allows", tok, p)
			}
			m.g.Accept(id)
		}
	default:
		if m.st.Phase() == masking.PhaseName {
			if err := m.st.Accept(tok); err != nil {
				return err
			}
		}
		// Allowed applied the grammar to tok, so llama.cpp takes it.
		m.g.Accept(int32(tok))
	}
	if len(m.v.eog) > 0 && m.allows(m.v.eog[0]) {
		m.endCall()
	}
	return nil
}

// endCall closes a complete call: free text again, or only the end where a call was
// required or parallel calls refused.
func (m *callMasker) endCall() {
	m.g.Free()
	m.g = nil
	if m.oneCall {
		m.done = true
	} else {
		m.st.Reset()
	}
}

// Close frees the grammar of a call cut short.
func (m *callMasker) Close() {
	if m.g != nil {
		m.g.Free()
		m.g = nil
	}
}
