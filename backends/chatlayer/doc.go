// Package chatlayer is what llama-server's chat layer did for its /v1/chat/completions
// and the gateway now does itself on the paths where it renders the prompt and reads the
// output (backends/llamacpp through /apply-template + /completion, backends/embedded):
// reading the model's text into what OpenAI's answer holds, and mapping the client's
// switches onto the chat template. backends/toolcall, beside it, reads tool calls.
//
// # Reasoning
//
// Qwen3, QwQ and DeepSeek-R1-style models write their reasoning as a <think>…</think>
// block before the answer. A Think reader splits a completion, whole (Split) or as it
// streams (Feed, Finish), into reasoning and content: a block counts only at the start
// of the text (after whitespace), as llama.cpp's own parser reads it; whitespace around
// the reasoning and between the block and the answer is dropped, as the templates drop
// it when they render reasoning_content back; a block that never closes (the token limit
// cut it, or the model ended inside it) is all reasoning. Templates that open the block
// in the prompt itself (Qwen3's thinking models, QwQ and DeepSeek-R1 end the generation
// prompt with "<think>\n") make the output start inside it: StartsInside tells from the
// rendered prompt, and the reader is told so. Streaming holds back only a tag split
// across chunks, for as long as it can still become the tag, and whitespace that may
// turn out to precede one; fed in any split, a text gives the same reasoning and content
// as fed whole, and nothing but the tags and that whitespace is dropped. The content part
// is what tool calls are then parsed from. gpt-oss's harmony analysis channel is not a
// tag: backends/toolcall's harmony reader returns it as reasoning.
//
// # Switches
//
// Effort maps the client's reasoning switch (Chat Completions reasoning_effort, to which
// the doors map Responses reasoning.effort and Messages thinking) onto the chat
// template's variables, the chat_template_kwargs llama-server passes to it: Qwen3's
// enable_thinking, gpt-oss's reasoning_effort. Only a request that carries a switch gets
// any, so every other prompt renders byte for byte as before.
//
// The package does no I/O and knows no wire format beyond the tags and the template
// variables; it never decides which engine a request goes to.
package chatlayer
