package messages

import (
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/maskgate/maskgate/backends/oai"
	"github.com/maskgate/maskgate/gateway/door"
)

// Anthropic stop reasons.
const (
	StopEndTurn   = "end_turn"
	StopMaxTokens = "max_tokens"
	StopToolUse   = "tool_use"
	StopRefusal   = "refusal"
	StopSequence  = "stop_sequence"
)

// StopReason maps a Chat Completions finish reason onto Anthropic's stop_reason: length
// → max_tokens, tool_calls → tool_use, content_filter → refusal, anything else →
// end_turn, or tool_use when the answer called tools. A stop sequence of the client's
// that ended the answer (Writer.StopSequence) makes end_turn stop_sequence.
func StopReason(finish string, calledTools bool) string {
	switch finish {
	case oai.FinishLength:
		return StopMaxTokens
	case oai.FinishToolCalls:
		return StopToolUse
	case "content_filter":
		return StopRefusal
	}
	if calledTools {
		return StopToolUse
	}
	return StopEndTurn
}

// outBlock is one content block of the answer.
type outBlock struct {
	kind     string // "text", "thinking" or "tool_use"
	text     strings.Builder
	id, name string
	input    string // tool_use: a JSON object
}

// Writer is the Messages door's door.Sink. Streaming, it writes Anthropic's events as the
// answer arrives: message_start and ping at Begin; for each content block
// content_block_start, its deltas (text_delta, thinking_delta, or one input_json_delta
// with a tool call's whole input) and content_block_stop, a block being closed before
// the next opens; then message_delta (stop_reason and the usage, known only at End) and
// message_stop. Fail writes an error event. Not streaming, it collects the same blocks,
// in the same order, and Body writes the message object.
type Writer struct {
	ev     door.Events
	stream bool
	id     string
	model  string
	r      *Request // nil when none: then no notice

	began, done bool
	err         error       // the client's, once gone: every later call returns it
	failed      *door.Error // Fail's, not streaming

	blocks []*outBlock // not streaming: the whole answer
	n      int         // blocks opened so far
	open   string      // kind of the open text or thinking block, "" if none
	calls  int
	bad    int

	stopReason string
	usage      *oai.Usage

	matched string // the stop sequence the backend said ended the answer
	stopSeq string // the stop_sequence reported: one of the client's, or ""
	tail    string // the answer text's last bytes, for a stop sequence the engine kept
}

// NewWriter returns the sink for one answer: ev receives the events when stream is set;
// id is the message id ("msg_..."); r, when not nil, gives the model when Begin's Head
// has none.
func NewWriter(ev door.Events, stream bool, id string, r *Request) *Writer {
	w := &Writer{ev: ev, stream: stream, id: id, r: r}
	if r != nil {
		w.model = r.Model
	}
	return w
}

// BadArguments counts the tool calls whose arguments were not a JSON object and were
// sent as the input {} (see ToolCall).
func (w *Writer) BadArguments() int { return w.bad }

// Failed is the error Fail reported when not streaming, nil if none: the gateway then
// sends ErrorBody with its status rather than Body.
func (w *Writer) Failed() *door.Error { return w.failed }

func (w *Writer) event(name string, data []byte) error {
	if w.err != nil {
		return w.err
	}
	w.err = w.ev.Event(name, data)
	return w.err
}

// Begin opens the answer: message_start, with an empty content list, a null stop_reason
// and zero usage, then a ping.
func (w *Writer) Begin(h door.Head) error {
	if w.began {
		return w.err
	}
	w.began = true
	if h.Model != "" {
		w.model = h.Model
	}
	if !w.stream {
		return nil
	}
	b := make([]byte, 0, 256)
	b = append(b, `{"type":"message_start","message":`...)
	b = w.appendMessageHead(b)
	b = append(b, `[],"stop_reason":null,"stop_sequence":null,"usage":`...)
	b = appendUsage(b, nil)
	b = w.appendNotice(b)
	b = append(b, "}}"...)
	if err := w.event("message_start", b); err != nil {
		return err
	}
	return w.event("ping", []byte(`{"type":"ping"}`))
}

// Ping writes a ping event, as Anthropic sends now and then to keep a stream alive; the
// gateway may call it while it works between rounds. It does nothing when not
// streaming, before Begin or after the answer ended.
func (w *Writer) Ping() error {
	if !w.stream || !w.began || w.done || w.err != nil {
		return w.err
	}
	return w.event("ping", []byte(`{"type":"ping"}`))
}

// appendMessageHead writes the message object up to its content's value.
func (w *Writer) appendMessageHead(b []byte) []byte {
	b = append(b, `{"id":`...)
	b = appendString(b, w.id)
	b = append(b, `,"type":"message","role":"assistant","model":`...)
	b = appendString(b, w.model)
	return append(b, `,"content":`...)
}

