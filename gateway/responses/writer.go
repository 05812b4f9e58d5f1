package responses

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strconv"
	"strings"
	"time"

	"github.com/maskgate/maskgate/backends/oai"
	"github.com/maskgate/maskgate/gateway/door"
)

// Writer turns the pipeline's answer into a Responses response: server-sent events as
// it comes when streaming, one response object at End when not. It is a door.Sink.
type Writer struct {
	ev     door.Events
	stream bool
	id     string
	r      *Request
	// Now is the clock completed_at is read from; NewWriter sets time.Now, the gateway
	// its own.
	Now func() time.Time
	// Completed, if set, is called once the response is whole (Body holds it), before
	// its last event or body reaches the client: a store that keeps it then holds it
	// before the client can continue it, from any gateway.
	Completed func()

	model       string
	created     int64
	completedAt int64
	seq         int64
	began       bool
	status      string // "" until End or Fail
	incomplete  string // incomplete_details.reason
	failure     *door.Error
	usage       *oai.Usage
	items       []*outItem
	open        *outItem // the message or reasoning item text goes to
	body        []byte
	gone        error // the client is gone: every later event fails with it
}

var _ door.Sink = (*Writer)(nil)

// outItem is one output item; final is its JSON once closed.
type outItem struct {
	kind  string // "message" or "reasoning" while open
	id    string
	text  strings.Builder
	final []byte
}

// NewWriter returns the sink of the response id ("resp_..."), answering r: events go to
// ev when stream is set (ev may be nil otherwise).
func NewWriter(ev door.Events, stream bool, id string, r *Request) *Writer {
	if r == nil {
		r, _ = Decode([]byte(`{"model":"unknown"}`), Options{})
	}
	return &Writer{ev: ev, stream: stream, id: id, r: r, Now: time.Now, model: r.Model}
}

// Body is the whole response object after End (streaming or not), or after Fail when
// not streaming.
func (w *Writer) Body() []byte { return w.body }

// Status is the response's status: "in_progress" until End or Fail, then "completed",
// "incomplete" or "failed".
func (w *Writer) Status() string {
	if w.status == "" {
		return "in_progress"
	}
	return w.status
}

// Output is the output items produced so far, closed ones as the response lists them.
func (w *Writer) Output() []json.RawMessage {
	out := make([]json.RawMessage, 0, len(w.items))
	for _, it := range w.items {
		if it.final != nil {
			out = append(out, it.final)
		} else {
			out = append(out, w.itemJSON(it, "in_progress"))
		}
	}
	return out
}

// Messages is Output as chat messages, the form history takes: one assistant message
// with content, reasoning_content and tool_calls (a custom tool call's arguments are
// {"input": ...}; a tool search call is a call to tool_search). It is what translating
// Output as input items gives, so history kept by the gateway and the same items sent
// back by the client make the same chat request.
func (w *Writer) Messages() []json.RawMessage {
	c := conv{}
	for i, it := range w.Output() {
		_ = c.item(indexed("output", i), it) // the writer's own items: they translate
	}
	c.flush()
	return c.msgs
}

// emit writes one event: type and sequence_number first, then what fill adds.
func (w *Writer) emit(typ string, fill func(o *obj)) error {
	if !w.stream || w.ev == nil {
		return nil
	}
	if w.gone != nil {
		return w.gone
	}
	o := newObj(256).str("type", typ).num("sequence_number", w.seq)
	w.seq++
	if fill != nil {
		fill(o)
	}
	if err := w.ev.Event(typ, o.done()); err != nil {
		w.gone = err
		return err
	}
	return nil
}

// Begin starts the response: response.created and response.in_progress when streaming.
func (w *Writer) Begin(h door.Head) error {
	if w.began {
		return nil
	}
	w.began = true
	if h.Model != "" {
		w.model = h.Model
	}
	w.created = h.Created
	if w.created == 0 {
		w.created = w.Now().Unix()
	}
	resp := w.response("in_progress")
	if err := w.emit("response.created", func(o *obj) { o.raw("response", resp) }); err != nil {
		return err
	}
	return w.emit("response.in_progress", func(o *obj) { o.raw("response", resp) })
}

func (w *Writer) begin() error {
	if w.began {
		return nil
	}
	return w.Begin(door.Head{Model: w.r.Model})
}

// itemID is an output item's id: the prefix and a digest of the response id and the
// item's index, unique per response and the same in every mode.
func (w *Writer) itemID(prefix string, index int) string {
	sum := sha256.Sum256([]byte(w.id + "/" + strconv.Itoa(index)))
	return prefix + hex.EncodeToString(sum[:24])
}

