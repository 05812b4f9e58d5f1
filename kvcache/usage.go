package kvcache

// Where a request's cached-token count came from: the values of Usage.Source and of the
// X-Maskgate-Cache header.
const (
	// SourceReported: the engine said how many prompt tokens it reused (llama.cpp
	// timings.cache_n, vLLM / OpenAI / SGLang cached_tokens, Anthropic
	// cache_read_input_tokens).
	SourceReported = "reported"
	// SourceEstimated: the engine did not say; the count is this package's model of its
	// cache (PrefixEstimator, BlockCache).
	SourceEstimated = "estimated"
	// SourceUnknown: neither the engine nor a model gave a count; Cached is zero.
	SourceUnknown = "unknown"
)

// NotKnown marks a count passed to Account that nobody knows.
const NotKnown = -1

// Usage is one request's prompt accounting.
type Usage struct {
	// Prompt is every prompt token of the request, cached ones included.
	Prompt int
	// Cached is how many of them the engine reused from its prefix cache; at most Prompt.
	Cached int
	// Computed is Prompt − Cached: the tokens the engine prefilled. With Source unknown
	// it is Prompt, an upper bound.
	Computed int
	// Source is SourceReported, SourceEstimated or SourceUnknown.
	Source string
}

// Account builds a request's Usage from the prompt token count and, for the cached count,
// the engine's report when there is one (reported ≥ 0), else this package's estimate
// (estimated ≥ 0), else nothing. Pass NotKnown (or any negative number) for what is
// missing; a negative prompt counts as zero.
//
// prompt must include the cached tokens. Most engines report it that way (OpenAI-style
// usage.prompt_tokens); llama.cpp's /completion does not: its prompt total is
// timings.prompt_n + timings.cache_n.
//
// A cached count above prompt is clamped to prompt rather than rejected: it happens when
// an engine counts differently from the caller (a template's tokens, a stale estimate),
// and a hit rate above one or a negative Computed would poison every counter summed from
// it. Callers that want to notice it compare Usage.Cached with what they passed.
func Account(prompt, reported, estimated int) Usage {
	u := Usage{Prompt: max(prompt, 0), Source: SourceUnknown}
	switch {
	case reported >= 0:
		u.Cached, u.Source = reported, SourceReported
	case estimated >= 0:
		u.Cached, u.Source = estimated, SourceEstimated
	}
	u.Cached = min(u.Cached, u.Prompt)
	u.Computed = u.Prompt - u.Cached
	return u
}
