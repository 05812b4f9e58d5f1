// Package llamacpp translates OpenAI chat completions to llama-server's native API
// (ggml-org/llama.cpp, tools/server/README.md), so that the prompt carries the whole tool
// catalog, byte for byte, while a grammar lets the model call only the loaded tools.
//
// llama-server's own /v1/chat/completions refuses a custom grammar together with tools
// ("Cannot use custom grammar constraints with tools."), so each call is two requests:
// POST /apply-template renders the client's messages and its whole tools array with the
// model's chat template into a prompt, and POST /completion generates from that prompt with
// cache_prompt, the grammar fields that Options.Grammar supplies and the wire format's
// markers as preserved_tokens. The package then parses tool calls out of the completion
// text with backends/toolcall, in the format of Options.Format (Hermes by default),
// streaming too, and answers in OpenAI's shape; a call n_predict cut short is still a
// call, with the arguments so far and finish_reason "length". Options.Grammar gets the
// client's tools array (and its ToolsID) so the grammar can hold each tool's arguments to
// its schema. Under strategy index (LoadsTools: LoadByDefinition with a grammar) it also
// gets backends.Request.Definitions (GrammarRequest.Definitions), the loaded tools the
// tools array leaves out, held to their schemas alike; they never reach /apply-template.
// Tokenize (POST /tokenize) and
// ChatTemplate (GET /props, from which toolcall.Detect tells the format) are optional
// abilities for the gateway's constraint and configuration code.
//
// A structured output (response_format json_object or json_schema, read by
// backends/chatlayer's Format into masking's Answer) goes into /completion as a grammar
// of the whole answer, not lazy; beside tools the model may call, Options.Grammar is
// told the answer (GrammarRequest.Answer) and returns one grammar whose root is the
// allowed calls or the answer. response_format never reaches /apply-template. A schema
// keyword the grammar cannot express is a 400 naming it.
//
// When backends.Request.CatalogFirst asks, the template lays the tools out ahead of the
// client's system prompt, so that sessions whose system prompts differ share the
// catalog's tokens in llama-server's prefix cache: under Hermes a leading system message
// moves behind an empty one (Hermes/Qwen templates write messages[0] and then the tools
// into the system turn, and a later system message as a turn of its own); under Llama 3.x
// chat_template_kwargs asks for tools_in_user_message false (the tools then go into the
// system turn before the system prompt). The client's messages still travel as its bytes,
// only moved; other formats keep their template's order.
//
// Images (images.go): a request that carries one asks GET /props whether llama-server
// reads images (modalities.vision, with a multimodal projector) and its media_marker. A
// base64 data: URL image then reaches the template as a text part holding the marker and
// /completion as prompt {"prompt_string", "multimodal_data"} (its data, in order), as
// llama-server's own chat layer does; every other image (all of them without vision,
// one by URL with it) becomes a note, which Notes reports for the client's warning
// header. The image parts are the one edit of the client's messages.
//
// Reasoning is read apart from the answer as llama-server's own chat API reads it
// (backends/chatlayer): a leading <think> block is reasoning_content, whole and streamed,
// starting inside the block when the rendered prompt opened it, and calls are parsed
// from the text after it; harmony's analysis channel is reasoning_content, with or
// without tools (a harmony completion always goes through the tool-call parser, its
// markers preserved). reasoning_effort, or backends.Request.ReasoningEffort where the
// body has none, adds the template's variables to /apply-template's
// chat_template_kwargs (enable_thinking; gpt-oss's reasoning_effort) where the client's
// own kwargs do not set them; a request without a switch renders as before.
//
// A late system message (systemmerge.go): many templates (Llama's, Mistral's, Gemma's)
// raise "System message must be at the beginning" for a system or developer message
// after the first turn. When /apply-template refuses one so, the backend merges every
// system and developer message's text, in order, into one leading system message and
// renders again, once; it remembers that the engine's template refuses them, so later
// requests are merged before rendering, and Notes says so in the client's warning header
// (the first time it renders the messages alone to find out).
//
// Stop sequences: llama-server's stopping_word (stop_type "word") is the choice's
// stop_reason, vLLM's name for the stop string that ended the answer.
//
// It owns the wire translation and the HTTP exchange with llama-server. It never edits (but
// for their images and a late system message a template refuses) or re-encodes the client's messages or tools (they travel as the client's raw bytes, so the
// rendered prompt and the engine's prefix cache stay stable), never builds a grammar
// itself (masking/ does), and never decides which tools are allowed (the gateway does,
// through backends.Request.Allowed); checking that a parsed call names an allowed tool is
// the gateway's defense in depth, not this package's.
package llamacpp