// Reasoning adds reasoning text, in a reasoning item.
func (w *Writer) Reasoning(delta string) error { return w.textDelta("reasoning", delta) }

// Text adds answer text, in a message item.
func (w *Writer) Text(delta string) error { return w.textDelta("message", delta) }

func (w *Writer) textDelta(kind, delta string) error {
	if err := w.begin(); err != nil {
		return err
	}
	if delta == "" {
		return w.gone
	}
	if w.open == nil || w.open.kind != kind {
		if err := w.closeOpen("completed"); err != nil {
			return err
		}
		if err := w.openItem(kind); err != nil {
			return err
		}
	}
	it := w.open
	it.text.WriteString(delta)
	idx := len(w.items) - 1
	if kind == "message" {
		return w.emit("response.output_text.delta", func(o *obj) {
			o.str("item_id", it.id).num("output_index", int64(idx)).num("content_index", 0).str("delta", delta).raw("logprobs", []byte("[]"))
		})
	}
	return w.emit("response.reasoning_text.delta", func(o *obj) {
		o.str("item_id", it.id).num("output_index", int64(idx)).num("content_index", 0).str("delta", delta)
	})
}

func (w *Writer) openItem(kind string) error {
	prefix := "msg_"
	if kind == "reasoning" {
		prefix = "rs_"
	}
	idx := len(w.items)
	it := &outItem{kind: kind, id: w.itemID(prefix, idx)}
	w.items = append(w.items, it)
	w.open = it
	added := w.itemJSON(it, "in_progress")
	if err := w.emit("response.output_item.added", func(o *obj) {
		o.num("output_index", int64(idx)).raw("item", added)
	}); err != nil {
		return err
	}
	return w.emit("response.content_part.added", func(o *obj) {
		o.str("item_id", it.id).num("output_index", int64(idx)).num("content_index", 0).raw("part", emptyPart(kind))
	})
}

func emptyPart(kind string) []byte {
	if kind == "message" {
		return outputText("")
	}
	return reasoningText("")
}

func outputText(text string) []byte {
	return newObj(len(text)+64).str("type", "output_text").raw("annotations", []byte("[]")).raw("logprobs", []byte("[]")).str("text", text).done()
}

func reasoningText(text string) []byte {
	return newObj(len(text)+40).str("type", "reasoning_text").str("text", text).done()
}

// itemJSON is an open (or just closed) text item: with no content while in progress,
// as output_item.added shows it.
func (w *Writer) itemJSON(it *outItem, status string) []byte {
	text := it.text.String()
	if it.kind == "message" {
		content := []byte("[]")
		if status != "in_progress" {
			content = array([][]byte{outputText(text)})
		}
		return newObj(len(content)+200).str("id", it.id).str("type", "message").str("status", status).
			raw("content", content).str("role", "assistant").done()
	}
	content := []byte("[]")
	if status != "in_progress" {
		content = array([][]byte{reasoningText(text)})
	}
	return newObj(len(content)+200).str("id", it.id).str("type", "reasoning").raw("summary", []byte("[]")).
		raw("content", content).done()
}

// closeOpen ends the open text item with its done events.
func (w *Writer) closeOpen(status string) error {
	it := w.open
	if it == nil {
		return nil
	}
	w.open = nil
	idx := int64(len(w.items) - 1)
	text := it.text.String()
	it.final = w.itemJSON(it, status)
	var err error
	if it.kind == "message" {
		err = w.emit("response.output_text.done", func(o *obj) {
			o.str("item_id", it.id).num("output_index", idx).num("content_index", 0).str("text", text).raw("logprobs", []byte("[]"))
		})
		if err == nil {
			err = w.emit("response.content_part.done", func(o *obj) {
				o.str("item_id", it.id).num("output_index", idx).num("content_index", 0).raw("part", outputText(text))
			})
		}
	} else {
		err = w.emit("response.reasoning_text.done", func(o *obj) {
			o.str("item_id", it.id).num("output_index", idx).num("content_index", 0).str("text", text)
		})
		if err == nil {
			err = w.emit("response.content_part.done", func(o *obj) {
				o.str("item_id", it.id).num("output_index", idx).num("content_index", 0).raw("part", reasoningText(text))
			})
		}
	}
	if err != nil {
		return err
	}
	return w.emit("response.output_item.done", func(o *obj) { o.num("output_index", idx).raw("item", it.final) })
}

