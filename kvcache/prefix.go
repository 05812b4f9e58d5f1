package kvcache

import (
	"container/list"
	"sync"
)

// DefaultPrefixCapacity is the byte budget of a PrefixEstimator whose CapacityBytes is zero.
const DefaultPrefixCapacity = 32 << 20

// PrefixOptions configure a PrefixEstimator. The zero value of each field is its default.
type PrefixOptions struct {
	// CapacityBytes bounds the prompt bytes held, over all models; the least recently
	// remembered prompts go first. A prompt larger than the whole budget is not held.
	// If zero, DefaultPrefixCapacity.
	CapacityBytes int
	// PerModel is how many prompts are held per model, like an engine's cache slots
	// (Ollama keeps one per parallel request, OLLAMA_NUM_PARALLEL, default 1).
	// If zero, only CapacityBytes limits them.
	PerModel int
}

// PrefixEstimator estimates how much of a prompt an engine's prefix cache holds, for
// engines that reuse a shared prefix but do not say how much they reused.
//
// It models the engine's cache as the most recent prompts per model, in a canonical
// byte form the caller renders deterministically, and answers with the longest common
// byte prefix between a new prompt and any of them. Bytes are not tokens and the engine
// may have evicted what is remembered here, so the answer is an estimate and must be
// reported as one. It is safe for concurrent use.
type PrefixEstimator struct {
	opt PrefixOptions

	mu      sync.Mutex
	used    int       // bytes held
	lru     list.List // of *prefixEntry; front is the most recently remembered
	inModel map[string]int
}

type prefixEntry struct {
	model  string
	prompt []byte
}

// NewPrefixEstimator returns an empty estimator.
func NewPrefixEstimator(o PrefixOptions) *PrefixEstimator {
	if o.CapacityBytes <= 0 {
		o.CapacityBytes = DefaultPrefixCapacity
	}
	if o.PerModel < 0 {
		o.PerModel = 0
	}
	return &PrefixEstimator{opt: o, inModel: make(map[string]int)}
}

// PrefixMatch is how much of a prompt matched a remembered one, in bytes.
type PrefixMatch struct {
	// Matched is the length of the longest common prefix with a remembered prompt.
	Matched int
	// Total is the length of the prompt asked about.
	Total int
}

// Tokens scales the match to a prompt of promptTokens tokens, rounding down: the
// estimated number of cached tokens.
func (m PrefixMatch) Tokens(promptTokens int) int {
	if m.Total <= 0 || m.Matched <= 0 || promptTokens <= 0 {
		return 0
	}
	matched := min(m.Matched, m.Total)
	return int(int64(promptTokens) * int64(matched) / int64(m.Total))
}

// Estimate returns the longest common byte prefix between prompt and the prompts
// remembered for model. It does not remember prompt.
func (e *PrefixEstimator) Estimate(model string, prompt []byte) PrefixMatch {
	m := PrefixMatch{Total: len(prompt)}
	e.mu.Lock()
	defer e.mu.Unlock()
	for el := e.lru.Front(); el != nil; el = el.Next() {
		ent := el.Value.(*prefixEntry)
		if ent.model != model {
			continue
		}
		if n := commonPrefix(ent.prompt, prompt); n > m.Matched {
			m.Matched = n
			if n == len(prompt) {
				break
			}
		}
	}
	return m
}

// Remember records prompt as the most recent one the engine processed for model. A
// remembered prompt that prompt extends (or repeats) is dropped, as the engine reuses
// its slot; prompt is copied.
func (e *PrefixEstimator) Remember(model string, prompt []byte) {
	if len(prompt) == 0 || len(prompt) > e.opt.CapacityBytes {
		return
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	for el := e.lru.Front(); el != nil; {
		next := el.Next()
		ent := el.Value.(*prefixEntry)
		if ent.model == model && len(ent.prompt) <= len(prompt) && commonPrefix(ent.prompt, prompt) == len(ent.prompt) {
			e.remove(el)
		}
		el = next
	}
	e.lru.PushFront(&prefixEntry{model: model, prompt: append([]byte(nil), prompt...)})
	e.used += len(prompt)
	e.inModel[model]++
	if e.opt.PerModel > 0 && e.inModel[model] > e.opt.PerModel {
		for el := e.lru.Back(); el != nil; el = el.Prev() {
			if el.Value.(*prefixEntry).model == model {
				e.remove(el)
				break
			}
		}
	}
	for e.used > e.opt.CapacityBytes {
		e.remove(e.lru.Back())
	}
}

// Len returns how many prompts are held and their total bytes.
func (e *PrefixEstimator) Len() (prompts, bytes int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.lru.Len(), e.used
}

func (e *PrefixEstimator) remove(el *list.Element) {
	ent := e.lru.Remove(el).(*prefixEntry)
	e.used -= len(ent.prompt)
	if e.inModel[ent.model]--; e.inModel[ent.model] <= 0 {
		delete(e.inModel, ent.model)
	}
}

func commonPrefix(a, b []byte) int {
	n := min(len(a), len(b))
	for i := 0; i < n; i++ {
		if a[i] != b[i] {
			return i
		}
	}
	return n
}
