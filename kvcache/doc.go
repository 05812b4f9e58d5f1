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
//     sessions and an engine's prefill and decode costs (calibrated on published H200
//     figures, refitted from measured timings) it estimates each strategy's engine time
//     per session and picks the cheapest among those the backend can do, with hysteresis,
//     since each switch breaks every cached prefix of the profile. Its decisions and
//     estimates are Prometheus metrics on a Registerer its owner passes.
//   - Router picks a replica per request: the prefix's rendezvous home, then the thread's
//     last replica, yielding to the least loaded past SGLang-style absolute and relative
//     load thresholds; it tracks in-flight counts and health (backends/replicas uses it).
//
// Token counts are the portable measure; times come only from a cost model calibrated on
// a real-size model, never from a tiny test model's timings (see DESIGN.md).
//
// It must never pretend to know what it only estimates: an estimate is always returned as
// one, so that callers can mark it (X-Maskgate-Cache: estimated). It keeps no package-level
// state; every estimator, cache, cost model or ledger is a value its owner creates, bounds
// and shares. It renders no prompts and sends no requests: the catalog's bytes are
// toolsearch's, and this package's tests hold that they are the same across runs,
// restarts, input orders and GOMAXPROCS. It never takes a label value from a request.
package kvcache
