package masking

import (
	"errors"
	"fmt"
)

// Vocab is a model's vocabulary as the mask sees it. It is consumed once, by
// [NewIndex].
type Vocab interface {
	// Len is the number of token ids, 0..Len()-1.
	Len() int
	// Piece is the exact bytes the token decodes to (byte-level BPE already
	// mapped back to bytes; a byte-fallback token is its one byte). A piece
	// may be a partial UTF-8 sequence.
	Piece(id int) []byte
	// IsSpecial reports a control token that the tokenizer never produces
	// from text. Special tokens are atomic: they are never matched byte by
	// byte, only as a whole against the format's trigger and end text.
	IsSpecial(id int) bool
}

// SliceVocab is a Vocab held in memory.
type SliceVocab struct {
	// Pieces[id] is the decoded bytes of token id.
	Pieces [][]byte
	// Special holds the ids of special tokens. If nil, no token is special.
	Special map[int]bool
}

var _ Vocab = SliceVocab{}

func (v SliceVocab) Len() int              { return len(v.Pieces) }
func (v SliceVocab) Piece(id int) []byte   { return v.Pieces[id] }
func (v SliceVocab) IsSpecial(id int) bool { return v.Special[id] }

// Index is a vocabulary prepared for masking: a byte trie of the ordinary
// tokens' pieces. Build one per loaded model and share it; its pointer is the
// vocabulary's identity in [Cache]. It is immutable and safe for concurrent use.
type Index struct {
	n        int
	pieces   [][]byte // sub-slices of one buffer
	special  []bool
	trie     *trie   // ordinary tokens with a non-empty piece; order holds token ids
	specials []int32 // special tokens
	empties  []int32 // ordinary tokens with an empty piece
}

// NewIndex copies v into an Index.
func NewIndex(v Vocab) (*Index, error) {
	n := v.Len()
	if n <= 0 {
		return nil, errors.New("masking: empty vocabulary")
	}
	if n > 1<<30 {
		return nil, fmt.Errorf("masking: vocabulary of %d tokens is too large", n)
	}
	ix := &Index{n: n, pieces: make([][]byte, n), special: make([]bool, n)}
	total := 0
	for id := range n {
		total += len(v.Piece(id))
	}
	buf := make([]byte, 0, total)
	ordinary := make([]int32, 0, n)
	for id := range n {
		p := v.Piece(id)
		buf = append(buf, p...)
		ix.pieces[id] = buf[len(buf)-len(p) : len(buf) : len(buf)]
		switch {
		case v.IsSpecial(id):
			ix.special[id] = true
			ix.specials = append(ix.specials, int32(id))
		case len(p) == 0:
			ix.empties = append(ix.empties, int32(id))
		default:
			ordinary = append(ordinary, int32(id))
		}
	}
	ix.trie = buildTrie(ix.pieces, ordinary)
	return ix, nil
}

// Len is the vocabulary size.
func (ix *Index) Len() int { return ix.n }
