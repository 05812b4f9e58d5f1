package messages

import (
	"encoding/json"
	"errors"
	"strconv"

	"github.com/maskgate/maskgate/backends/oai"
	"github.com/maskgate/maskgate/gateway/door"
	"github.com/maskgate/maskgate/gateway/pdftext"
)

// Hosted tool policies for Options.Hosted.
const (
	HostedDrop   = "drop"   // leave server tools and their blocks out, listing them in Request.Dropped
	HostedRefuse = "refuse" // answer 400 naming the first one
)

// Options set how Decode treats what the gateway cannot run.
type Options struct {
	// Hosted is what becomes of Anthropic's server tools (web search, code execution,
	// bash, text editor, ...: every tool with a "type" other than "custom") and of the
	// blocks they leave in the conversation (server_tool_use, *_tool_result, ...):
	// HostedDrop (the default, also for any unknown value) or HostedRefuse.
	Hosted string
	// PDF bounds reading a PDF document's text; the zero value is pdftext's defaults.
	PDF pdftext.Limits
}

// Request is a Messages API request in Chat Completions terms. ChatBody writes it out;
// the gateway may change any field before it does.
type Request struct {
	Model     string
	Stream    bool
	MaxTokens int    // 0: none (count_tokens); ChatBody then leaves max_tokens out
	UserID    string // metadata.user_id: the client's identity for its conversation

	// Messages are the chat messages: one system message made of the top-level system
	// prompt first (text blocks joined with a blank line), then the conversation in order.
	Messages []json.RawMessage
	// Tools is the chat tools array of the custom tools, nil when there are none.
	Tools json.RawMessage
	// ToolChoice is the chat tool_choice, nil when absent (or when no tools remain and
	// the choice did not require a call).
	ToolChoice json.RawMessage
	// ParallelToolCalls is false when tool_choice.disable_parallel_tool_use was true.
	ParallelToolCalls *bool

	Temperature json.RawMessage // number, as sent
	TopP        json.RawMessage // number, as sent
	// Stop is stop_sequences (an array of strings, as sent), nil when absent or empty.
	Stop json.RawMessage
	// ResponseFormat is the chat response_format for output_config.format (json_schema).
	ResponseFormat json.RawMessage

	// TopK is top_k as sent. Chat Completions has no top_k, but llama-server, vLLM,
	// SGLang, Ollama and the embedded engine read it in the chat body (the openai
	// backend takes it out): ChatBody writes it after top_p.
	TopK json.RawMessage
	// Thinking is the thinking configuration as sent ({"type":"enabled","budget_tokens"},
	// disabled, adaptive). Chat Completions has no equivalent: ChatBody leaves it out.
	Thinking json.RawMessage

	// Prefill is true when the conversation ends with an assistant message: Anthropic
	// continues that message's text. Chat engines differ (llama-server continues a final
	// assistant message; vLLM needs continue_final_message), so the gateway decides.
	Prefill bool

	// Dropped lists, in order, the type of each server tool left out under HostedDrop,
	// and "mcp_servers" when the request named MCP servers for Anthropic to call.
	Dropped []string
	// DroppedBlocks counts the server-tool blocks (server_tool_use, *_tool_result, ...)
	// left out of the conversation under HostedDrop. redacted_thinking blocks are always
	// left out and not counted.
	DroppedBlocks int
	// Warnings say what the gateway left out of the conversation that the client sent
	// (a PDF it could not read, a document it would have to fetch), each naming the
	// block's path; the model reads a note in the block's place.
	Warnings []string
	// Deferred names the custom tools sent with defer_loading: true (still translated).
	Deferred []string
	// Referenced names the tools that tool_reference blocks in tool results point at, in
	// order of appearance (duplicates kept).
	Referenced []string
	// CacheBreakpoints counts the cache_control markers (top level, system blocks, tools,
	// message blocks and tool_result content): how many places the client wants its
	// prompt prefix kept stable.
	CacheBreakpoints int
}

// Decode reads a POST /v1/messages body. Every error is a 400 invalid_request_error whose
// Param is the field's dotted path (messages.3.content.1).
func Decode(body []byte, opt Options) (*Request, *door.Error) {
	return decode(body, opt, false)
}

// DecodeCount reads a POST /v1/messages/count_tokens body: the same shape as Decode's,
// with max_tokens optional and stream ignored. The Request's ChatBody is what to count:
// the messages and tools as the engine will see them, with no max_tokens and no stream.
func DecodeCount(body []byte, opt Options) (*Request, *door.Error) {
	r, err := decode(body, opt, true)
	if err != nil {
		return nil, err
	}
	r.Stream, r.MaxTokens = false, 0
	return r, nil
}

// CountBody is DecodeCount's chat body.
func CountBody(body []byte, opt Options) ([]byte, *door.Error) {
	r, err := DecodeCount(body, opt)
	if err != nil {
		return nil, err
	}
	return r.ChatBody(), nil
}

