// Package backends holds what the gateway talks to: inference engines and hosted APIs.
//
// A backend takes an OpenAI chat completion request and answers in OpenAI shape, either a
// whole chat.completion object or a stream of chat.completion.chunk objects. One
// translator per (client API, backend API) pair lives in its own sub-package; engines that
// already speak OpenAI go through openaicompat, which forwards the client's bytes with the
// few edits the gateway asked for.
//
// The Backend interface is deliberately small. Abilities that only some backends have
// (listing models, answering a health probe) are separate interfaces that the gateway
// checks with a type assertion.
//
// A backend must never write to the client: it returns bytes or errors and the gateway
// decides what the client sees. HTTP backends share Upstream: a first-byte deadline and
// an idle limit between the bytes of an answer (Watch), one more try on a new connection
// for a request that a kept-alive connection dropped before any answer, the count of a
// body's writes under way for a caller that recycles its buffer (BodyTracker), the
// classification of a broken
// answer (ReadError: upstream_timeout, upstream_truncated, upstream_disconnected,
// upstream_response_too_large), and Redact, so no upstream message carries a credential
// to the client or the log. It must honour ctx: a cancelled client cancels the
// upstream call at once.
package backends
