package masking

import (
	"context"
	"encoding/json"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/maskgate/maskgate/bench/tinymodel"
)

// Special tokens appended to the Llama 3.2 vocabulary, as a Hermes-format
// fine-tune adds them.
const (
	tokEOT = iota
	tokToolCall
	tokToolCallEnd
	nSpecial
)

type llama struct {
	ix       *Index
	vocab    SliceVocab
	base     int // first added special id
	loadErr  error
	toolCall int
	endCall  int
}

var (
	llamaOnce sync.Once
	llamaV    llama
)

// gpt2Bytes is the inverse of GPT-2's bytes_to_unicode: the rune each byte
// is written as in byte-level BPE vocabularies.
func gpt2Bytes() map[rune]byte {
	m := make(map[rune]byte, 256)
	n := 0
	for b := 0; b < 256; b++ {
		if (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF) {
			m[rune(b)] = byte(b)
		} else {
			m[rune(256+n)] = byte(b)
			n++
		}
	}
	return m
}

// loadLlama reads the Llama 3.2 vocabulary from the Ollama module go.mod requires,
// downloading the module when the cache lacks it, and fails the test when it cannot:
// these tests are part of the suite, never skipped.
func loadLlama(t testing.TB) *llama {
	t.Helper()
	llamaOnce.Do(func() {
		dir, err := tinymodel.OllamaTokenizerDir(context.Background())
		if err != nil {
			llamaV.loadErr = err
			return
		}
		raw, err := os.ReadFile(filepath.Join(dir, "encoder.json"))
		if err != nil {
			llamaV.loadErr = err
			return
		}
		var enc map[string]int
		if err := json.Unmarshal(raw, &enc); err != nil {
			llamaV.loadErr = err
			return
		}
		dec := gpt2Bytes()
		pieces := make([][]byte, len(enc)+nSpecial)
		for s, id := range enc {
			var b []byte
			for _, r := range s {
				c, ok := dec[r]
				if !ok {
					llamaV.loadErr = &json.UnsupportedValueError{Str: s}
					return
				}
				b = append(b, c)
			}
			pieces[id] = b
		}
		base := len(enc)
		pieces[base+tokEOT] = []byte("<|eot_id|>")
		pieces[base+tokToolCall] = []byte("<tool_call>")
		pieces[base+tokToolCallEnd] = []byte("</tool_call>")
		v := SliceVocab{Pieces: pieces, Special: map[int]bool{base + tokEOT: true, base + tokToolCall: true, base + tokToolCallEnd: true}}
		ix, err := NewIndex(v)
		if err != nil {
			llamaV.loadErr = err
			return
		}
		llamaV = llama{ix: ix, vocab: v, base: base, toolCall: base + tokToolCall, endCall: base + tokToolCallEnd}
	})
	if llamaV.loadErr != nil {
		t.Fatalf("Llama 3.2 vocabulary: %v", llamaV.loadErr)
	}
	return &llamaV
}

// tokenize splits text into ordinary tokens, at each position choosing among
// all vocabulary tokens that match there: the longest if r is nil, else a
// random one (favouring long ones), so that token boundaries fall everywhere.
func (l *llama) tokenize(text string, r *rand.Rand) []int {
	t := l.ix.trie
	var out []int
	for i := 0; i < len(text); {
		var cands []int32 // last match is the longest
		var lens []int
		v := int32(0)
		for j := i; j < len(text); j++ {
			if v = t.child(v, text[j]); v < 0 {
				break
			}
			if t.leaf(v) {
				cands = append(cands, t.order[t.leafLo[v]])
				lens = append(lens, j+1-i)
			}
		}
		k := len(cands) - 1
		if r != nil && r.IntN(3) == 0 {
			k = r.IntN(len(cands))
		}
		out = append(out, int(cands[k]))
		i += lens[k]
	}
	return out
}

// catalog makes n distinct names with the shapes that break naive masks:
// shared prefixes, names that are prefixes of others, 64-byte names, unicode.
func catalog(r *rand.Rand, n int) []string {
	words := []string{"get", "file", "files", "git", "commit", "config", "list", "search", "web", "browser", "read", "write", "user", "db", "query", "ß", "日本", "émoji😀", "x"}
	seps := []string{"_", ".", "-", "", "__"}
	seen := map[string]bool{}
	var out []string
	add := func(s string) {
		if s != "" && len(s) <= 64 && utf8.ValidString(s) && !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	for len(out) < n {
		switch k := r.IntN(10); {
		case k < 5 || len(out) == 0:
			parts := 1 + r.IntN(4)
			var b strings.Builder
			for p := range parts {
				if p > 0 {
					b.WriteString(seps[r.IntN(len(seps))])
				}
				b.WriteString(words[r.IntN(len(words))])
			}
			add(b.String())
		case k < 7: // a longer name with this one as prefix
			add(out[r.IntN(len(out))] + []string{"s", "_v2", ".x", "é"}[r.IntN(4)])
		case k < 8: // a shorter one that another extends
			s := out[r.IntN(len(out))]
			for l := len(s) - 1; l > 0; l-- {
				if utf8.ValidString(s[:l]) {
					add(s[:l])
					break
				}
			}
		case k < 9: // 64 bytes exactly
			s := out[r.IntN(len(out))] + strings.Repeat("z", 64)
			add(s[:64])
		default:
			add(words[r.IntN(len(words))] + string(rune('a'+r.IntN(26))) + string(rune('0'+r.IntN(10))))
		}
	}
	return out
}

// callText is the Hermes call after the trigger.
func callText(name string) string {
	return "\n{\"name\": \"" + name + "\", \"arguments\": {}}\n"
}
