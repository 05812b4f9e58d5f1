// Package kvcache owns what the gateway knows about engines' prefix caches: stable
// rendering of prompts (so that the same conversation yields the same bytes, turn after
// turn), cache accounting (prompt and cached tokens per request, as reported by the engine
// or estimated here, and labelled as such), the auto strategy's cost model, and routing a
// request to the replica most likely to hold its prefix.
//
// What is here:
//   - Account turns a request's prompt count and the engine's cached count (or, failing
//     that, an estimate) into a Usage whose Source says which it was: "reported",
//     "estimated" or "unknown", the values of X-Maskgate-Cache.
//   - PrefixEstimator models a cache by bytes, for engines that reuse a prefix but do not
//     say how much (Ollama). BlockCache models it by tokens, in vLLM's blocks (16 tokens
//     by default; 1 for llama.cpp and SGLang, which reuse any prefix length), with chained
//     block keys, LRU eviction and one namespace per model or replica.
//   - CostModel is the auto strategy: from observations of a profile's catalog and
//     sessions and an engine's prefill and decode costs (calibrated on prefill timings
//     measured on one NVIDIA H200, refitted from timings the gateway measures; see
//     H200Llama8BSamples for the measurement) it estimates each strategy's engine time
//     per session and picks the cheapest among those the backend can do, with hysteresis,
//     since each switch breaks every cached prefix of the profile. Its decisions and
//     estimates are Prometheus metrics on a Registerer its owner passes. A strategy whose
//     modelled session outgrows the engine's context window (Engine.ContextTokens,
//     configured or reported: ObserveContext) is not weighed: a 73,000-token catalog under
//     mask on a 64k context is never served, and index (the catalog's index in the
//     prompt, each load's definitions appended at the end) or remove is.
//   - Router picks a replica per request: the prefix's rendezvous home, then the thread's
//     last replica, yielding to the least loaded past SGLang-style absolute and relative
//     load thresholds; it tracks in-flight counts and health (backends/replicas uses it).
//
// Token counts are the portable measure; times come only from a cost model calibrated on
// a real-size model, never from a tiny test model's timings: on a tiny random-weight model
// attention dominates, so a long cached prompt can look slower than a short recomputed
// one, which is false for real models. The calibration is one NVIDIA H200, random-weight
// Llama-architecture models in Llama-3.1-8B and Qwen2.5-32B shapes, Hugging Face
// transformers with SDPA attention, bf16, a 2k-token conversation plus the tool catalog,
// 120 new tokens: 8B, 100 tools (17,120 prompt tokens) prefill 617 ms on a cache miss and
// 46 ms on a hit of all but the new tokens; 8B, 5 tools (2,870 tokens) 87 ms miss, 49 ms
// hit; 8B, 500 tools (77,120 tokens) 4,798 ms vs 146 ms; 32B, 100 tools 2,252 ms vs
// 94 ms. DefaultPrefill is fitted to three of the 8B figures; DefaultDecode is derived
// from the H200's memory bandwidth, not measured.
//
// It must never pretend to know what it only estimates: an estimate is always returned as
// one, so that callers can mark it (X-Maskgate-Cache: estimated). It keeps no package-level
// state; every estimator, cache, cost model or ledger is a value its owner creates, bounds
// and shares. It renders no prompts and sends no requests: the catalog's bytes are
// toolsearch's, and this package's tests hold that they are the same across runs,
// restarts, input orders and GOMAXPROCS. It never takes a label value from a request.
package kvcache
