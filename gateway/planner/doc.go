// Package planner plans the tools of each request the gateway runs: a request and its
// route in, a plan out (Planner.Plan), once per request, before the pipeline sends
// anything upstream.
//
// It owns the profiles (one named tool setup each, swapped as one set on reload:
// SetProfiles) and the choice of a request's profile (ProfileFor: the header where the
// key may choose, the key's, a model alias, the default); the request's catalog (the
// profile's view with the client's tools layered over it, parsed and indexed once per
// distinct array and scope: toolcache.go); the thread's loaded set, hidden exchanges
// and pins, read from and kept in the state store; the strategy (the configured one, or
// auto's Chooser, pinned per thread: strategy.go; CostChooser feeds kvcache's cost
// model: auto.go); the tools array and messages the engine sees (body.go: a whole
// catalog's array built once per version); what the model may call, and what
// search_tools and load_tool run against (rounds.go). It also owns the caches that
// planning needs, each bounded: client tools arrays parsed, tools arrays the envelope
// scan validated (knowntools.go), catalog sizes and token counts, the whole-catalog
// tools arrays. The budget guard (budget.go) counts a prompt as the engine will see it.
//
// A Plan is one request's: the tool loop reads it (Callable, Runs, MetaEnv) and
// records its rounds in it (Add, Load, CountStrays, SetCut, DemandMet), then Keep files
// the hidden exchange under the thread. The pipeline never reaches inside it.
//
// It keeps the client's bytes: the tools array and messages it writes are byte-level
// edits of the client's body (oai.Object.Edit), the catalog's rendering is byte-stable,
// and every tool the client sent reaches the engine with its schema bytes unchanged.
//
// It must never write to a client, know a door's wire format (it reads a Chat
// Completions envelope, whichever door decoded it), send anything upstream, or run a
// tool; nor share a client's tools across callers (every cache entry is scoped by the
// caller's identity and compared byte for byte). Its errors are backends.Error values
// the gateway writes in the door's envelope.
package planner
