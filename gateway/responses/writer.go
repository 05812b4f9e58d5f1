package responses

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strconv"
	"strings"
	"sync"
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
	// WarmUp marks a response.create with generate: false: it has no output, so End
	// adds no empty message.
	WarmUp bool

	// mu orders the pipeline's calls (the door.Sink methods) and KeepAlive's, which
	// comes from the keep-alive's goroutine.
	mu   sync.Mutex
	last time.Time // when the latest event was written, by Now

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
	w.last = w.Now()
	return nil
}

// Begin starts the response: response.created and response.in_progress when streaming.
func (w *Writer) Begin(h door.Head) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.start(h)
}

func (w *Writer) start(h door.Head) error {
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
	return w.start(door.Head{Model: w.r.Model})
}

// itemID is an output item's id: the prefix, the response id's part (responsePart) and
// a digest of the response id and the item's index, unique per response, the same in
// every mode, and naming its response (ItemResponse) for an item_reference.
func (w *Writer) itemID(prefix string, index int) string {
	sum := sha256.Sum256([]byte(w.id + "/" + strconv.Itoa(index)))
	return prefix + responsePart(w.id) + hex.EncodeToString(sum[:12])
}

// Reasoning adds reasoning text, in a reasoning item.
func (w *Writer) Reasoning(delta string) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.textDelta("reasoning", delta)
}

// Text adds answer text, in a message item.
func (w *Writer) Text(delta string) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.textDelta("message", delta)
}

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
	o := newObj(len(content)+200).str("id", it.id).str("type", "reasoning").raw("summary", []byte("[]")).
		raw("content", content)
	if w.r.EncryptedReasoning && status != "in_progress" {
		o.str("encrypted_content", EncodeReasoning(text))
	}
	return o.done()
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
