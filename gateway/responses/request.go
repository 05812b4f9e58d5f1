package responses

import (
	"encoding/json"
	"errors"
	"slices"

	"github.com/maskgate/maskgate/backends/oai"
	"github.com/maskgate/maskgate/gateway/door"
	"github.com/maskgate/maskgate/gateway/pdftext"
)

// Request is a decoded Responses request: what the gateway needs to run it as Chat
// Completions, and what the Writer needs to answer it. Its raw values alias the body
// given to Decode, which must not change afterwards.
type Request struct {
	Model  string
	Stream bool
	Store  bool // true when absent, as OpenAI
	// Truncate is truncation: "auto": the oldest input may be dropped so that the
	// request fits the model's context window (the gateway does it where it knows the
	// window); "disabled", the default, leaves a request that does not fit a 400.
	Truncate bool
	// MaxToolCalls is max_tool_calls: how many calls to tools the gateway runs itself
	// (OpenAI's built-in tools) the response may make; -1 when absent or null.
	MaxToolCalls int

	PreviousResponseID string
	// EncryptedReasoning is include's "reasoning.encrypted_content": each reasoning
	// item of the answer carries its text sealed (EncodeReasoning), for a client that
	// keeps no state (store: false) and sends reasoning back only that way.
	EncryptedReasoning bool
	PromptCacheKey     string
	User               string          // "user", or "safety_identifier" when user is absent
	Metadata           json.RawMessage // raw; nil when absent or null
	Instructions       json.RawMessage // the raw string; nil when absent or null

	// Input is the input items as sent, raw (a string input becomes one user message
	// item), for storage.
	Input []json.RawMessage
	// Messages are the chat messages of this request: the instructions as a "system"
	// message first, then InputMessages.
	Messages []json.RawMessage
	// InputMessages are the chat messages translated from input alone. Instructions are
	// not carried over to a later response (OpenAI's rule for previous_response_id), so
	// this, with the Writer's Messages, is what a stored turn keeps as history. Each is
	// written by the decoder, so none aliases the body Decode read.
	InputMessages []json.RawMessage

	// Tools is the chat "tools" array (nil when none): the declared tools translated,
	// then those loaded by LoadTools, then those the input's tool_search_output and
	// additional_tools items loaded. A name is defined once: the first definition wins.
	Tools json.RawMessage
	// ToolChoice is the chat "tool_choice" translated; nil when absent.
	ToolChoice json.RawMessage
	// Deferred names the declared tools sent with defer_loading: true that no tool
	// search of this conversation (tool_search_output, additional_tools, LoadTools) has
	// loaded yet: in the engine's prompt, not yet callable.
	Deferred []string
	// Warnings say what the gateway left out of the input (an input_file it could not
	// read or would have to fetch), each naming the part's path; the model reads a note in
	// its place.
	Warnings []string
	// Dropped names the hosted tool types (and hosted tools' input item types) left out
	// under Options.Hosted "drop", each once, in order of appearance.
	Dropped []string

	// Names maps each chat function name of Tools to the tool the client declared, so
	// a call comes back as the right output item.
	Names map[string]ToolName
	// CustomGrammar holds each custom tool's "format" as sent ({"type":"grammar",
	// "syntax":"lark"|"regex","definition":...} or {"type":"text"}), by chat function
	// name. The chat function takes {"input": string}; the grammar is not enforced here.
	CustomGrammar map[string]json.RawMessage
	// Loaded are the Responses tool definitions that this request's input loaded
	// (tool_search_output and additional_tools items), raw: slices of the body Decode
	// read, which a caller that keeps them past the body must copy. A stored turn keeps them, and
	// a later request that continues it with previous_response_id passes them to
	// LoadTools, so tools found by an earlier search stay callable.
	Loaded []json.RawMessage

	src            fields // the body
	model          []byte
	system         []byte // the instructions' system message
	declared       []chatTool
	history        []chatTool
	fromInput      []chatTool
	responseFormat []byte
	opt            Options
}

// ToolName is what a chat function name of Request.Tools stands for.
type ToolName struct {
	// Kind is "function", "custom" (a call is a custom_tool_call with the {"input"}
	// argument as its input) or "tool_search" (a client-executed tool search: a call is
	// a tool_search_call).
	Kind string
	// Namespace is the namespace tool that declared it, "" for none. Its chat name is
	// Namespace + "." + Name.
	Namespace string
	Name      string
}

