// Package openaicompat is the pass-through backend for upstreams that speak OpenAI's chat
// completions API: OpenAI itself, vLLM, SGLang, llama-server's /v1 and Ollama's /v1.
//
// It forwards the request body it is given byte for byte (the gateway has already made its
// edits), adds the upstream credential, and hands back the upstream's bytes: the whole
// response, or the data of each SSE event. It classifies failures into the statuses the
// client should see (502 unreachable, truncated, disconnected or too large, 504 too slow
// to start or stalled past idle_timeout, the upstream's own 4xx with any echoed
// credential redacted) and never writes to the client itself.
package openaicompat