// CountResponse is count_tokens' answer: {"input_tokens":n}.
func CountResponse(inputTokens int) []byte {
	b := strconv.AppendInt([]byte(`{"input_tokens":`), int64(inputTokens), 10)
	return append(b, '}')
}

// ChatBody writes the Chat Completions request, members in a fixed order: model,
// messages, tools, tool_choice, parallel_tool_calls, max_tokens, temperature, top_p,
// top_k, stop, response_format, user, stream and stream_options {"include_usage":true}.
func (r *Request) ChatBody() []byte {
	n := 256 + len(r.Tools) + len(r.Model)
	for _, m := range r.Messages {
		n += len(m) + 1
	}
	b := make([]byte, 0, n)
	b = append(b, `{"model":`...)
	b = appendString(b, r.Model)
	b = append(b, `,"messages":`...)
	msgs := make([][]byte, len(r.Messages))
	for i, m := range r.Messages {
		msgs[i] = m
	}
	b = appendArray(b, msgs)
	if len(r.Tools) > 0 {
		b = append(b, `,"tools":`...)
		b = append(b, r.Tools...)
	}
	if len(r.ToolChoice) > 0 {
		b = append(b, `,"tool_choice":`...)
		b = append(b, r.ToolChoice...)
	}
	if r.ParallelToolCalls != nil && len(r.Tools) > 0 {
		b = append(b, `,"parallel_tool_calls":`...)
		b = strconv.AppendBool(b, *r.ParallelToolCalls)
	}
	if r.MaxTokens > 0 {
		b = append(b, `,"max_tokens":`...)
		b = strconv.AppendInt(b, int64(r.MaxTokens), 10)
	}
	for _, m := range []struct {
		key string
		v   json.RawMessage
	}{{"temperature", r.Temperature}, {"top_p", r.TopP}, {"top_k", r.TopK}, {"stop", r.Stop}, {"response_format", r.ResponseFormat}} {
		if len(m.v) > 0 {
			b = append(b, ',', '"')
			b = append(b, m.key...)
			b = append(b, '"', ':')
			b = append(b, m.v...)
		}
	}
	if r.UserID != "" {
		b = append(b, `,"user":`...)
		b = appendString(b, r.UserID)
	}
	if r.Stream {
		b = append(b, `,"stream":true,"stream_options":{"include_usage":true}`...)
	}
	return append(b, '}')
}

