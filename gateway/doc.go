// Package gateway is maskgate's HTTP surface: the OpenAI-compatible endpoints, request
// routing to backends, the relay of whole responses and streams, errors in the OpenAI
// envelope, and request metrics. What the operator sees of requests (the request log,
// live statistics, spans, the dashboard and the admin API) is gateway/observe's: the
// pipeline tells it what it knows through opsObserver (observer.go), and never asks.
//
// It keeps the client's request bytes: it reads the few fields it needs (model, stream,
// stream_options) and makes byte-level edits through oai.Set, never re-marshalling the
// body, because the engine's prefix cache is keyed on exact bytes.
//
// It must never hold engine-specific knowledge (that is backends/), tool catalogs and
// loaded sets (toolsearch/), constraints (masking/) or cache models (kvcache/): it asks
// those packages and wires their answers into the response.
//
// For managed tool catalogs it asks gateway/planner for the request's plan once (the
// profile, catalog, loaded set and strategy: the configured one, or auto's Chooser,
// pinned per thread), sends the plan's tools array and messages each round, runs
// meta-tool rounds against the plan, answers calls outside the allowed set (counted,
// never returned), and reports prompt, cached and computed tokens in headers, trailers
// and counters, with kvcache's accounting rule.
//
// Callers are identities (gateway/access, caller.go): with Options.Keys, /v1/ answers 401
// to a request without a configured key (Bearer or x-api-key) and 403 to a model or
// backend outside the key's; every piece of per-caller state — threads, loaded sets,
// hidden exchanges, strategy pins — is keyed by the key's name, never by a string the
// client sent alone, and thread ids are salted. Each key's limits (tenant.Limiter) answer
// 429, each backend's gate (tenant.Gate) 503, both with Retry-After, before anything is
// sent upstream. It must never log or echo a presented key.
//
// Streams follow the stdlib reverse proxy's discipline: the upstream's status and first
// event are checked before the client's SSE headers are committed, so a failure before
// the first byte is still a clean error; each event is flushed; an upstream that breaks
// mid-stream ends the client's stream with an error event and no [DONE]. The exception
// is a stream of the Responses or Messages door, which opens with its early events as
// soon as the request is admitted (Options.LateStreams turns it off): its errors are
// the door's error events from there; and a Chat Completions stream of the tool loop,
// which opens with an SSE comment when the gateway runs a round of its own. A begun stream silent for KeepaliveInterval gets
// a keep-alive (keepalive.go), written under the lock every stream write takes.
//
// Every request passes Server.ServeHTTP's guards: an id (X-Request-Id, the client's if
// plain, else made) in the answer, the logs and any internal error's message; a read
// deadline on the body (BodyTimeout + size / MinBodyRate: 408 past it); the body read
// into a buffer that grows with what arrives, never from Content-Length, and is
// recycled once the request has ended (bodyReader: nothing may keep a slice of it); a
// deadline on every write to the client, whatever the door (writedeadline.go: each
// write of at most 16 KiB, and each flush, within WriteTimeout, else the request is cut,
// its upstream request cancelled, and counted in maskgate_client_aborts_total); a
// recovered panic answered 500 (or an error event) with the id and counted; and Stop, which ends
// what is in flight after a shutdown's grace: streams with a server_shutting_down error
// event and a proper end, other requests with 503. Upstream failures are counted by
// diagnosis (maskgate_upstream_failures_total), and no error message the client sees
// carries anything key-shaped (backends.Redact); RedactLogs does the same for logs.
package gateway
