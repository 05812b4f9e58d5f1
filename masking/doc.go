// Package masking turns a loaded tool set into constraints on what a model may
// decode, while the prompt keeps the whole catalog byte-stable.
//
// It owns, today, the positional token mask used by the embedded engine: given
// the model's vocabulary (token id → decoded bytes), a tool-call wire format
// (Hermes/Qwen `<tool_call>` JSON first), the allowed names and a mode, a
// compiled [Mask] answers, at every decoding step of a [State], which token ids
// may be sampled. Free text is unconstrained; after the trigger only token paths
// that keep the emitted bytes on the fixed text and on a prefix of some allowed
// name are allowed, and the closing quote only after a complete allowed name.
// Tokens that straddle those boundaries (`"name": "get` or `file",`) are
// handled because the mask is computed by walking each token's bytes through
// the same byte automaton that [State.Accept] uses.
//
// It also renders the same constraint for engines that take it as text: a llama.cpp
// GBNF grammar with lazy triggers ([GBNF]), a vLLM/SGLang structural tag
// ([StructuralTag]) and OpenAI's allowed_tools ([AllowedTools]); Ollama format
// schemas and the tools-array reduction live with their backend and the gateway. Masks
// are cached per (vocabulary, format, allowed set, mode) by [Cache].
//
// It must never ban tokens by name alone: biasing every token of a disabled
// name to −∞ also bans those tokens inside allowed names that share them
// (`get_`, `file`) and in ordinary text. Every constraint here is positional —
// active only inside the name field after the trigger — and exact: a token is
// allowed if and only if [State.Accept] accepts it. It never edits the prompt,
// never reads configuration or environment, and holds no package-level state.
//
// The arguments after `"arguments": ` are not constrained yet (a JSON-schema
// grammar will do that); only the end marker is tracked there to return to
// free text.
package masking
