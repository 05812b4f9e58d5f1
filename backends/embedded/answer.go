//go:build llamacpp

package embedded

import (
	"slices"

	"github.com/ollama/ollama/llama"

	"github.com/maskgate/maskgate/backends"
	"github.com/maskgate/maskgate/backends/chatlayer"
	"github.com/maskgate/maskgate/masking"
)

// maskFor is a request's Masker. With a structured output (response_format,
// read by chatlayer.Format: a schema keyword the grammar cannot hold is a 400) the whole
// output is held by llama.cpp's grammar sampler from its first token: the answer's
// grammar where no call may come, the allowed calls or the answer (masking's
// GBNFOrAnswer, one root) where calls are optional; a required call keeps the call mask,
// which admits calls only. Without one, toolMask's.
func (b *Backend) maskFor(req *backends.Request, r *request) (Masker, error) {
	answer, err := chatlayer.Format(req.Body)
	if err != nil {
		return nil, err
	}
	if answer == nil {
		return b.toolMask(req, r)
	}
	grammar := answer.GBNF()
	if len(r.chat.Tools) > 0 && r.tools {
		if !b.format.constrains {
			return nil, backends.BadRequest("response_format", "the model's tool-call format (%s) has no grammar here, so the answer cannot be held to response_format while tools may be called; send tool_choice \"none\" or leave response_format out", b.format.parse)
		}
		spec, err := toolSpec(req, r, b.format.mask)
		if err != nil {
			return nil, err
		}
		if spec.Mode != masking.ModeAuto {
			return b.toolMask(req, r)
		}
		ix, err := b.maskIndex()
		if err != nil {
			return nil, err
		}
		cat, err := b.toolCatalog(req, r, ix)
		if err != nil {
			return nil, err
		}
		g, err := cat.GBNFOrAnswer(spec, answer)
		if err != nil {
			return nil, badRequest("tools", err.Error())
		}
		grammar = g.Grammar
	} else if _, err := b.maskIndex(); err != nil {
		return nil, err
	}
	c := &callMasker{v: b.masks.gv, grammar: grammar, pieces: func(id int) string { return b.masks.pieces[id] }}
	if c.g = llama.NewGrammar(grammar, c.v.ids, c.v.pieces, c.v.eog); c.g == nil {
		return nil, errNoGrammar
	}
	return &answerMasker{c: c}, nil
}

// answerMasker holds the whole output to one grammar (callMasker's machinery with the
// grammar begun at the first token): at each step the tokens the grammar allows, the
// end of generation once it is complete.
type answerMasker struct {
	c *callMasker
}

func (m *answerMasker) Allowed(dst []uint64) bool {
	m.c.allowedByPrefix(dst)
	if eog := m.c.v.eog; len(eog) > 0 && m.c.allows(eog[0]) {
		for _, id := range eog {
			dst[id/64] |= 1 << (uint(id) % 64)
		}
	}
	return true
}

// Costly: the grammar is asked about the vocabulary at every step.
func (m *answerMasker) Costly() bool { return true }

func (m *answerMasker) Allows(tok int) bool { return m.c.Allows(tok) }

func (m *answerMasker) Accept(tok int) error {
	if slices.Contains(m.c.v.eog, int32(tok)) {
		return nil // the end, which Allowed gave only once the grammar is complete
	}
	m.c.g.Accept(int32(tok))
	return nil
}

func (m *answerMasker) Close() { m.c.Close() }

// thinkClose is what closes a reasoning block the prompt opened, as templates write an
// empty one.
const thinkClose = chatlayer.CloseTag + "\n\n"

// closeThink restarts the grammar so that the output first closes the reasoning block
// the prompt opened (a thinking template): the answer then comes as content, not as
// reasoning. Called before the first token.
func (m *answerMasker) closeThink() error {
	m.c.Close()
	m.c.grammar = masking.PrefixRoot(m.c.grammar, thinkClose)
	if m.c.g = llama.NewGrammar(m.c.grammar, m.c.v.ids, m.c.v.pieces, m.c.v.eog); m.c.g == nil {
		return errNoGrammar
	}
	return nil
}