// ToolCall adds one call the client must run: a function_call, or a custom_tool_call
// or tool_search_call when the name is a custom tool's or the client tool search's.
func (w *Writer) ToolCall(c oai.ToolCall) error {
	if err := w.begin(); err != nil {
		return err
	}
	if err := w.closeOpen("completed"); err != nil {
		return err
	}
	idx := len(w.items)
	callID := c.ID
	if callID == "" {
		callID = w.itemID("call_", idx)
	}
	name, args := c.Function.Name, c.Function.Arguments
	tn, ok := w.r.Names[name]
	if !ok {
		tn = ToolName{Kind: "function", Name: name}
	}
	it := &outItem{kind: tn.Kind}
	w.items = append(w.items, it)
	var added []byte
	var delta, doneEv, doneKey, doneVal string
	switch tn.Kind {
	case "custom":
		input := customInput(args)
		it.id = w.itemID("ctc_", idx)
		build := func(in string) []byte {
			o := newObj(len(in)+200).str("id", it.id).str("type", "custom_tool_call").str("call_id", callID)
			if tn.Namespace != "" {
				o.str("namespace", tn.Namespace)
			}
			return o.str("name", tn.Name).str("input", in).done()
		}
		added, it.final = build(""), build(input)
		delta, doneEv, doneKey, doneVal = "response.custom_tool_call_input.delta", "response.custom_tool_call_input.done", "input", input
	case "tool_search":
		it.id = w.itemID("tsc_", idx)
		a := toolSearchArguments(args)
		build := func(status string) []byte {
			return newObj(len(a)+200).str("id", it.id).str("type", "tool_search_call").str("status", status).
				str("call_id", callID).str("execution", "client").raw("arguments", a).done()
		}
		added, it.final = build("in_progress"), build("completed")
	default:
		it.kind = "function"
		it.id = w.itemID("fc_", idx)
		build := func(status, a string) []byte {
			o := newObj(len(a)+200).str("id", it.id).str("type", "function_call").str("status", status).
				str("arguments", a).str("call_id", callID)
			if tn.Namespace != "" {
				o.str("namespace", tn.Namespace)
			}
			return o.str("name", tn.Name).done()
		}
		added, it.final = build("in_progress", ""), build("completed", args)
		delta, doneEv, doneKey, doneVal = "response.function_call_arguments.delta", "response.function_call_arguments.done", "arguments", args
	}
	if err := w.emit("response.output_item.added", func(o *obj) { o.num("output_index", int64(idx)).raw("item", added) }); err != nil {
		return err
	}
	if doneEv != "" {
		if doneVal != "" {
			if err := w.emit(delta, func(o *obj) {
				o.str("item_id", it.id).num("output_index", int64(idx)).str("delta", doneVal)
			}); err != nil {
				return err
			}
		}
		if err := w.emit(doneEv, func(o *obj) {
			o.str("item_id", it.id).num("output_index", int64(idx)).str(doneKey, doneVal)
		}); err != nil {
			return err
		}
	}
	return w.emit("response.output_item.done", func(o *obj) { o.num("output_index", int64(idx)).raw("item", it.final) })
}

// customInput is a custom tool call's input: the "input" string of the chat arguments;
// for arguments the token limit cut inside that string ({"input": "*** Begin Pa), the
// text as far as it came; arguments of another shape are the input themselves.
func customInput(args string) string {
	var a struct {
		Input *string `json:"input"`
	}
	if json.Unmarshal([]byte(args), &a) == nil && a.Input != nil {
		return *a.Input
	}
	if in, ok := cutInput(args); ok {
		return in
	}
	return args
}

// cutInput reads arguments cut inside the input string, as a model under a custom
// tool's grammar writes them: {, the key "input", a colon, an opening quote (JSON
// whitespace between them), then the string's characters up to where the text ends. An
// escape the cut left unfinished is dropped. It reports false for anything else,
// including a string that was closed (the arguments were then whole, or not this shape).
func cutInput(args string) (string, bool) {
	rest, ok := strings.CutPrefix(strings.TrimLeft(args, " \t\n\r"), "{")
	if !ok {
		return "", false
	}
	rest, ok = strings.CutPrefix(strings.TrimLeft(rest, " \t\n\r"), `"input"`)
	if !ok {
		return "", false
	}
	rest, ok = strings.CutPrefix(strings.TrimLeft(rest, " \t\n\r"), ":")
	if !ok {
		return "", false
	}
	rest, ok = strings.CutPrefix(strings.TrimLeft(rest, " \t\n\r"), `"`)
	if !ok {
		return "", false
	}
	// The longest prefix that is a whole run of characters and escapes, quoted, is a
	// JSON string; an unescaped quote means the string closed.
	end := 0
	for i := 0; i < len(rest); {
		switch c := rest[i]; {
		case c == '"':
			return "", false
		case c == '\\':
			n := 2
			if i+1 < len(rest) && rest[i+1] == 'u' {
				n = 6
			}
			if i+n > len(rest) {
				i = len(rest)
				continue
			}
			i += n
		default:
			i++
		}
		end = i
	}
	var s string
	if json.Unmarshal([]byte(`"`+rest[:end]+`"`), &s) != nil {
		return "", false
	}
	return s, true
}

