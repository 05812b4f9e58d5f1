// Package toolcall reads tool calls out of the text a model generated, for the wire
// formats of the chat templates the gateway serves: "hermes" (Qwen 2.5–3, Hermes),
// "llama3" (Llama 3.1–3.3), "mistral" (v11+ and the older JSON-array form), "harmony"
// (gpt-oss) and "deepseek" (DeepSeek V3 and V3.1). What each model emits is what its
// chat template renders for an assistant tool call (the chat_template in the model's
// tokenizer_config.json or GGUF, and OpenAI's harmony format for gpt-oss); each format's
// file shows the shape it reads.
//
// Parse reads a whole completion; a Parser reads one as it streams: Feed takes text
// deltas and returns content at once, except the bytes that may begin a call marker (and
// trailing whitespace, which is dropped when a call follows), which it holds until the
// next delta resolves them; a call comes out whole when it ends; Finish resolves what is
// left. Fed in any split, a text gives the same content, reasoning and calls as Parse.
//
// Arguments are the JSON bytes the model wrote, surrounding whitespace trimmed: they are
// what the template renders when the client sends the call back, so keeping them keeps the
// engine's prefix cache warm. Only arguments written as a JSON string (some models
// double-encode) are decoded, and missing or null arguments become "{}".
//
// A text the token limit cut (finish_reason "length") is finished with FinishCut, or
// parsed with Options.Cut: a call that began is still a call once its name is whole, with
// its arguments as far as they came, as OpenAI returns a call cut by max_tokens; one cut
// before its name was whole is dropped, and the format's markers never come back as
// content.
//
// The package owns the text-to-call translation only. Apart from a cut call, it never
// drops text: a call that does not parse (bad JSON, no name, no end within
// Options.MaxCallBytes) is passed on as the content it was. It never checks a call against the allowed tools (the gateway
// does), never builds grammars (masking/ does) and does no I/O.
package toolcall
