// Package responses is the OpenAI Responses API door (POST /v1/responses), translation
// only: Decode reads a Responses request and ChatBody writes the Chat Completions request
// the gateway's one pipeline runs; Writer, a door.Sink, writes the pipeline's answer back
// as a Responses object or as its server-sent events. Client values (tool parameter
// schemas above all) are copied into the chat body as the bytes the client sent, never
// decoded and re-encoded.
//
// # Input items
//
//   - A string input is one user message. Items may omit "type" when they have a role.
//   - message: user content stays a string as sent, or becomes chat parts (input_text →
//     text, input_image with image_url → image_url; other parts are a 400). An image by
//     file_id is a 400 in the turn being sent, and in the history (an item before the
//     model's last answer item) a note with a warning (images.go). input_file with file_data (a data: URL or bare base64) becomes a text
//     part: a PDF's text (package pdftext, under its limits), a text/* file's text. A
//     file it cannot read (another media type, a PDF without readable text, past a
//     limit) or one by file_id or file_url (the gateway fetches nothing) becomes a note
//     that it was left out, listed in Request.Warnings (the gateway's X-Maskgate-Warning
//     header): never a 400, which every later turn resending it would repeat. system and developer messages become "system" messages with
//     string content (text parts joined). The instructions become a leading "system"
//     message.
//   - Assistant-side items in a row — assistant messages, reasoning, function_call,
//     custom_tool_call, client tool_search_call — become one assistant message (content,
//     reasoning_content, tool_calls), as a chat model answers; a text or reasoning item
//     after calls starts the next one. An assistant message with calls and no text has
//     content null.
//   - function_call_output and custom_tool_call_output become tool messages: a string
//     output as sent, text parts joined into one string, parts with images as chat parts.
//   - reasoning items are opaque to the engine except for their reasoning_text content,
//     which becomes the reasoning_content of the assistant message they belong to (chat
//     templates that keep reasoning across tool calls want it; the gateway renames the
//     member to reasoning for an engine that reads that name, current vLLM); summaries and
//     encrypted_content are never sent to the engine. The item itself is kept, raw, in
//     Request.Input.
//   - custom_tool_call becomes a call whose arguments are {"input": <input>}, the shape
//     of the chat function a custom tool becomes and the form the model writes a custom
//     call in (masking's doc, "Custom tools"), so history renders as the model wrote it.
//   - tool_search_call (client) becomes a call to the function tool_search with the
//     item's arguments; tool_search_output (client) becomes a tool message naming the
//     tools loaded, and its tools join the chat tools so the engine can call them.
//     additional_tools items add their tools likewise. Server-executed tool search items
//     are hosted items.
//   - Hosted tools' items (web_search_call, mcp_call, computer_call, ...) are dropped
//     (listed in Dropped) or refused, as Options.Hosted says.
//   - compaction (what the gateway's /v1/responses/compact made) becomes a user message
//     "Summary of the conversation so far:\n\n<summary>" in its place; encrypted_content
//     the gateway did not write (DecodeCompaction: OpenAI's ciphertext, a damaged one) is
//     a 400 naming input[i].encrypted_content.
//   - item_reference (its type may be left out: an item with an id alone) becomes the item
//     it names, found by Options.Reference (the gateway: an output item of one of the
//     caller's stored responses, or of the socket's last), as if sent whole; one it does
//     not find is a 400 item_not_found naming input[i].id and the id.
//   - compaction_trigger and unknown item types are a 400 naming the item.
//
// # Tools
//
//   - function → a chat function with name, description, parameters and strict as sent
//     (allowed_callers and output_schema have no chat counterpart). defer_loading: true
//     keeps the tool in the chat tools but lists it in Request.Deferred until a
//     tool_search_output (or LoadTools) of the conversation loads it; the gateway lets
//     the model call only what is not deferred.
//   - namespace → its functions and custom tools, each named "<namespace>.<name>", the
//     gateway's own namespace convention (backends whose APIs refuse dots map names on
//     the wire). Names records the split, so a call comes back as a function_call (or
//     custom_tool_call) with name and namespace apart. The namespace's description has no
//     place in chat and is not sent.
//   - custom → a chat function taking {"input": string}; its format (a lark or regex
//     grammar, or text) is kept in CustomGrammar. A grammar must be in the subset
//     masking/lark translates to GBNF (Codex's apply_patch, exec and js_repl are): one
//     outside it, a syntax other than lark or regex, or a format without syntax or
//     definition is a 400 naming the construct (param tools[i].format, or the missing
//     member). A grammar in the subset is enforced while decoding: the input's schema is
//     {"type":"string","x-grammar":<format as sent>} (masking.GrammarKeyword), which
//     the grammar (llama-server, the embedded engine) and the structural tag (vLLM,
//     SGLang) hold to the tool's language, written as a JSON string; the model sees the
//     grammar in its prompt's tools. Ollama, OpenAI and Anthropic get the schema and do
//     not enforce the keyword. A call comes back as a custom_tool_call whose input is
//     the decoded string: the raw text, e.g. the patch (cut by the token limit inside it:
//     the text as far as it came). Text-format custom tools keep a free string.
//   - tool_search with execution "client" → a chat function named tool_search, with the
//     parameters and description given (else {"query": string}); a call comes back as a
//     tool_search_call. Without execution "client" it is a hosted tool.
//   - the client-executed built-ins shell, local_shell and apply_patch → chat functions
//     of those names whose parameters are the call's action ({"commands"}, {"command"})
//     or operation ({"type","path","diff"}, the diff held to the V4A diff grammar under
//     the same keyword); a call comes back as a shell_call, local_shell_call or
//     apply_patch_call (a function_call when its arguments are not that shape), and those
//     items and their outputs in history become the chat call and a tool message
//     (builtins.go).
//   - hosted tools (web_search*, file_search, code_interpreter, computer_use_preview,
//     image_generation, mcp, ...) are dropped or refused.
//
// tool_choice: "auto", "none" and "required" as they are; {"type":"function"|"custom",
// "name"} → {"type":"function","function":{"name"}} (a bare name that only a namespaced
// tool has resolves to that tool); allowed_tools → chat's {"type":"allowed_tools",
// "allowed_tools":{"mode","tools":[{"type":"function","function":{"name"}}]}}, without
// dropped hosted tools ("none" when none is left in mode auto); a choice that forces a
// hosted tool is a 400.
//
// # Parameters
//
//   - Mapped: model; input and instructions (above); tools, tool_choice;
//     parallel_tool_calls and an auto/none tool_choice only when there are tools;
//     max_output_tokens → max_completion_tokens; temperature, top_p, presence_penalty,
//     frequency_penalty; reasoning.effort →
//     reasoning_effort; text.format (json_object, json_schema) → response_format;
//     text.verbosity → verbosity; prompt_cache_key, metadata, user (or
//     safety_identifier) as sent; stream (with stream_options.include_usage).
//   - Kept by the gateway, not sent: store, previous_response_id (the gateway keeps the
//     responses and puts their history first); truncation ("auto" sets
//     Request.Truncate: the gateway drops the oldest messages to fit a known context
//     window; "disabled", the default; any other value a 400).
//   - max_tool_calls (Request.MaxToolCalls): as OpenAI's bound on its built-in tools,
//     the bound on the calls the gateway answers itself in one response (its
//     meta-tools and the tools it runs); past it the model's further calls are ignored
//     and the turn ends with what it wrote. Function calls the client runs are not
//     counted.
//   - include: "reasoning.encrypted_content" (Request.EncryptedReasoning) gives each
//     reasoning item an encrypted_content the gateway reads back (EncodeReasoning: the
//     text sealed as a compaction's summary is, "mgr1."), so a client that keeps no
//     state and sends reasoning back only that way (the AI SDK with store: false)
//     gives the engine its reasoning in history; other values are accepted and ignored.
//   - Checked and not honoured: service_tier,
//     top_logprobs (no logprobs are produced).
//   - Refused with a 400 naming the param: background, conversation, prompt.
//
// # Compaction and input tokens
//
// POST /v1/responses/compact takes a Responses body (model, input, instructions, tools
// and the rest as for a response: mapped as above) and runs it, with CompactionPrompt as
// a last user message, store and stream off and tool_choice "none" where there are
// tools, as one ordinary response through the pipeline; its text is the summary. The
// answer is {"id","object":"response.compaction","created_at","output","usage"}: the
// input's user messages as sent, then {"type":"compaction","id","encrypted_content"},
// where encrypted_content is EncodeCompaction's: versioned ("mgc1.") and checked, not
// secret, and valid on any instance and across restarts. POST
// /v1/responses/input_tokens takes a Responses body and answers {"object":
// "response.input_tokens","input_tokens"}: the gateway's count of the chat prompt the
// body makes (with previous_response_id's history first), as /v1/messages/count_tokens
// counts.
//
// # Output
//
// Reasoning becomes a reasoning item (content [{"type":"reasoning_text"}], summary []),
// text a message item with one output_text part, each call its own item; text and
// reasoning that alternate close the open item and open the next. Item ids are the
// prefix (msg_, rs_, fc_, ctc_, tsc_), the response id's 24 hex digits and a digest of
// the response id and the item's index: an item's id names its response (ItemResponse),
// where an item_reference finds it (OutputItem). A completed turn with no text and no call (reasoning at most) gets one empty
// message item, as OpenAI answers one (Writer.WarmUp, generate: false, gets none);
// every ended response has a usage object, zeros when the engine told none. The
// response object has every member the Open Responses specification requires
// (presence_penalty and frequency_penalty as sent or 0, service_tier "default"; each
// function tool echoed with description and parameters, null when not sent, and strict,
// true when not sent: echoTools). Streams
// follow OpenAI's event order, every event with type and
// sequence_number from 0; the SSE event name is the type. The gateway begins a stream
// (response.created, response.in_progress) as soon as the request is admitted, before
// the engine answers, so an error before the model's output is the stream's error and
// response.failed events, not an HTTP status. A stream silent for the gateway's interval
// gets response.in_progress again (Writer.KeepAlive), the response as it stands.
//
// GET /v1/responses/{id}/input_items lists a stored response's input items: InputItem
// gives each an id (its own, else one of the response id and its index) and a message
// its status and content parts; ItemList is the page.
//
// One member is the gateway's, not the API's: "maskgate" (Notice), on the response
// object whole and in every event that carries it, when the request lost something on
// the way: {"dropped_tools":[hosted tool types],"warnings":[what else was left out]}.
// The Responses API has no warnings field; the SDKs keep members they do not know, so
// a client reads it as response.maskgate. Absent when nothing was left out.
package responses
