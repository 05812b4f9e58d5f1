// Package openai is the backend for OpenAI's chat completions API (kind openai): the
// openaicompat pass-through plus three byte edits.
//
// The allowed set. The gateway sends the whole catalog, byte-identical across turns, and
// Request.Allowed (meta-tools and loaded tools); this backend writes them as
//
//	"tool_choice": {"type":"allowed_tools","allowed_tools":{"mode":"auto"|"required",
//	                "tools":[{"type":"function","function":{"name":"A"}}, ...]}}
//
// (API reference, Chat Completions, Create: tool_choice, "Allowed tools"; the shape is
// the SDK's ChatCompletionAllowedToolChoiceParam, generated from OpenAI's OpenAPI spec),
// built by masking.AllowedTools, honouring the client's own tool_choice (see Prepare).
// The member is replaced where the client put it or appended after the last member, so
// the tools array's bytes never move. Response.Strategy is then "allowed_tools".
//
// Why this keeps the cache: OpenAI caches an exact prefix of the request from 1,024
// tokens, matching in 128-token blocks, and tool definitions are part of that prefix
// (OpenAI cookbook, "Prompt Caching 201", 1.1 Basics). Only tool_choice changes from turn
// to turn; tools and messages stay the same bytes. OpenAI does not publish where it
// renders tool_choice; that allowed_tools leaves the tools prefix cacheable is how the
// feature is presented in guides on it, not a sentence this package could cite from
// OpenAI's own pages. The cached_tokens the gateway reports settle it per request.
//
// Tool names. OpenAI accepts only ^[a-zA-Z0-9_-]{1,64}$. When any name in a request is
// outside that (a namespaced "git.commit"), every name is rewritten to its
// toolname.OpenAI wire name — in tools, in the calls of earlier assistant messages and
// in tool_choice — and mapped back in the answer: choices[].message.tool_calls of a
// whole response, choices[].delta.tool_calls of each streamed chunk. A request whose
// names are all valid is sent as the same bytes. Self-hosted engines (vllm, sglang,
// openaicompat) see real names; only this backend maps.
//
// Members OpenAI refuses. metadata is taken out unless store is true (OpenAI answers
// "The 'metadata' parameter is only allowed when 'store' is enabled"), and top_k always
// (OpenAI has none; the Messages door carries Anthropic's top_k for the engines that
// sample with it). Other engines behind the gateway take both.
//
// Cache accounting: usage.prompt_tokens_details.cached_tokens, which OpenAI always
// sends; a whole answer that carries it is marked reported.
//
// Strategy index. A body whose tools carry "defer_loading": true (the gateway's catalog
// under index, backends.LoadDeferred) goes to POST /responses instead, translated whole
// (deferred.go, responsesreq.go): load_tool (search_tools under search.auto_load)
// becomes the client-executed tool_search tool, deferred tools stay out of tools, each
// load and its result become a
// tool_search_call and a tool_search_output carrying the loaded definitions
// (defer_loading: true) followed by the result's text as a user message, so the tools
// and every earlier item keep their bytes across loads. The answer, whole or streamed,
// comes back as a chat completion (responsesans.go, responsesstream.go): text, calls
// (a tool_search_call as a call of that meta-tool), the finish reason and usage with
// cached_tokens; reasoning items are not returned (store is false and no encrypted
// reasoning is asked for). OpenAI documents tool search for gpt-5.4 and later.
//
// It must not edit any other member, nor re-encode the client's body (outside index's
// translation); it must not send allowed_tools to an API declared without it
// (Options.NoAllowedTools), which also serves no index (LoadsTools is LoadNone).
package openai
