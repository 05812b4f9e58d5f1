package responses

import (
	"time"
)

// KeepAlive writes response.in_progress again when the stream has written nothing for
// interval: an event, not an SSE comment, because a client may give up on a stream
// that sends no event for a while (Codex ends a turn after 300 s without one, and
// counts no comment). It carries the response as it stands, its output so far with an
// open item's text so far, as a client's accumulated snapshot has it: the openai SDKs
// take a response.in_progress as the response's new snapshot, the AI SDK, Codex and
// the Agents SDK read it as progress. write sends the event in place of the stream's
// Events (its time is the gateway's, not the answer's), numbered in the stream's order.
// Nothing is written before the response began, after it ended, or when not streaming.
// It returns how long until the next may be due, and write's error.
func (w *Writer) KeepAlive(interval time.Duration, write func(name string, data []byte) error) (time.Duration, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.gone != nil {
		return interval, w.gone
	}
	if !w.stream || !w.began || w.status != "" {
		return interval, nil
	}
	if wait := interval - w.Now().Sub(w.last); wait > 0 {
		return wait, nil
	}
	resp := w.response("in_progress")
	o := newObj(len(resp)+96).str("type", "response.in_progress").num("sequence_number", w.seq).raw("response", resp)
	if err := write("response.in_progress", o.done()); err != nil {
		w.gone = err
		return interval, err
	}
	w.seq++
	w.last = w.Now()
	return interval, nil
}

// snapshotItem is an output item as a client that applied the stream's events so far
// has it: a closed item whole, the open one in progress with its text so far.
func (w *Writer) snapshotItem(it *outItem) []byte {
	if it.final != nil {
		return it.final
	}
	text := it.text.String()
	if it.kind == "message" {
		content := array([][]byte{outputText(text)})
		return newObj(len(content)+200).str("id", it.id).str("type", "message").str("status", "in_progress").
			raw("content", content).str("role", "assistant").done()
	}
	content := array([][]byte{reasoningText(text)})
	return newObj(len(content)+200).str("id", it.id).str("type", "reasoning").raw("summary", []byte("[]")).
		raw("content", content).done()
}
