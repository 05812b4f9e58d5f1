// Package tinymodel writes a small random-weight language model as a GGUF
// file that llama.cpp-based engines (Ollama's runner, llama-server) load and
// run on a CPU in milliseconds per token.
//
// It owns three things: a minimal GGUF v3 writer, the model's shape and
// seeded weights (llama architecture, a few narrow layers, context length
// 131072 so that long prompts fit), and its chat format (ChatML turns with
// Hermes/Qwen style tool calls, as a Jinja template inside the file and as an
// Ollama Go template for Modelfiles).
//
// The vocabulary is the real Llama 3.2 byte-level BPE, read from the
// github.com/ollama/ollama module's tokenizer test data at generation time, so
// prompts tokenize to realistic token counts. Only chat control tokens are
// added.
//
// The output is a pure function of the vocabulary and Options: the same seed
// gives the same bytes on every machine. It must never depend on map order,
// time, or a random source other than the seeded PCG, because tests pin the
// file's SHA-256. The weights mean nothing; text it generates is noise.
package tinymodel