// Options tune Decode.
type Options struct {
	// Hosted is what becomes of tools that OpenAI runs itself (web_search, file_search,
	// code_interpreter, mcp, ...) and of their items in the input: "drop" (the default)
	// leaves them out and lists them in Request.Dropped; "refuse" answers 400.
	Hosted string
	// PDF bounds reading an input_file's PDF; the zero value is pdftext's defaults.
	PDF pdftext.Limits
	// Reference finds the item an item_reference input item names: an output item of
	// one of the caller's stored responses, raw (ItemResponse names the response,
	// OutputItem finds the item in it), nil when there is none the caller may read. An
	// error is the request's answer. Without it every item_reference is a 400.
	Reference func(id string) (json.RawMessage, *door.Error)
}

func (o Options) refuse() bool { return o.Hosted == "refuse" }

// chatTool is one translated tool.
type chatTool struct {
	deferred bool // declared with defer_loading: true
	name     string
	def      []byte
	kind     ToolName
	grammar  json.RawMessage
	param    string
}

// Decode reads a POST /v1/responses body. Its errors are 400s with Type
// invalid_request_error and Param naming the field.
func Decode(body []byte, opt Options) (*Request, *door.Error) {
	o, err := oai.ParseObject(body)
	if err != nil {
		var se *oai.SyntaxError
		if errors.As(err, &se) {
			return nil, bad("", "invalid_json", "The request body is not valid JSON: %s.", se.Error())
		}
		return nil, bad("", "invalid_type", "The request body must be a JSON object.")
	}
	f := fields{o: o}
	r := &Request{src: f, Store: true, opt: opt, MaxToolCalls: -1}
	var e *door.Error
	if r.Model, e = f.need("model"); e != nil {
		return nil, e
	}
	r.model = f.get("model")
	if r.Stream, e = f.boolean("stream", false); e != nil {
		return nil, e
	}
	if r.Store, e = f.boolean("store", true); e != nil {
		return nil, e
	}
	if bg, e := f.boolean("background", false); e != nil {
		return nil, e
	} else if bg {
		return nil, unsupported("background", "Background responses are not supported by this gateway; leave 'background' out.")
	}
	if f.get("conversation") != nil {
		return nil, unsupported("conversation", "Conversations are not supported by this gateway; continue a response with 'previous_response_id', or send the whole input.")
	}
	if f.get("prompt") != nil {
		return nil, unsupported("prompt", "Stored prompt templates are not supported by this gateway; send 'instructions' and 'input' instead.")
	}
	if r.PreviousResponseID, e = f.str("previous_response_id"); e != nil {
		return nil, e
	}
	if r.PromptCacheKey, e = f.str("prompt_cache_key"); e != nil {
		return nil, e
	}
	if r.User, e = f.str("user"); e != nil {
		return nil, e
	}
	if sid, e := f.str("safety_identifier"); e != nil {
		return nil, e
	} else if r.User == "" {
		r.User = sid
	}
	if r.Metadata, e = f.rawObject("metadata"); e != nil {
		return nil, e
	}
	if r.Instructions, e = f.rawStr("instructions"); e != nil {
		return nil, e
	}
	if e = r.checkParams(); e != nil {
		return nil, e
	}

	d := &decoder{r: r, opt: opt, pdf: pdftext.NewBudget(opt.PDF)}
	if tools, e := f.rawArray("tools"); e != nil {
		return nil, e
	} else if tools != nil {
		seen := map[string]string{}
		for i, t := range elements(tools) {
			ts, e := d.tool(t, indexed("tools", i), "")
			if e != nil {
				return nil, e
			}
			for _, ct := range ts {
				if at, dup := seen[ct.name]; dup {
					return nil, invalid(ct.param, "Duplicate tool name '%s' (also at '%s'); tool names must be unique.", ct.name, at)
				}
				seen[ct.name] = ct.param
			}
			r.declared = append(r.declared, ts...)
		}
	}

	if e = d.input(f.get("input")); e != nil {
		return nil, e
	}
	r.InputMessages = d.c.msgs
	if r.Instructions != nil {
		r.system = newObj(len(r.Instructions)+32).str("role", "system").raw("content", r.Instructions).done()
		r.Messages = append(r.Messages, r.system)
	}
	r.Messages = append(r.Messages, r.InputMessages...)
	r.assemble()

	if e = d.toolChoice(f.get("tool_choice")); e != nil {
		return nil, e
	}
	return r, nil
}

