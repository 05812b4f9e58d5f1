// Package embedded is an in-process inference engine: llama.cpp, through the cgo bindings
// in github.com/ollama/ollama/llama, behind the backends.Backend interface. It exists so
// that the gateway owns the logits: a Masker can forbid tokens exactly at every decoding
// step, which a remote engine only approximates with a grammar.
//
// Everything but this file and options.go is behind the build tag llamacpp, so the
// default build stays pure Go. Building with the tag needs a C/C++ toolchain, Debian's
// nlohmann-json3-dev and libstb-dev, and the project's miniaudio stand-in header
// (scripts/run-embedded and scripts/test provision them; internal/llamaheaders fails a
// build that lacks one and names the package to install within seconds of its start):
//
//	CGO_CPPFLAGS="-I$PWD/internal/enginetest/cinclude" go test -tags llamacpp ./backends/embedded
//
// # Requests
//
// A request is decoded as an OpenAI chat completion. Its messages and tools are rendered
// with the model's own Jinja chat template (tokenizer.chat_template in the GGUF), with
// add_generation_prompt, and tokenized with special tokens parsed. The template engine is
// github.com/ardanlabs/jinja: on the tiny test model's ChatML/Hermes template it matches
// Python's Jinja2 with Hugging Face's tojson byte for byte once values are passed as
// ordered dicts, which this package builds from the client's own JSON so tool schemas keep
// the client's key order. github.com/nikolalohinski/gonja/v2 renders the same template,
// but its tojson is Go's json.Marshal: compact separators, sorted keys and \u003c-escaped
// HTML characters, so the tool catalog would not be the bytes the model was trained on.
// The template gets bos_token and eos_token as empty strings; the tokenizer adds the BOS
// token when the model asks for one. When backends.Request.CatalogFirst asks, the tools go
// ahead of the client's system prompt as backends/llamacpp lays them out (Hermes: the
// system message moves behind an empty one; Llama 3.x: tools_in_user_message false).
//
// Sampling runs in Go on a copy of the logits: the mask, then temperature (0 is greedy),
// top_k (an extension field), top_p and a seeded PCG source. Generation ends at an
// end-of-generation token, a stop string, max_tokens (or max_completion_tokens) or the
// slot's context. When the request has tools, text from the format's call marker on
// (Hermes: "<tool_call>") is held back and parsed as tool calls in the model's wire
// format (backends/toolcall); calls that parse become OpenAI tool_calls with
// finish_reason "tool_calls", text that does not parse is returned as content. A call
// that max_tokens (or the context) cut short is still a call, with the arguments so far
// and finish_reason "length", as OpenAI answers; cut before its name was whole it is
// dropped. The template's call syntax is never returned as content.
//
// # Reasoning
//
// As backends/llamacpp reads llama-server's output, so this package reads its own with
// backends/chatlayer: a leading <think>…</think> block (Qwen3, QwQ, DeepSeek-R1) is
// reasoning_content, whole and as a stream's reasoning_content deltas, never content,
// and a prompt whose template opened the block (chatlayer.StartsInside) makes the output
// start inside it; a block max_tokens cut is all reasoning. The history's reasoning
// (reasoning_content, or vLLM's reasoning) reaches the template as each message's
// reasoning_content, as llama-server passes it, and reasoning_effort becomes the
// template's enable_thinking (Qwen3) or reasoning_effort (gpt-oss) variable; a request
// without it renders as before. Calls are read from the text after the block. A harmony
// answer is held from its first channel marker and read whole at its end, with tools
// or without: the analysis channel is reasoning_content, the final channel content.
//
// # Tool calls
//
// With tools, the mask (masking's positional token mask) keeps the name to the allowed
// set, and from the call's trigger on llama.cpp's own grammar sampler (llama.NewGrammar,
// Apply, Accept, which the Ollama module compiles) runs masking.CallGBNF over the call,
// so the arguments follow the called tool's JSON Schema; afterwards the answer is free
// text again, or, where tool_choice required a call, only its end: a forced call is one
// whole, schema-valid call (given max_tokens to finish it). Inside the arguments the
// grammar is asked about the bytes, then two-byte beginnings, then only the tokens they
// allow, and where it must judge the whole vocabulary (inside a string) the sampler
// first draws without it and keeps an allowed draw, which for greedy decoding and
// temperature alone is the masked distribution exactly; go test -bench CallGrammar
// measures the steps.
//
// Strategy index (LoadsTools: LoadByDefinition where the format constrains): a tool of
// backends.Request.Definitions may be called as a tool of the tools array is, its
// arguments held to its schema (the call grammar's catalog is then built for the request
// from both, never kept under the ToolsID), while the template renders the tools array
// alone, so the definition reaches the model only in the conversation.
//
// # Structured outputs
//
// A response_format (json_object, json_schema; backends/chatlayer's Format, a 400 for a
// schema keyword the grammar cannot express) holds the whole output, from its first
// token, to llama.cpp's grammar sampler over masking's Answer grammar: the answer alone
// where no call may come, masking's GBNFOrAnswer (an allowed call or the answer, one
// root) where calls are optional; a required call keeps the call mask. At each step the
// grammar's tokens are allowed, and the end once the grammar is complete.
//
// # Prefix reuse
//
// The llama.cpp context holds Slots sequences. Each slot remembers the tokens its KV cache
// holds. A request takes the slot sharing the longest token prefix with its prompt (the
// least recently used one when none shares any), drops the rest of that slot's cache with
// KvCacheSeqRm, and decodes only the new tokens, 512 at a time. The reused count is exact
// and reported as usage.prompt_tokens_details.cached_tokens with backends.CacheReported.
// At least one prompt token is always decoded, for its logits.
//
// # Concurrency
//
// One worker goroutine owns the llama.cpp context and runs one request at a time.
// Requests wait in a queue of QueueSize; a request that finds it full gets a 429 with
// Retry-After: 1. The worker checks the request's context before every llama_decode
// call, so a cancelled client stops prefill or generation within one step. A stream's
// chunks are handed over an unbuffered channel, so a slow reader holds the worker.
//
// The package never writes to the client and reads no environment variables.
package embedded
