// Package kvcache owns what the gateway knows about engines' prefix caches: stable
// rendering of prompts (so that the same conversation yields the same bytes, turn after
// turn), cache accounting (prompt and cached tokens per request, as reported by the engine
// or estimated here, and labelled as such), and routing a request to the replica most
// likely to hold its prefix.
//
// It must never pretend to know what it only estimates: an estimate is always returned as
// one, so that callers can mark it (X-Maskgate-Cache: estimated). It keeps no package-level
// state; every estimator or ledger is a value its owner creates, bounds and shares.
package kvcache
