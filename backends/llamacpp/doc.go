// Package llamacpp translates OpenAI chat completions to llama-server's native API
// (ggml-org/llama.cpp, tools/server/README.md), so that the prompt carries the whole tool
// catalog, byte for byte, while a grammar lets the model call only the loaded tools.
//
// llama-server's own /v1/chat/completions refuses a custom grammar together with tools
// ("Cannot use custom grammar constraints with tools."), so each call is two requests:
// POST /apply-template renders the client's messages and its whole tools array with the
// model's chat template into a prompt, and POST /completion generates from that prompt with
// cache_prompt and the grammar fields that Options.Grammar supplies. The package then
// parses Hermes tool calls (<tool_call>{"name":…,"arguments":…}</tool_call>) out of the
// completion text, streaming too, and answers in OpenAI's shape.
//
// It owns the wire translation and the HTTP exchange with llama-server. It never edits or
// re-encodes the client's messages or tools (they travel as the client's raw bytes, so the
// rendered prompt and the engine's prefix cache stay stable), never builds a grammar
// itself (masking/ does), and never decides which tools are allowed (the gateway does,
// through backends.Request.Allowed); checking that a parsed call names an allowed tool is
// the gateway's defense in depth, not this package's.
package llamacpp