// checkParams checks the types of the sampling and format parameters ChatBody copies,
// so that what it writes is a valid chat request.
func (r *Request) checkParams() *door.Error {
	f := r.src
	for _, k := range []string{"temperature", "top_p", "presence_penalty", "frequency_penalty"} {
		if _, e := f.rawNumber(k); e != nil {
			return e
		}
	}
	for _, k := range []string{"max_output_tokens", "max_tool_calls", "top_logprobs"} {
		v, e := f.rawNumber(k)
		if e != nil {
			return e
		}
		var n int64
		if v != nil && (json.Unmarshal(v, &n) != nil || n < 0 || (n == 0 && k == "max_output_tokens")) {
			return invalid(k, "Invalid '%s': expected a positive integer, got %s.", k, v)
		}
		if k == "max_tool_calls" && v != nil {
			r.MaxToolCalls = int(min(n, 1<<20))
		}
	}
	if _, e := f.rawBool("parallel_tool_calls"); e != nil {
		return e
	}
	for _, k := range []string{"truncation", "service_tier"} {
		if _, e := f.rawStr(k); e != nil {
			return e
		}
	}
	switch t := string(f.get("truncation")); t {
	case "", `"disabled"`:
	case `"auto"`:
		r.Truncate = true
	default:
		return invalid("truncation", "Invalid value: %s. Supported values are: 'auto' and 'disabled'.", t)
	}
	if inc, e := f.rawArray("include"); e != nil {
		return e
	} else if inc != nil {
		for j, v := range elements(inc) {
			var s string
			if json.Unmarshal(v, &s) != nil {
				return invalid(indexed("include", j), "Invalid type for 'include[%d]': expected a string.", j)
			}
			r.EncryptedReasoning = r.EncryptedReasoning || s == "reasoning.encrypted_content"
		}
	}
	if rs, e := f.rawObject("reasoning"); e != nil {
		return e
	} else if rs != nil {
		rf, _ := object(rs, "reasoning")
		if _, e := rf.rawStr("effort"); e != nil {
			return e
		}
	}
	text, e := f.rawObject("text")
	if e != nil || text == nil {
		return e
	}
	tf, _ := object(text, "text")
	if _, e := tf.rawStr("verbosity"); e != nil {
		return e
	}
	format, e := tf.rawObject("format")
	if e != nil || format == nil {
		return e
	}
	ff, _ := object(format, "text.format")
	typ, e := ff.need("type")
	if e != nil {
		return e
	}
	switch typ {
	case "text":
	case "json_object":
		r.responseFormat = []byte(`{"type":"json_object"}`)
	case "json_schema":
		if _, e := ff.need("name"); e != nil {
			return e
		}
		schema, e := ff.rawObject("schema")
		if e != nil {
			return e
		}
		if schema == nil {
			return missing("text.format.schema")
		}
		desc, e := ff.rawStr("description")
		if e != nil {
			return e
		}
		strict, e := ff.rawBool("strict")
		if e != nil {
			return e
		}
		js := newObj(len(format)+16).raw("name", ff.get("name"))
		if desc != nil {
			js.raw("description", desc)
		}
		js.raw("schema", schema)
		if strict != nil {
			js.raw("strict", strict)
		}
		r.responseFormat = newObj(len(format)+48).str("type", "json_schema").raw("json_schema", js.done()).done()
	default:
		return invalid("text.format.type", "Invalid value for 'text.format.type': %q; expected text, json_object or json_schema.", typ)
	}
	return nil
}

