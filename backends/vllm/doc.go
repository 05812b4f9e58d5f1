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
// A client that constrains the output itself (response_format json_schema or
// json_object, structured_outputs, a guided_* field) wins: vLLM takes one kind of
// constraint per request, and the tag would fight the client's schema, so the request
// goes as the client wrote it, unconstrained by the gateway (the gateway's own check of
// call names still answers a call outside the loaded set). SGLang's backend, on this
// type, does the same with its tag in response_format.
//
// It must not mark tools strict (vLLM would add a constraint of its own over every tool).
package vllm
