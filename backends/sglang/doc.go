// Package sglang is the backend for SGLang's OpenAI-compatible server (kind sglang) with
// the loaded set enforced while decoding.
//
// The request goes through as the client wrote it — the whole catalog in "tools", never
// marked strict, so the prompt and SGLang's radix cache stay put — plus two members:
//
//	"response_format": {"type":"structural_tag","format":{"type":"triggered_tags",
//	    "triggers":["<tool_call>"],"tags":[{"type":"tag","begin":"<tool_call>\n{\"name\": \"A\", \"arguments\": ",
//	    "content":{"type":"json_schema","json_schema":{...}},"end":"}\n</tool_call>"}, ...],
//	    "at_least_one":false}}
//	"tool_choice": "auto"
//
// The tag (masking.StructuralTag, one tag per allowed tool, at_least_one for a required
// call) is sent as an object, not a JSON string as vLLM takes it. SGLang's chat request
// accepts two shapes here (ChatCompletionRequest.response_format in
// sglang/srt/entrypoints/openai/protocol.py: LegacyStructuralTagResponseFormat, kept
// "for backward compatibility", or xgrammar's StructuralTag); its structured outputs
// docs show both, the second as "XGrammar latest structural tag format". This package
// sends the latest one: it is the shape vLLM takes too, so one renderer serves both, and
// the legacy one cannot express the triggered-tags options. It needs an SGLang whose
// protocol has that union and the xgrammar grammar backend (the default;
// --grammar-backend xgrammar).
//
// tool_choice is "auto" whatever the client asked, because the tag itself says whether
// a call is required: with a named tool_choice SGLang would render only that tool into
// the template (moving the prompt) and with "required" it would add a json_schema
// constraint of its own. The server needs a tool parser for the model's format
// (--tool-call-parser qwen25, or hermes) to return tool_calls.
//
// Catalog first, where the request asks and the format is Hermes, is vllm's: the
// client's system messages go behind an empty one, so the template writes the tools
// ahead of them.
//
// A client's own response_format (other than {"type":"text"}) wins: the tag is not
// added, the body goes as it came, and the response says strategy validate, not mask —
// the prompt still has the whole catalog, and the gateway answers a call outside the
// loaded set itself.
//
// Cached tokens come in usage.prompt_tokens_details.cached_tokens when the server runs
// with --enable-cache-report; without it the usage has no details and the gateway
// cannot call them reported.
//
// Strategy index: LoadsTools is LoadNone (ResponseFormat.Loads), since SGLang's tool
// parsers drop a call to a tool outside the request's tools array by default; the
// gateway serves remove instead. The tag itself would hold Request.Definitions' tools as
// vLLM's does.
//
// It must not mark tools strict, nor replace a response_format the client set.
package sglang