// toolSearchArguments are a tool search call's arguments as the item carries them: the
// chat arguments' JSON object as it is, or, when they are not one, as a string.
func toolSearchArguments(args string) []byte {
	t := strings.TrimSpace(args)
	if strings.HasPrefix(t, "{") && json.Valid([]byte(t)) {
		return []byte(t)
	}
	return quote(args)
}

// End completes the response: response.completed, or response.incomplete when the
// answer was cut at the token limit (finish "length") or filtered.
func (w *Writer) End(finish string, usage *oai.Usage) error {
	if w.status != "" {
		return nil
	}
	if err := w.begin(); err != nil {
		return err
	}
	status := "completed"
	switch finish {
	case oai.FinishLength:
		status, w.incomplete = "incomplete", "max_output_tokens"
	case "content_filter":
		status, w.incomplete = "incomplete", "content_filter"
	}
	if err := w.closeOpen(status); err != nil {
		return err
	}
	w.status, w.usage = status, usage
	if status == "completed" {
		w.completedAt = w.Now().Unix()
	}
	resp := w.response(status)
	w.body = resp // streamed too: a stored response is read back whole
	if w.Completed != nil {
		w.Completed() // before the client can see the end and send the next turn
	}
	if !w.stream {
		return nil
	}
	return w.emit("response."+status, func(o *obj) { o.raw("response", resp) })
}

// Fail ends a begun response with e: an "error" event, then response.failed carrying
// the response with its error. An open text item stays as it was, "incomplete". Not
// streaming, Body is the failed response (the door answers e with ErrorBody instead).
func (w *Writer) Fail(e door.Error) {
	if w.status != "" {
		return
	}
	_ = w.begin()
	if it := w.open; it != nil {
		w.open = nil
		it.final = w.itemJSON(it, "incomplete")
	}
	w.status, w.failure = "failed", &e
	resp := w.response("failed")
	if !w.stream {
		w.body = resp
		return
	}
	_ = w.emit("error", func(o *obj) { errorFields(o, e) })
	_ = w.emit("response.failed", func(o *obj) { o.raw("response", resp) })
}

// ErrorEvent is the data of the stream's error event for e, numbered seq: what Fail
// sends, for a stream the gateway relays rather than writes (its own events numbered
// up to seq-1).
func ErrorEvent(e door.Error, seq int64) []byte {
	o := newObj(256).str("type", "error").num("sequence_number", seq)
	errorFields(o, e)
	return o.done()
}

func errorFields(o *obj, e door.Error) {
	code := e.Code
	if code == "" {
		code = responseErrorCode(e)
	}
	o.str("code", code).str("message", e.Message)
	if e.Param != "" {
		o.str("param", e.Param)
	} else {
		o.raw("param", []byte("null"))
	}
}

// responseErrorCodes are the codes a response's error may carry.
var responseErrorCodes = map[string]bool{
	"server_error": true, "rate_limit_exceeded": true, "invalid_prompt": true, "vector_store_timeout": true,
	"invalid_image": true, "invalid_image_format": true, "invalid_base64_image": true, "invalid_image_url": true,
	"image_too_large": true, "image_too_small": true, "image_parse_error": true,
	"image_content_policy_violation": true, "invalid_image_mode": true, "image_file_too_large": true,
	"unsupported_image_media_type": true, "empty_image_file": true, "failed_to_download_image": true,
	"image_file_not_found": true,
	// Not in the API reference's list, but what Codex reads in response.failed to
	// compact its history (codex-rs: classify_provider_error), as it does in the
	// envelope of an HTTP error.
	oai.CodeContextLength: true,
}

