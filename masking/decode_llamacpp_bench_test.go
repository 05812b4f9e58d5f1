//go:build llamacpp

package masking

import (
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	llamacpp "github.com/ollama/ollama/llama"
)

// BenchmarkGrammarDecode is what llama.cpp's grammar engine adds to a decoding step under
// the gateway's required-mode tool-call grammar (Hermes), per token, with the Llama 3.2
// vocabulary (128,259 tokens) and 5 to 500 allowed tools of real catalogs
// (bench/retrieval's MCP servers and its 303-tool catalog; past their 449 distinct
// tools, renamed copies), when the model's samples are what the grammar allows (a
// trained model writing a call): llama.cpp checks the sampled token alone and advances,
// so a token costs Apply over one candidate and Accept. The call decoded is a
// grammar-valid call to the last allowed tool, found by walking the grammar byte by byte
// (shortest choices first), tokenized longest-match. It reports µs/token of grammar
// work, to set against an unconstrained step (1.45 ms for the tiny model on llama-server
// here, 691 tokens/s), and worst-µs, the slowest token's (the one that opens the name,
// where the names' alternatives open).
//
// Each size runs twice, one after the other in this process: names=tree is the
// gateway's grammar (the names as a radix tree), names=flat the same grammar with the
// names as one flat alternation, the form the tree replaced (flatGBNF), decoding the
// same tokens. Read the two against each other, from the same run.
//
// A sample the grammar refuses (a random-weight model, nearly every token) makes
// llama.cpp run the grammar over the whole vocabulary before it samples again; that
// case is not timed here, since through the Ollama module's binding it measures the
// binding's copies more than llama.cpp.
//
//	go test -tags llamacpp -run '^$' -bench GrammarDecode -benchtime 5x ./masking
func BenchmarkGrammarDecode(b *testing.B) {
	l := loadLlama(b)
	names, params := decodeCatalog(b)
	ids := make([]uint32, len(l.vocab.Pieces))
	pieces := make([]string, len(l.vocab.Pieces))
	for i, p := range l.vocab.Pieces {
		ids[i], pieces[i] = uint32(i), string(p)
	}
	eog := []int32{int32(l.base + tokEOT)}
	for _, n := range []int{5, 50, 200, 500} {
		spec := Spec{Format: Hermes(), Allowed: names[:n], Mode: ModeRequired}
		tree, err := GBNF(spec, params)
		if err != nil {
			b.Fatal(err)
		}
		flat, err := flatGBNF(spec, params)
		if err != nil {
			b.Fatal(err)
		}
		text := validCall(b, tree.Grammar, names[n-1])
		toks := l.tokenize(text, nil)
		for _, form := range []struct {
			name    string
			grammar string
		}{{"flat", flat.Grammar}, {"tree", tree.Grammar}} {
			b.Run(fmt.Sprintf("tools=%d/names=%s", n, form.name), func(b *testing.B) {
				cand := make([]llamacpp.TokenData, 1)
				spent := make([]time.Duration, len(toks)) // per token, over the loops
				for b.Loop() {
					gr := llamacpp.NewGrammar(form.grammar, ids, pieces, eog)
					if gr == nil {
						b.Fatal("llama.cpp refused the grammar")
					}
					for i, id := range toks {
						start := time.Now()
						cand[0] = llamacpp.TokenData{ID: int32(id)}
						gr.Apply(cand)
						if math.IsInf(float64(cand[0].Logit), -1) {
							b.Fatalf("the grammar refused token %d (%q) of a valid call", id, pieces[id])
						}
						gr.Accept(int32(id))
						spent[i] += time.Since(start)
					}
					gr.Free()
				}
				var total, worst time.Duration
				for _, d := range spent {
					total += d
					worst = max(worst, d)
				}
				b.ReportMetric(float64(total.Nanoseconds())/1e3/float64(b.N*len(toks)), "µs/token")
				b.ReportMetric(float64(worst.Nanoseconds())/1e3/float64(b.N), "worst-µs")
				b.ReportMetric(float64(len(form.grammar)), "grammar-bytes")
				b.ReportMetric(float64(len(toks)), "tokens")
				b.ReportMetric(0, "ns/op")
			})
		}
	}
}

// validCall walks grammar from the start of a call to tool, byte by byte, choosing at
// each step the first allowed byte of a preference order that closes what is open as
// soon as it may, and returns the text once end of generation is allowed.
func validCall(b *testing.B, grammar, tool string) string {
	b.Helper()
	e := newByteEngine()
	g := e.compile(b, grammar)
	defer g.Free()
	toks := make([]llamacpp.TokenData, len(e.ids))
	allowed := func() map[int32]bool {
		for i, x := range e.ids {
			toks[i] = llamacpp.TokenData{ID: int32(x)}
		}
		g.Apply(toks)
		m := map[int32]bool{}
		for _, td := range toks {
			if !math.IsInf(float64(td.Logit), -1) {
				m[td.ID] = true
			}
		}
		return m
	}
	var out strings.Builder
	head := "<tool_call>\n{\"name\": \"" + tool + "\", \"arguments\": "
	for i := 0; i < len(head); i++ {
		if !allowed()[int32(head[i])] {
			b.Fatalf("the grammar refuses %q at byte %d of the call's head", head, i)
		}
		g.Accept(int32(head[i]))
		out.WriteByte(head[i])
	}
	// A quote first: it closes a string, opens a key; then what closes an object or array.
	prefer := []byte("\"}]0:,")
	for out.Len() < 4096 {
		a := allowed()
		if a[eogToken] && strings.HasSuffix(out.String(), "</tool_call>") {
			return out.String()
		}
		next := int32(-1)
		for _, c := range prefer {
			if a[int32(c)] {
				next = int32(c)
				break
			}
		}
		if next < 0 {
			for c := int32(1); c < 256; c++ {
				if a[c] && c != ' ' && c != '\n' && c != '\t' && c != '\r' {
					next = c
					break
				}
			}
		}
		if next < 0 && a[int32('\n')] {
			next = '\n'
		}
		if next < 0 {
			b.Fatalf("the grammar allows nothing after %q", out.String())
		}
		g.Accept(next)
		out.WriteByte(byte(next))
	}
	b.Fatalf("no end of the call to %s within 4 KB: %q", tool, out.String())
	return ""
}