// appendUsage writes Anthropic's usage from the chat usage: the prompt's cached tokens
// are cache_read_input_tokens and the rest input_tokens (Anthropic counts them apart);
// nothing is reported as written to the cache.
func appendUsage(b []byte, u *oai.Usage) []byte {
	var in, cached, out int
	if u != nil {
		in, out = u.PromptTokens, u.CompletionTokens
		if d := u.PromptTokensDetails; d != nil && d.CachedTokens > 0 {
			cached = d.CachedTokens
			in = max(in-cached, 0)
		}
	}
	b = append(b, `{"input_tokens":`...)
	b = strconv.AppendInt(b, int64(in), 10)
	b = append(b, `,"cache_creation_input_tokens":0,"cache_read_input_tokens":`...)
	b = strconv.AppendInt(b, int64(cached), 10)
	b = append(b, `,"output_tokens":`...)
	b = strconv.AppendInt(b, int64(out), 10)
	return append(b, '}')
}

// ready is false when the answer is over (or the client gone); it begins an answer the
// pipeline forgot to begin.
func (w *Writer) ready() (bool, error) {
	if w.err != nil || w.done {
		return false, w.err
	}
	if !w.began {
		if err := w.Begin(door.Head{}); err != nil {
			return false, err
		}
	}
	return true, nil
}

// Reasoning adds to a thinking block (its signature is "": the engine signs nothing).
func (w *Writer) Reasoning(delta string) error { return w.delta("thinking", delta) }

// Text adds to a text block.
func (w *Writer) Text(delta string) error {
	w.tail += delta
	if len(w.tail) > StopSeqTail {
		w.tail = w.tail[len(w.tail)-StopSeqTail:]
	}
	return w.delta("text", delta)
}

func (w *Writer) delta(kind, d string) error {
	if ok, err := w.ready(); !ok || d == "" {
		return err
	}
	if w.open != kind {
		if err := w.closeBlock(); err != nil {
			return err
		}
		if err := w.openBlock(&outBlock{kind: kind}); err != nil {
			return err
		}
		w.open = kind
	}
	if !w.stream {
		w.blocks[len(w.blocks)-1].text.WriteString(d)
		return nil
	}
	b := make([]byte, 0, len(d)+96)
	b = append(b, `{"type":"content_block_delta","index":`...)
	b = strconv.AppendInt(b, int64(w.n-1), 10)
	if kind == "text" {
		b = append(b, `,"delta":{"type":"text_delta","text":`...)
	} else {
		b = append(b, `,"delta":{"type":"thinking_delta","thinking":`...)
	}
	b = appendString(b, d)
	return w.event("content_block_delta", append(b, "}}"...))
}

// openBlock starts block c: content_block_start streaming, a new block otherwise.
func (w *Writer) openBlock(c *outBlock) error {
	w.n++
	if !w.stream {
		w.blocks = append(w.blocks, c)
		return nil
	}
	b := make([]byte, 0, 128)
	b = append(b, `{"type":"content_block_start","index":`...)
	b = strconv.AppendInt(b, int64(w.n-1), 10)
	b = append(b, `,"content_block":`...)
	switch c.kind {
	case "text":
		b = append(b, `{"type":"text","text":""}`...)
	case "thinking":
		b = append(b, `{"type":"thinking","thinking":"","signature":""}`...)
	default:
		b = append(b, `{"type":"tool_use","id":`...)
		b = appendString(b, c.id)
		b = append(b, `,"name":`...)
		b = appendString(b, c.name)
		b = append(b, `,"input":{}}`...)
	}
	return w.event("content_block_start", append(b, '}'))
}

// closeBlock ends the open text or thinking block, if any.
func (w *Writer) closeBlock() error {
	if w.open == "" {
		return nil
	}
	w.open = ""
	return w.stopBlock()
}

func (w *Writer) stopBlock() error {
	if !w.stream {
		return nil
	}
	b := append([]byte(`{"type":"content_block_stop","index":`), strconv.Itoa(w.n-1)...)
	return w.event("content_block_stop", append(b, '}'))
}

// toolInput is a call's arguments as a tool_use input, which must be a JSON object: the
// arguments' bytes when they are one (trimmed; invalid UTF-8 replaced), {} when they are
// empty, and {} — counted in BadArguments — when they are anything else (invalid JSON, an
// array, a string): the client must get a block it can parse, and the model a call it
// can see failed.
func toolInput(args string) (string, bool) {
	a := strings.TrimSpace(args)
	if a == "" {
		return "{}", true
	}
	if !utf8.ValidString(a) {
		a = strings.ToValidUTF8(a, "\uFFFD")
	}
	if a[0] != '{' || !oai.Valid([]byte(a)) {
		return "{}", false
	}
	return a, true
}