// responseErrorCode is the response error code for e: its own when it is one of them,
// else rate_limit_exceeded for a 429, invalid_prompt for another client error,
// server_error for the rest.
func responseErrorCode(e door.Error) string {
	switch {
	case responseErrorCodes[e.Code]:
		return e.Code
	case e.Status == 429 || e.Type == "rate_limit_error":
		return "rate_limit_exceeded"
	case e.Type == "invalid_request_error" || (e.Status >= 400 && e.Status < 500):
		return "invalid_prompt"
	}
	return "server_error"
}

// response is the response object in its present state.
func (w *Writer) response(status string) []byte {
	f := w.r.src
	items := make([][]byte, 0, len(w.items))
	if status != "in_progress" {
		for _, it := range w.Output() {
			items = append(items, it)
		}
	}
	out := array(items)
	o := newObj(len(out)+1024).str("id", w.id).str("object", "response").num("created_at", w.created).
		str("status", status).raw("background", []byte("false"))
	if w.completedAt != 0 {
		o.num("completed_at", w.completedAt)
	} else {
		o.raw("completed_at", []byte("null"))
	}
	if e := w.failure; e != nil {
		o.raw("error", newObj(len(e.Message)+64).str("code", responseErrorCode(*e)).str("message", e.Message).done())
	} else {
		o.raw("error", []byte("null"))
	}
	if w.incomplete != "" {
		o.raw("incomplete_details", newObj(48).str("reason", w.incomplete).done())
	} else {
		o.raw("incomplete_details", []byte("null"))
	}
	o.rawOr("instructions", f.get("instructions"), "null").
		rawOr("max_output_tokens", f.get("max_output_tokens"), "null").
		rawOr("max_tool_calls", f.get("max_tool_calls"), "null").
		str("model", w.model).
		raw("output", out).
		rawOr("parallel_tool_calls", f.get("parallel_tool_calls"), "true").
		rawOr("previous_response_id", f.get("previous_response_id"), "null").
		rawOr("prompt_cache_key", f.get("prompt_cache_key"), "null").
		rawOr("reasoning", f.get("reasoning"), `{"effort":null,"summary":null}`).
		rawOr("safety_identifier", f.get("safety_identifier"), "null").
		raw("store", []byte(strconv.FormatBool(w.r.Store))).
		rawOr("temperature", f.get("temperature"), "1").
		rawOr("text", f.get("text"), `{"format":{"type":"text"}}`).
		rawOr("tool_choice", f.get("tool_choice"), `"auto"`).
		rawOr("tools", f.get("tools"), "[]").
		rawOr("top_logprobs", f.get("top_logprobs"), "0").
		rawOr("top_p", f.get("top_p"), "1").
		rawOr("truncation", f.get("truncation"), `"disabled"`)
	if u := w.usage; u != nil {
		cached, reasoning := 0, 0
		if u.PromptTokensDetails != nil {
			cached = u.PromptTokensDetails.CachedTokens
		}
		if u.CompletionTokensDetails != nil {
			reasoning = u.CompletionTokensDetails.ReasoningTokens
		}
		o.raw("usage", newObj(160).num("input_tokens", int64(u.PromptTokens)).
			raw("input_tokens_details", newObj(24).num("cached_tokens", int64(cached)).done()).
			num("output_tokens", int64(u.CompletionTokens)).
			raw("output_tokens_details", newObj(28).num("reasoning_tokens", int64(reasoning)).done()).
			num("total_tokens", int64(u.TotalTokens)).done())
	} else {
		o.raw("usage", []byte("null"))
	}
	o.rawOr("user", f.get("user"), "null").
		rawOr("metadata", f.get("metadata"), "{}")
	if n := Notice(w.r.Dropped, w.r.Warnings); n != nil {
		o.raw("maskgate", n)
	}
	return o.done()
}

// Notice is the "maskgate" member of a response (and of a Messages message): what the
// gateway left out of the request, in the body where a client reads it, since the API
// has no warnings of its own. dropped names the hosted tools left out (the model could
// not call them), warnings what else was (a document it could not read). nil when
// nothing was: the object is then the API's alone.
//
//	{"dropped_tools":["web_search"],"warnings":["input[0].content[1]: ..."]}
func Notice(dropped, warnings []string) []byte {
	if len(dropped) == 0 && len(warnings) == 0 {
		return nil
	}
	strs := func(ss []string) []byte {
		vs := make([][]byte, len(ss))
		for i, s := range ss {
			vs[i] = quote(s)
		}
		return array(vs)
	}
	o := newObj(64)
	if len(dropped) > 0 {
		o.raw("dropped_tools", strs(dropped))
	}
	if len(warnings) > 0 {
		o.raw("warnings", strs(warnings))
	}
	return o.done()
}
