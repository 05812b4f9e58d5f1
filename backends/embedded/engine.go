//go:build llamacpp

package embedded

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/maskgate/maskgate/backends"
	"github.com/maskgate/maskgate/backends/oai"
	"github.com/maskgate/maskgate/backends/toolcall"
)

// slot is one llama.cpp sequence and the tokens its KV cache holds, in order.
type slot struct {
	id     int
	tokens []int
	used   uint64
}

// result is how a request's generation ended.
type result struct {
	prompt, cached, completion int
	finish                     string
	text                       *textFilter
	format                     string // toolcall's name for the tail's calls
}

// run serves one request on the worker goroutine.
func (b *Backend) run(j *job) {
	res, err := b.generate(j)
	if c, ok := j.mask.(interface{ Close() }); ok {
		c.Close()
	}
	if err != nil {
		j.fail(engineError(j, err))
		return
	}
	j.finish(res)
}

// engineError is what a client sees of a failed generation: the request's own end as
// it is, and a failure of the engine (a decode that failed, a sampler with nothing to
// pick) as a 502 naming it, not as a bug of the gateway.
func engineError(j *job, err error) error {
	var be *backends.Error
	if j.ctx.Err() != nil || errors.As(err, &be) {
		return err
	}
	return &backends.Error{Status: http.StatusBadGateway, Type: "upstream_error", Code: "engine_failed",
		Message: "the embedded engine failed: " + err.Error(), Err: err}
}

func (b *Backend) generate(j *job) (*result, error) {
	if err := j.ctx.Err(); err != nil {
		return nil, fmt.Errorf("embedded: %w", context.Cause(j.ctx))
	}
	s, cached := b.pickSlot(j.prompt)
	if err := b.decode(j.ctx, s, j.prompt[cached:]); err != nil {
		return nil, err
	}
	f := &textFilter{stops: j.req.stops}
	if j.req.tools || b.format.parse == toolcall.Harmony { // harmony: channels to read apart, calls or not
		f.trigger = b.format.marker
	}
	res := &result{prompt: len(j.prompt), cached: cached, text: f, format: b.format.parse}
	smp := newSampler(j.req.sampling, b.vocab)
	logits := b.lc.GetLogitsIth(b.batch.NumTokens() - 1)
	if !j.started() {
		return nil, fmt.Errorf("embedded: %w", context.Cause(j.ctx))
	}
	for {
		if err := j.ctx.Err(); err != nil {
			return nil, fmt.Errorf("embedded: %w", context.Cause(j.ctx))
		}
		tok, err := smp.sample(logits, j.mask)
		if err != nil {
			return nil, fmt.Errorf("embedded: sample: %w", err)
		}
		if j.mask != nil {
			if err := j.mask.Accept(tok); err != nil {
				return nil, fmt.Errorf("embedded: mask rejected token %d: %w", tok, err)
			}
		}
		if b.model.TokenIsEog(tok) {
			res.finish = oai.FinishStop
			break
		}
		res.completion++
		out, stop := f.push(b.model.TokenToPiece(tok))
		if out != "" && !j.content(out) {
			return nil, fmt.Errorf("embedded: %w", context.Cause(j.ctx))
		}
		if stop {
			res.finish = oai.FinishStop
			break
		}
		if (j.req.maxTokens > 0 && res.completion >= j.req.maxTokens) || len(s.tokens) >= b.opt.NumCtx {
			res.finish = oai.FinishLength
			break
		}
		if err := b.decode(j.ctx, s, []int{tok}); err != nil {
			return nil, err
		}
		logits = b.lc.GetLogitsIth(0)
	}
	if out := f.flush(); out != "" && !j.content(out) {
		return nil, fmt.Errorf("embedded: %w", context.Cause(j.ctx))
	}
	return res, nil
}

// pickSlot chooses the slot sharing the longest prefix with prompt (the least recently
// used among equals), trims its cache to that prefix and returns how many tokens it kept.
// At least one prompt token is left to decode, for the logits of the next one.
func (b *Backend) pickSlot(prompt []int) (*slot, int) {
	var best *slot
	bestN := -1
	for _, s := range b.slots {
		n := commonPrefix(s.tokens, prompt)
		if n > bestN || (n == bestN && s.used < best.used) {
			best, bestN = s, n
		}
	}
	b.clock++
	best.used = b.clock
	n := min(bestN, len(prompt)-1)
	if !b.lc.KvCacheSeqRm(best.id, n, -1) {
		// A cache that cannot drop a partial range (recurrent models) starts over.
		b.lc.KvCacheSeqRm(best.id, 0, -1)
		n = 0
	}
	best.tokens = best.tokens[:n]
	return best, n
}

// decode evaluates tokens after the slot's cached ones, batchSize at a time, with logits
// for the last one only. It checks ctx before every llama_decode call.
func (b *Backend) decode(ctx context.Context, s *slot, tokens []int) error {
	for start := 0; start < len(tokens); start += batchSize {
		if ctx.Err() != nil {
			return fmt.Errorf("embedded: %w", context.Cause(ctx))
		}
		chunk := tokens[start:min(start+batchSize, len(tokens))]
		last := start+len(chunk) == len(tokens)
		b.batch.Clear()
		for i, t := range chunk {
			b.batch.Add(t, nil, len(s.tokens)+i, last && i == len(chunk)-1, s.id)
		}
		if err := b.lc.Decode(b.batch); err != nil {
			b.lc.KvCacheSeqRm(s.id, len(s.tokens), -1)
			return fmt.Errorf("embedded: llama_decode at position %d of slot %d: %w", len(s.tokens), s.id, err)
		}
		s.tokens = append(s.tokens, chunk...)
	}
	return nil
}

func commonPrefix(a, b []int) int {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	return n
}
