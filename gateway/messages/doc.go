// Package messages is the gateway's door for Anthropic's Messages API (POST
// /v1/messages and /v1/messages/count_tokens). It only translates: Decode turns a
// Messages request into the Chat Completions request the pipeline runs (Request,
// ChatBody), and Writer, a door.Sink, turns the pipeline's answer into Anthropic's
// message object or its event stream. It never re-marshals the client's JSON through
// Go values: texts, tool schemas, tool inputs and ids are copied as the client wrote
// them (escapes included), and the same request always gives the same chat bytes, so
// that each turn of a conversation extends the previous one's prompt for the engine's
// prefix cache.
//
// # Request
//
//	Messages API                          Chat Completions
//	model, max_tokens                     model, max_tokens (required, at least 1; 0 —
//	                                      cache pre-warming — is refused)
//	system (string or text blocks)        first message, role system: the blocks' texts
//	                                      joined with a blank line ("\n\n")
//	messages[].role "system"              a system message in place (not Anthropic's API,
//	                                      but some agents send it)
//	user text blocks                      content: a lone text as a string, else an array
//	                                      of text parts
//	image (base64 / url source)           image_url part (data:<media_type>;base64,<data>
//	                                      / the url); file sources are refused in
//	                                      the turn being sent, and in the history
//	                                      (before the last assistant message) a note
//	                                      in Request.Warnings (images.go)
//	document (text / content source)      text parts (and image parts); title, context
//	                                      and citations are not sent
//	document (base64 PDF source)          a text part: the PDF's text (package pdftext,
//	                                      under its limits); a PDF it cannot read becomes
//	                                      a note that it was left out, in
//	                                      Request.Warnings (X-Maskgate-Warning)
//	document (url / file source)          the same note: the gateway fetches nothing
//	                                      (never a 400, which every later turn resending
//	                                      the document would repeat)
//	search_result                         one text part: title, source, then its texts
//	mid_conv_system                       a system message in place
//	tool_result                           one tool message per result
//	                                      {"role":"tool","tool_call_id","content"}, all of
//	                                      a user message's results before a user message
//	                                      with the rest of its content; content as above
//	                                      ("" when absent); tool_reference {tool_name}
//	                                      becomes the text "Tool loaded: <name>" (names in
//	                                      Request.Referenced); is_error: true prefixes the
//	                                      content with "Error: " (chat has no error flag)
//	assistant text blocks                 content (a lone text as a string, several as
//	                                      text parts; null when there are only calls)
//	tool_use {id, name, input}            tool_calls[] {id, type function, function {name,
//	                                      arguments}}: arguments is a JSON string whose
//	                                      value is exactly the input's bytes
//	thinking {thinking, signature}        reasoning_content of the assistant message
//	                                      (several joined with a blank line; the
//	                                      signature is not sent). Engines whose templates
//	                                      render reasoning (Qwen3-style, for the turns of
//	                                      an ongoing tool loop) then see what they wrote
//	redacted_thinking                     dropped: Anthropic's ciphertext, unreadable to
//	                                      any engine
//	server_tool_use, *_tool_result,       dropped (counted in Request.DroppedBlocks) or,
//	mcp_tool_use, container_upload        with Options.Hosted "refuse", a 400
//	tools[] (custom: no type, "custom")   {"type":"function","function":{"name",
//	                                      "description","parameters","strict"}};
//	                                      input_schema's bytes are parameters unchanged
//	tools[] with any other type           server tools (web_search_*, web_fetch_*,
//	                                      code_execution_*, bash_*, text_editor_*,
//	                                      computer_*, memory_*, tool_search_tool_*, ...):
//	                                      dropped (Request.Dropped) or refused
//	defer_loading: true                   still translated; names in Request.Deferred
//	tool_choice auto / any / none         "auto" / "required" / "none"
//	tool_choice tool {name}               {"type":"function","function":{"name"}}
//	disable_parallel_tool_use: true       parallel_tool_calls: false
//	stop_sequences                        stop (the array as sent)
//	temperature, top_p, top_k             temperature, top_p, top_k (bytes as sent;
//	                                      top_k is an extension the engines read and
//	                                      the openai backend takes out)
//	metadata.user_id                      Request.UserID, and user
//	stream: true                          stream, stream_options {"include_usage":true}
//	output_config.format (json_schema)    response_format {"type":"json_schema",
//	                                      "json_schema":{"name":"output","schema"}}
//	cache_control (anywhere)              not sent; counted in Request.CacheBreakpoints
//	mcp_servers (non-empty)               dropped ("mcp_servers" in Request.Dropped) or
//	                                      refused
//
// Not sent, with no chat equivalent: thinking
// (kept in Request.Thinking; Request.ReasoningEffort reads it as reasoning_effort's
// values, which the gateway hands the backends that render the prompt themselves, never
// the body, where an OpenAI upstream would refuse it), output_config.effort, service_tier, container, inference_geo, context_management, a
// text block's citations, and any other member. A conversation that ends with an
// assistant message is Anthropic's prefill (Request.Prefill): the answer continues it and
// holds only the continuation, where the engine continues a final assistant turn
// (llama-server's /apply-template leaves it open; the vllm backend asks vLLM and SGLang
// with continue_final_message).
//
// Claude Code's first system block, "x-anthropic-billing-header: ...; cch=<hash>;",
// changes on every request; its cch value is replaced by zeros of the same length so
// that the prompt's first bytes, and so the engine's prefix cache and the gateway's
// thread fingerprint, stay the same from turn to turn (llama-server does the same).
//
// Errors are 400 invalid_request_error with Param the field's dotted path
// (messages.3.content.1.type) and a message that starts with it. An unknown block type
// is always an error, never dropped.
//
// # Answer
//
// Whole, Body is {"id","type":"message","role":"assistant","model","content",
// "stop_reason","stop_sequence","usage"}. Streaming, the events are message_start
// (empty content, null stop_reason, zero usage), ping, then per content block
// content_block_start, its deltas and content_block_stop, then message_delta
// (stop_reason, usage) and message_stop; each event's name is its data's type.
//
// Reasoning and text open a thinking block (signature "") or a text block, closing the
// open one when the kind changes, so interleaved reasoning and text give several blocks
// in order; each tool call is a tool_use block with the chat call's id as it is, its
// name, and as input the arguments' bytes when they are a JSON object, {} when they are
// empty, and {} (counted by BadArguments) when they are anything else, since a client
// must be able to parse every input. Streaming, a call's whole input goes in one
// input_json_delta. Whole and streaming give the same blocks.
//
// stop_reason: finish length is max_tokens, tool_calls (or any finish after a tool call)
// tool_use, content_filter refusal, anything else end_turn — or stop_sequence, with
// stop_sequence the matched string, when one of the client's stop_sequences ended the
// answer: the one the backend named (stop_reason, as vLLM and the llama-server backend
// write it; Writer.StopSequence), else one the text ends with (an engine that kept it);
// otherwise stop_sequence is null. usage: input_tokens is
// prompt_tokens less the cached ones, which are cache_read_input_tokens (Anthropic counts
// them apart); cache_creation_input_tokens is 0; output_tokens is completion_tokens.
// Usage is known only at End, so message_start reports zeros and message_delta the
// counts (recent SDKs take input and cache counts from message_delta). An engine's
// completion_tokens_details.reasoning_tokens has no place here: Anthropic's usage has no
// such field (thinking is counted in output_tokens), so it is not reported.
// A thinking block sent back goes to the engine as reasoning_content, renamed to
// reasoning for an engine that reads that name (current vLLM).
//
// The gateway begins a stream (message_start and a ping) as soon as the request is
// admitted, before the engine answers, so an error before the model's output is the
// stream's error event, not an HTTP status.
//
// One member is the gateway's, not the API's: "maskgate", on the message object whole
// and in message_start, when the request lost something on the way: {"dropped_tools":
// [server tool types],"warnings":[what else was left out]}. Anthropic's message has no
// warnings field; the SDKs keep members they do not know, so a client reads it as
// message.maskgate. Absent when nothing was left out.
//
// Fail writes an "error" event whose data is ErrorBody's envelope
// {"type":"error","error":{"type","message"}}, the type mapped from the HTTP status (see
// ErrorType). A prompt past the model's context window (door.Error.Overflow: the
// gateway's budget guard, or the engine's own refusal) is worded as Anthropic words it,
// which is what Claude Code compacts on: "prompt is too long: N tokens > M maximum", or,
// when max_tokens is what does not fit, "input length and `max_tokens` exceed context
// limit: N + K > M, decrease input length or `max_tokens` and try again"; an engine
// that gave no sizes has its own message after "prompt is too long: ".
package messages
