// Package tokens owns token accounting for tool catalogs and the context-budget guard: how
// many tokens one tool definition or a whole rendered catalog costs, and whether a
// request can fit a model's context window at all.
//
// # Encoding
//
// Counts use OpenAI's o200k_base BPE (GPT-4o, GPT-4.1, the o-series), from
// github.com/tiktoken-go/tokenizer, which embeds its ranks: nothing is downloaded. For
// other models every count is an estimate. o200k_base is the better of the two embedded
// modern encodings for that: its 200k-token vocabulary is closer to those of today's open
// models (Llama 3 128k, Qwen 151k, Gemma 256k) than cl100k_base's, and it tokenizes
// non-English text and code more like them. Expect counts within several percent of an
// engine's own on English and JSON, further off elsewhere; where exact counts matter, ask
// the engine (llama.cpp and vLLM /tokenize) and treat these as the fallback. Counts are of
// the JSON bytes only: a chat template adds its own wrapping around tools and messages.
//
// # Caching
//
// A profile's rendered catalog is the same bytes for every request, so its count is kept
// per catalog version (the SHA-256 of the render, as toolsearch.Catalog.Version) in a
// small bounded cache: the first request of a version pays for tokenizing it, the rest
// look it up.
//
// # Never
//
// The guard never guesses a context window: zero means unknown and nothing is refused.
// No package state beyond the tokenizer's own read-only tables.
package tokens