// LoadTools adds Responses tool definitions that earlier turns' tool searches loaded
// (their Request.Loaded), before those this request's input loads, so a call to one maps
// back and the engine can call it. Names already defined are skipped.
func (r *Request) LoadTools(tools []json.RawMessage) *door.Error {
	d := &decoder{r: r, opt: r.opt, pdf: pdftext.NewBudget(r.opt.PDF)}
	for i, t := range tools {
		ts, e := d.tool(t, indexed("previous_tools", i), "")
		if e != nil {
			return e
		}
		r.history = append(r.history, ts...)
	}
	r.assemble()
	return nil
}

// assemble builds Tools, Names and CustomGrammar from the declared, history and input
// tools; the first definition of a name wins.
func (r *Request) assemble() {
	r.Names = map[string]ToolName{}
	r.CustomGrammar = map[string]json.RawMessage{}
	found := map[string]bool{}
	for _, list := range [][]chatTool{r.history, r.fromInput} {
		for _, t := range list {
			found[t.name] = true
		}
	}
	r.Deferred = nil
	for _, t := range r.declared {
		if t.deferred && !found[t.name] {
			r.Deferred = append(r.Deferred, t.name)
		}
	}
	var defs [][]byte
	for _, list := range [][]chatTool{r.declared, r.history, r.fromInput} {
		for _, t := range list {
			if _, dup := r.Names[t.name]; dup {
				continue
			}
			r.Names[t.name] = t.kind
			if t.grammar != nil {
				r.CustomGrammar[t.name] = t.grammar
			}
			defs = append(defs, t.def)
		}
	}
	r.Tools = nil
	if len(defs) > 0 {
		r.Tools = array(defs)
	}
}

// drop records a hosted type left out.
func (r *Request) drop(typ string) {
	if !slices.Contains(r.Dropped, typ) {
		r.Dropped = append(r.Dropped, typ)
	}
}

// ChatBody is the Chat Completions request the pipeline runs: the instructions' system
// message, then history (the chat messages of the earlier turns that
// previous_response_id continues; nil for none), then this request's input messages;
// with the Responses parameters that chat has, renamed where chat names them otherwise.
// Parameters chat does not have (store, include, previous_response_id, truncation,
// max_tool_calls, top_logprobs without logprobs to carry them, service_tier, ...) are
// left out. Every client value is copied as it was sent.
func (r *Request) ChatBody(history []json.RawMessage) []byte {
	f := r.src
	msgs := make([]json.RawMessage, 0, 1+len(history)+len(r.InputMessages))
	if r.system != nil {
		msgs = append(msgs, r.system)
	}
	msgs = append(msgs, history...)
	msgs = append(msgs, r.InputMessages...)
	m := rawArray(msgs)

	size := len(m) + len(r.Tools) + 256
	b := newObj(size).raw("model", r.model).raw("messages", m)
	if r.Stream {
		b.raw("stream", []byte("true")).raw("stream_options", []byte(`{"include_usage":true}`))
	}
	if r.Tools != nil {
		b.raw("tools", r.Tools)
		if r.ToolChoice != nil {
			b.raw("tool_choice", r.ToolChoice)
		}
		if v := f.get("parallel_tool_calls"); v != nil {
			b.raw("parallel_tool_calls", v)
		}
	} else if r.ToolChoice != nil && string(r.ToolChoice) != `"auto"` && string(r.ToolChoice) != `"none"` {
		// A choice that needs a tool, with none: the engine answers for it.
		b.raw("tool_choice", r.ToolChoice)
	}
	if v := f.get("max_output_tokens"); v != nil {
		b.raw("max_completion_tokens", v)
	}
	for _, k := range []string{"temperature", "top_p", "presence_penalty", "frequency_penalty"} {
		if v := f.get(k); v != nil {
			b.raw(k, v)
		}
	}
	if r.responseFormat != nil {
		b.raw("response_format", r.responseFormat)
	}
	if text := f.get("text"); text != nil {
		tf, _ := object(text, "text")
		if v := tf.get("verbosity"); v != nil {
			b.raw("verbosity", v)
		}
	}
	if rs := f.get("reasoning"); rs != nil {
		rf, _ := object(rs, "reasoning")
		if v := rf.get("effort"); v != nil {
			b.raw("reasoning_effort", v)
		}
	}
	for _, k := range []string{"prompt_cache_key", "user", "safety_identifier", "metadata"} {
		if v := f.get(k); v != nil {
			b.raw(k, v)
		}
	}
	return b.done()
}