// ToolCall adds a tool_use block: id is the chat call's id as it is (one made up from
// the message id when empty), name the function's, input the arguments (see toolInput).
// Streaming, the whole input goes in one input_json_delta.
func (w *Writer) ToolCall(c oai.ToolCall) error {
	if ok, err := w.ready(); !ok {
		return err
	}
	if err := w.closeBlock(); err != nil {
		return err
	}
	input, ok := toolInput(c.Function.Arguments)
	if !ok {
		w.bad++
	}
	id := c.ID
	if id == "" {
		id = "toolu_" + strings.TrimPrefix(w.id, "msg_") + "_" + strconv.Itoa(w.calls)
	}
	w.calls++
	blk := &outBlock{kind: "tool_use", id: id, name: c.Function.Name, input: input}
	if err := w.openBlock(blk); err != nil {
		return err
	}
	if w.stream {
		b := make([]byte, 0, len(input)+96)
		b = append(b, `{"type":"content_block_delta","index":`...)
		b = strconv.AppendInt(b, int64(w.n-1), 10)
		b = append(b, `,"delta":{"type":"input_json_delta","partial_json":`...)
		b = appendString(b, input)
		if err := w.event("content_block_delta", append(b, "}}"...)); err != nil {
			return err
		}
	}
	return w.stopBlock()
}

// End closes the answer: message_delta with the stop reason and the usage, then
// message_stop.
func (w *Writer) End(finish string, usage *oai.Usage) error {
	if ok, err := w.ready(); !ok {
		return err
	}
	if err := w.closeBlock(); err != nil {
		return err
	}
	w.done = true
	w.stopReason = StopReason(finish, w.calls > 0)
	if w.stopReason == StopEndTurn && finish == oai.FinishStop {
		if w.stopSeq = w.stopSequence(); w.stopSeq != "" {
			w.stopReason = StopSequence
		}
	}
	w.usage = usage
	if !w.stream {
		return nil
	}
	b := make([]byte, 0, 256)
	b = append(b, `{"type":"message_delta","delta":{"stop_reason":`...)
	b = appendString(b, w.stopReason)
	b = append(b, `,"stop_sequence":`...)
	b = w.appendStopSeq(b)
	b = append(b, `},"usage":`...)
	b = appendUsage(b, usage)
	if err := w.event("message_delta", append(b, '}')); err != nil {
		return err
	}
	return w.event("message_stop", []byte(`{"type":"message_stop"}`))
}

// Fail ends a begun answer with an error event ({"type":"error","error":{"type",
// "message"}}); not streaming, it keeps e for Failed and Body.
func (w *Writer) Fail(e door.Error) {
	if w.done {
		return
	}
	w.done = true
	if !w.stream {
		w.failed = &e
		return
	}
	_ = w.event("error", ErrorBody(e))
}

// Body is the whole message object once End has been called (nil before; ErrorBody
// after Fail):
//
//	{"id","type":"message","role":"assistant","model","content":[...],
//	 "stop_reason","stop_sequence":null,"usage":{...}}
func (w *Writer) Body() []byte {
	if w.failed != nil {
		return ErrorBody(*w.failed)
	}
	if !w.done || w.stopReason == "" {
		return nil
	}
	n := 256
	for _, c := range w.blocks {
		n += c.text.Len() + len(c.input) + 64
	}
	b := make([]byte, 0, n)
	b = w.appendMessageHead(b)
	b = append(b, '[')
	for i, c := range w.blocks {
		if i > 0 {
			b = append(b, ',')
		}
		switch c.kind {
		case "text":
			b = append(b, `{"type":"text","text":`...)
			b = appendString(b, c.text.String())
		case "thinking":
			b = append(b, `{"type":"thinking","thinking":`...)
			b = appendString(b, c.text.String())
			b = append(b, `,"signature":""`...)
		default:
			b = append(b, `{"type":"tool_use","id":`...)
			b = appendString(b, c.id)
			b = append(b, `,"name":`...)
			b = appendString(b, c.name)
			b = append(b, `,"input":`...)
			b = append(b, c.input...)
		}
		b = append(b, '}')
	}
	b = append(b, `],"stop_reason":`...)
	b = appendString(b, w.stopReason)
	b = append(b, `,"stop_sequence":`...)
	b = w.appendStopSeq(b)
	b = append(b, `,"usage":`...)
	b = appendUsage(b, w.usage)
	b = w.appendNotice(b)
	return append(b, '}')
}

// appendNotice writes the message's "maskgate" member, when the gateway left something
// out of the request: the server tools it dropped and its warnings (responses.Notice's
// shape, {"dropped_tools":[...],"warnings":[...]}). Anthropic's message has no field
// for it; the SDKs keep members they do not know.
func (w *Writer) appendNotice(b []byte) []byte {
	if w.r == nil || len(w.r.Dropped) == 0 && len(w.r.Warnings) == 0 {
		return b
	}
	b = append(b, `,"maskgate":{`...)
	if len(w.r.Dropped) > 0 {
		b = append(b, `"dropped_tools":`...)
		b = appendStrings(b, w.r.Dropped)
		if len(w.r.Warnings) > 0 {
			b = append(b, ',')
		}
	}
	if len(w.r.Warnings) > 0 {
		b = append(b, `"warnings":`...)
		b = appendStrings(b, w.r.Warnings)
	}
	return append(b, '}')
}

func appendStrings(b []byte, ss []string) []byte {
	b = append(b, '[')
	for i, s := range ss {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendString(b, s)
	}
	return append(b, ']')
}

var _ door.Sink = (*Writer)(nil)