// decode reads a Messages request; count relaxes max_tokens for count_tokens.
func decode(body []byte, opt Options, count bool) (*Request, *door.Error) {
	if len(body) == 0 {
		return nil, bad("", "request body is empty; send a JSON Messages API request")
	}
	o, err := oai.ParseObject(body)
	if err != nil {
		var se *oai.SyntaxError
		if errors.As(err, &se) {
			return nil, bad("", "request body is not valid JSON: %s", se.Error())
		}
		return nil, bad("", "request body must be a JSON object")
	}
	r := &Request{}
	t := &translator{opt: opt, r: r, pdf: pdftext.NewBudget(opt.PDF)}

	raw, ok := o.Get("model")
	if !ok || isNull(raw) {
		return nil, bad("model", "Field required")
	}
	if !isString(raw) {
		return nil, bad("model", "must be a string, got %s", kind(raw))
	}
	if unquote(raw) == "" {
		return nil, bad("model", "must not be empty")
	}
	r.Model = unquote(raw)

	if raw, ok := o.Get("max_tokens"); ok && !isNull(raw) {
		n, ok := integer(raw)
		switch {
		case !ok:
			return nil, bad("max_tokens", "must be an integer, got %s", kind(raw))
		case n < 1 && !count:
			return nil, bad("max_tokens", "must be at least 1 (max_tokens 0, to pre-warm a prompt cache, is not supported here)")
		case n > 0:
			r.MaxTokens = n
		}
	} else if !count {
		return nil, bad("max_tokens", "Field required")
	}

	if raw, ok := o.Get("stream"); ok && !isNull(raw) {
		if r.Stream, ok = boolean(raw); !ok {
			return nil, bad("stream", "must be a boolean, got %s", kind(raw))
		}
	}
	if raw, ok := o.Get("metadata"); ok && !isNull(raw) {
		m, ok := object(raw)
		if !ok {
			return nil, bad("metadata", "must be an object, got %s", kind(raw))
		}
		if u, ok := m.Get("user_id"); ok && !isNull(u) {
			if !isString(u) {
				return nil, bad("metadata.user_id", "must be a string, got %s", kind(u))
			}
			r.UserID = unquote(u)
		}
	}
	for _, f := range []struct {
		key string
		dst *json.RawMessage
	}{{"temperature", &r.Temperature}, {"top_p", &r.TopP}, {"top_k", &r.TopK}} {
		if raw, ok := o.Get(f.key); ok && !isNull(raw) {
			if !isNumber(raw) {
				return nil, bad(f.key, "must be a number, got %s", kind(raw))
			}
			if n, err := strconv.Atoi(string(raw)); f.key == "top_k" && (err != nil || n < 0) {
				return nil, bad(f.key, "must be a non-negative integer, got %s", raw)
			}
			*f.dst = raw
		}
	}
	if raw, ok := o.Get("stop_sequences"); ok && !isNull(raw) {
		seqs, ok := elements(raw)
		if !ok {
			return nil, bad("stop_sequences", "must be an array of strings, got %s", kind(raw))
		}
		for i, s := range seqs {
			if !isString(s) {
				return nil, bad("stop_sequences."+strconv.Itoa(i), "must be a string, got %s", kind(s))
			}
		}
		if len(seqs) > 0 {
			r.Stop = raw
		}
	}
	if raw, ok := o.Get("thinking"); ok && !isNull(raw) {
		th, ok := object(raw)
		if !ok {
			return nil, bad("thinking", "must be an object, got %s", kind(raw))
		}
		if typ, ok := th.Get("type"); !ok || !isString(typ) {
			return nil, bad("thinking.type", "Field required: enabled, disabled or adaptive")
		}
		r.Thinking = raw
	}
	if raw, ok := o.Get("output_config"); ok && !isNull(raw) {
		if e := t.outputConfig(raw); e != nil {
			return nil, e
		}
	}
	if raw, ok := o.Get("output_format"); ok && !isNull(raw) && t.r.ResponseFormat == nil {
		// The structured-outputs beta's form of output_config.format, which the Anthropic
		// SDKs now rewrite before sending and older clients still send.
		if e := t.outputFormat(raw, "output_format"); e != nil {
			return nil, e
		}
	}
	if raw, ok := o.Get("cache_control"); ok && !isNull(raw) {
		r.CacheBreakpoints++
	}
	if raw, ok := o.Get("mcp_servers"); ok && !isNull(raw) && string(raw) != "[]" {
		if t.refuse() {
			return nil, bad("mcp_servers", "the MCP connector (Anthropic calling MCP servers) is not supported by this gateway")
		}
		r.Dropped = append(r.Dropped, "mcp_servers")
	}

	// Tools first: tool_choice and the history are checked against them.
	if raw, ok := o.Get("tools"); ok && !isNull(raw) {
		if e := t.tools(raw); e != nil {
			return nil, e
		}
	}
	if raw, ok := o.Get("tool_choice"); ok && !isNull(raw) {
		if e := t.toolChoice(raw); e != nil {
			return nil, e
		}
	}

	if raw, ok := o.Get("system"); ok && !isNull(raw) {
		if e := t.system(raw); e != nil {
			return nil, e
		}
	}
	raw, ok = o.Get("messages")
	if !ok || isNull(raw) {
		return nil, bad("messages", "Field required")
	}
	msgs, ok := elements(raw)
	if !ok {
		return nil, bad("messages", "must be an array of messages, got %s", kind(raw))
	}
	if len(msgs) == 0 {
		return nil, bad("messages", "at least one message is required")
	}
	answered := lastAnswered(msgs)
	for i, m := range msgs {
		t.historic = i < answered
		if e := t.message(i, m); e != nil {
			return nil, e
		}
	}
	r.Prefill = t.lastRole == "assistant"
	if len(r.Messages) == 0 {
		return nil, bad("messages", "nothing is left to send: the messages hold no content this gateway can pass on (server-tool and redacted_thinking blocks are dropped)")
	}
	return r, nil
}

// outputConfig maps output_config.format {"type":"json_schema","schema"} onto
// response_format {"type":"json_schema","json_schema":{"name":"output","schema"}}, the
// schema's bytes as sent. effort has no chat equivalent and is left out.
func (t *translator) outputConfig(raw []byte) *door.Error {
	oc, ok := object(raw)
	if !ok {
		return bad("output_config", "must be an object, got %s", kind(raw))
	}
	f, ok := oc.Get("format")
	if !ok || isNull(f) {
		return nil
	}
	return t.outputFormat(f, "output_config.format")
}

// outputFormat maps a format {"type":"json_schema","schema"} at path (output_config.format,
// or the beta's top-level output_format) onto response_format.
func (t *translator) outputFormat(f []byte, path string) *door.Error {
	fo, ok := object(f)
	if !ok {
		return bad(path, "must be an object, got %s", kind(f))
	}
	typ, _ := fo.Get("type")
	if !isString(typ) || unquote(typ) != "json_schema" {
		return bad(path+".type", "only json_schema is supported")
	}
	schema, ok := fo.Get("schema")
	if !ok || !isObject(schema) {
		return bad(path+".schema", "must be a JSON schema object")
	}
	b := make([]byte, 0, len(schema)+64)
	b = append(b, `{"type":"json_schema","json_schema":{"name":"output","schema":`...)
	b = append(b, schema...)
	t.r.ResponseFormat = append(b, "}}"...)
	return nil
}
