// Package anthropic is the backend for Anthropic's Messages API (POST /v1/messages). It
// translates OpenAI chat completion requests into Messages API requests, and Anthropic's
// answers — a whole message or its event stream — back into chat.completion objects or
// chat.completion.chunk streams. It speaks HTTP through backends.Upstream, sending
// x-api-key and anthropic-version; it uses no Anthropic SDK.
//
// It owns the request translation, the placement of prompt-cache breakpoints, the
// mapping of tool names and call ids to what the API accepts (and back), the answer and
// stream translation, and the mapping of Anthropic's errors to what the client sees. It
// never writes to the client, never reads the environment (the key comes in Options),
// never re-marshals the client's JSON through maps, and never claims to constrain
// decoding: it is not a backends.ToolConstrainer, so under mask and remove the gateway
// sends it only the tools the model may call, and every such response says Strategy
// "remove". It serves strategy index natively (a backends.ToolLoader of kind
// LoadDeferred; see "Deferred tools" below).
//
// # Bytes
//
// The request is built by appending, in a fixed member order, values that are either
// generated here or the client's own bytes: message text, tool descriptions, tool
// parameters (as input_schema) and earlier calls' arguments (as tool_use input) are
// copied as the client wrote them, escapes included. The same OpenAI request always
// gives the same Anthropic bytes, and the next turn of a conversation extends them.
//
// # Prompt caching
//
// The Messages API caches a prompt prefix only up to a cache_control breakpoint, at most
// four per request, rendering tools, then system, then messages. This backend places up
// to three: on the last system block (or the last tool when there is no system prompt),
// on the last block of the conversation, and on the last block of the turn before the
// latest assistant answer — where the previous request ended — so each turn reads what
// the previous one wrote even when more than the API's ~20-block lookback was added in
// between. Prefixes under the model's minimum cacheable length are simply not cached.
// usage.prompt_tokens is input_tokens + cache_creation_input_tokens +
// cache_read_input_tokens; prompt_tokens_details.cached_tokens is cache_read_input_tokens,
// and every response is backends.CacheReported.
//
// # Field mapping
//
//	OpenAI                                Anthropic
//	model (Request.Model first)           model
//	max_completion_tokens, max_tokens     max_tokens (that order; else Options.MaxTokens)
//	system / developer messages           system text blocks, in order, wherever they stand
//	user message (text, image_url)        user turn: text blocks; image blocks with a base64
//	                                      source (data: URLs of jpeg, png, gif, webp) or a
//	                                      url source (http/https); image_url.detail is not sent
//	assistant message                     assistant turn: text blocks, then one tool_use per
//	                                      tool_calls entry (id, mapped name, input = the
//	                                      arguments' bytes; "" means {})
//	tool message                          tool_result block (tool_use_id, content string or
//	                                      text blocks) first in the next user turn
//	consecutive turns of one role         merged into one turn; blank text is left out, and
//	                                      a message with nothing left (e.g. an empty
//	                                      assistant message) is skipped
//	tools[].function                      tools[]: name (mapped), description, input_schema
//	                                      (parameters as sent; absent → empty object schema)
//	tool_choice "auto" / absent           none sent (auto is the default)
//	tool_choice "none"                    {"type":"none"} (tools still sent: the prefix stays)
//	tool_choice "required"                {"type":"any"}
//	tool_choice {"type":"function"}       {"type":"tool","name":...}
//	tool_choice allowed_tools             only the allowed tools are sent (Anthropic has no
//	                                      allowed_tools), with auto or any by its mode
//	parallel_tool_calls false             disable_parallel_tool_use: true
//	stop (string or array)                stop_sequences
//	temperature (0–1), top_p, top_k       temperature, top_p, top_k, bytes as sent
//	user                                  metadata.user_id
//	stream                                stream
//
// Refused with a 400 naming the field, because the answer would not mean what the
// client asked: n > 1, logprobs, top_logprobs, response_format other than "text"
// (json_object, json_schema), a non-empty logit_bias, non-zero presence_penalty or
// frequency_penalty, reasoning_effort, audio and non-text modalities, prediction,
// web_search_options, the deprecated functions / function_call, temperature above 1,
// content parts other than text and image_url (images in user messages only), tool types
// other than function, and tool names that collide once mapped.
//
// Accepted and not sent, because they change nothing Anthropic could honour or nothing
// at all: seed (Anthropic has no seed; answers are not reproducible either way),
// presence_penalty and frequency_penalty of 0, n of 1, store, metadata (the gateway
// reads thread_id from it), prompt_cache_key (Anthropic caches by prefix, see above),
// service_tier, stream_options (a usage chunk always ends a stream), a message's name,
// a tool's strict flag (the schema is still sent; Anthropic's strict tool use is not
// requested), and any field not listed here.
//
// # Names and ids
//
// Tool names outside ^[a-zA-Z0-9_-]{1,64}$ (e.g. "git.commit") are mapped with
// backends/toolname in tools, tool_choice and the history's tool_use blocks, and mapped
// back in answers and streams. Call ids outside ^[a-zA-Z0-9_-]+$ (other providers')
// are mapped the same way in tool_use and tool_result; Anthropic's own ids come back
// unchanged.
//
// # Answers
//
// Text blocks are joined into content; tool_use blocks become tool_calls with their id
// and their input bytes as arguments. Thinking and redacted_thinking blocks are dropped:
// this backend never asks for extended thinking, and a thinking block returned without
// its signature could not be sent back in a later turn anyway. stop_reason end_turn,
// stop_sequence and pause_turn are "stop", max_tokens and model_context_window_exceeded
// "length", tool_use "tool_calls", refusal "content_filter".
//
// # Streams
//
// message_start gives the chunk with the role; text_delta gives content chunks;
// a tool_use block gives a chunk with its index, id, type and name, then one per
// input_json_delta fragment; thinking, signature and citation deltas and ping are
// skipped; message_delta carries the stop reason and the final usage; message_stop gives
// the finish chunk and a usage chunk with no choices, after which Next returns io.EOF. A
// stream that ends before message_stop ends with backends.ErrTruncated, and an error
// event ends it with a *backends.Error (503 for overloaded_error).
//
// # Deferred tools
//
// Under strategy index the gateway's tools array ends with the catalog's tools that are
// not callable yet, each with "defer_loading": true; they go to Anthropic as tools with
// defer_loading: true, whose definitions the API keeps out of the prompt. A tool message
// answering a load_tool call of the assistant message before it (or a search_tools call
// under search.auto_load) holds the gateway's load result; it becomes a tool_result whose content is one
// {"type":"tool_reference","tool_name"} per deferred tool in the result's "tools" (the
// API expands each into the tool's definition at that point of the conversation), then
// a text block with the result without those definitions. So every request of a session
// carries the same tools and system bytes, and a load only appends. Such a request
// carries anthropic-beta: advanced-tool-use-2025-11-20; tool_choice allowed_tools then
// narrows nothing (every tool is sent, so the bytes stay), and no breakpoint goes on a
// deferred tool, which is not part of the cached prefix. The response says Strategy
// "index".
//
// # Errors
//
// Anthropic's error bodies ({"type":"error","error":{"type","message"}}) become OpenAI
// envelopes: 400, 413 and 429 (with Retry-After) keep their status; 529 overloaded_error
// becomes 503 with Retry-After; a 404 naming the model is 404 model_not_found; 401 and
// 403 are about the gateway's own key and become 502, as do other 404s and 5xx.
package anthropic
