// Package vllm is the backend for vLLM's OpenAI-compatible server with the loaded set
// enforced while decoding.
//
// The request goes through as the client wrote it — the whole catalog in "tools", so the
// prompt and the engine's prefix cache stay put — plus one member,
// "structured_outputs": {"structural_tag": "<JSON>"}, a triggered-tags constraint
// (masking.StructuralTag) that lets a <tool_call> name only the allowed tools, and
// "tool_choice": "auto", since the tag itself says whether a call is required
// (vLLM docs, "Structured Outputs": structural_tag; the guided_* fields were removed in
// v0.12). Everything else — transport, errors, streams — is openaicompat's.
//
// vLLM takes one kind of constraint per request. A client's structured output
// (response_format json_schema or json_object) therefore goes inside the tag, and the
// response_format leaves the body: the output is one allowed call or the answer held to
// the client's schema (masking.StructuralTagOrAnswer: xgrammar's "or" over each allowed
// tool's tag and the schema; one call, never several, since "or" takes only formats
// that end), or the calls alone where one is required. A constraint the tag cannot carry
// (structured_outputs, a guided_* field, another response_format type) wins: the request
// goes as the client wrote it, unconstrained by the gateway (whose own check of call
// names still answers a call outside the loaded set). SGLang's backend, on this type,
// does the same with the tag in response_format.
//
// Catalog first (catalogfirst.go): where backends.Request.CatalogFirst asks and the
// format is Hermes (configured or the default), a leading system message with text moves
// behind an empty one, so Hermes/Qwen templates write the tools into the first system
// turn and the client's system prompt as a turn after them: sessions whose system
// prompts differ share the catalog in the prefix cache. Other formats keep their
// template's order. A template that refuses the layout (a 400) gets the client's order
// at once, and from then on.
//
// Prefill (prefill.go): a conversation that ends with an assistant message's text is
// sent with continue_final_message true and add_generation_prompt false, unless the
// client set either, so the engine continues that turn (Anthropic's prefill).
//
// Strategy index (LoadsTools: LoadByDefinition): the tag also holds the tools of
// backends.Request.Definitions, each to its schema, rendered for the request (nothing
// derived from them is kept under the ToolsID), while "tools" stays the client's bytes,
// so a loaded tool's definition reaches the model only in the conversation. The engine's
// tool parser reads such a call as any other.
//
// It must not mark tools strict (vLLM would add a constraint of its own over every tool).
package vllm
