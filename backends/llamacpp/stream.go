package llamacpp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/maskgate/maskgate/backends"
	"github.com/maskgate/maskgate/backends/chatlayer"
	"github.com/maskgate/maskgate/backends/oai"
	"github.com/maskgate/maskgate/backends/sse"
	"github.com/maskgate/maskgate/backends/toolcall"
)

// stream reads llama-server's /completion event stream and yields chat.completion.chunk
// objects. llama-server sends one "data: {...}" event per generated piece and ends with
// the event whose "stop" is true, which carries stop_type and timings; it sends no
// "[DONE]" on this endpoint, so a stream that ends before "stop": true is truncated
// (tools/server/README.md, "POST /completion", Response format: "In streaming mode
// (stream), only content, tokens and stop will be returned until end of completion").
type stream struct {
	body   io.ReadCloser
	r      *sse.Reader
	cancel context.CancelCauseFunc
	parent context.Context // the caller's; when done, its cause says why the stream broke
	name   string
	c      *chunker
	queue  [][]byte
	err    error // what Next returns once the queue is empty: io.EOF after "stop": true
	times  *backends.Timings
}

var _ backends.TimingsReporter = (*stream)(nil)

// Timings are the last event's (the one with "stop": true), once the stream has ended.
func (s *stream) Timings() *backends.Timings { return s.times }

var errStreamClosed = errors.New("stream closed")

// startStream sends the /completion request and reads its first event, so that a failure
// before any output is a plain error and the gateway has not yet committed its headers.
func (b *Backend) startStream(ctx context.Context, body []byte, p *params, m meta) (*stream, error) {
	resp, cancel, err := b.open(ctx, "/completion", body, true)
	if err != nil {
		return nil, err
	}
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(strings.ToLower(strings.TrimSpace(ct)), "text/event-stream") {
		resp.Body.Close()
		cancel(nil)
		return nil, &backends.Error{Status: http.StatusBadGateway, Type: "upstream_error", Code: "upstream_not_streaming",
			Message: fmt.Sprintf("backend %q answered a streaming /completion with %q instead of an event stream", b.opt.Name, ct)}
	}
	s := &stream{body: resp.Body, r: sse.NewReader(resp.Body, b.opt.MaxEventBytes), cancel: cancel, parent: ctx,
		name: b.opt.Name, c: &chunker{p: p, m: m}}
	s.fill()
	if len(s.queue) == 0 && s.err != nil {
		s.Close()
		return nil, s.err
	}
	return s, nil
}

func (s *stream) Next() ([]byte, error) {
	for len(s.queue) == 0 {
		if s.err != nil {
			return nil, s.err
		}
		s.fill()
	}
	ch := s.queue[0]
	s.queue = s.queue[1:]
	return ch, nil
}

// fill reads one event into the queue, or sets the error that ends the stream.
func (s *stream) fill() {
	ev, err := s.r.Next()
	if err != nil {
		s.err = s.readError(err)
		return
	}
	if v, ok := oai.Get(ev.Data, "error"); ev.Name == "error" || (ok && string(v) != "null") {
		d, ok := oai.ParseErrorBody(ev.Data)
		if !ok {
			d.Message = string(ev.Data)
		}
		s.err = &backends.Error{Status: http.StatusBadGateway, Type: "upstream_error",
			Message: fmt.Sprintf("backend %q failed mid-stream: %s", s.name, clip(backends.Redact(d.Message)))}
		return
	}
	var r completionResult
	if err := json.Unmarshal(ev.Data, &r); err != nil {
		s.err = &backends.Error{Status: http.StatusBadGateway, Type: "upstream_error", Code: "upstream_bad_response",
			Message: fmt.Sprintf("backend %q sent an event that is not a /completion result", s.name), Err: err}
		return
	}
	s.queue = append(s.queue, s.c.add(&r)...)
	if r.Stop {
		s.err = io.EOF
		s.times = engineTimings(&r)
	}
}

func (s *stream) readError(err error) error {
	return backends.ReadError(s.name, s.parent, err, true)
}

// Close cancels the upstream request; llama-server stops generating when the connection
// closes.
func (s *stream) Close() error {
	s.cancel(errStreamClosed)
	err := s.body.Close()
	if s.err == nil || len(s.queue) > 0 {
		s.queue, s.err = nil, errStreamClosed
	}
	return err
}

// chunker turns /completion results into chat.completion.chunk objects as OpenAI streams
// them: the role in the first chunk only, reasoning_content and content deltas, each
// tool call as a chunk with its index, id, type and name and then one with its
// arguments, a chunk with the finish reason, and a usage chunk with no choices. The
// text goes through the <think> reader first (chatlayer), and its content part through
// the tool-call parser.
type chunker struct {
	p     *params
	m     meta
	th    *chatlayer.Think // when the format thinks in tags
	sp    *toolcall.Parser // when parses
	role  bool
	calls int
}

func (c *chunker) add(r *completionResult) [][]byte {
	var out [][]byte
	if !c.role {
		c.role = true
		out = append(out, c.delta(oai.Delta{Role: "assistant", Content: new(string)}, nil))
		if thinks(c.m.format) {
			c.th = chatlayer.NewThink(c.p.inside)
		}
		if parses(c.p, c.m.format) {
			c.sp = newParser(c.m)
		}
	}
	out = c.text(out, r.Content, r.Stop)
	if !r.Stop {
		return out
	}
	if c.sp != nil {
		finish := c.sp.Finish
		if cut(r) {
			finish = c.sp.FinishCut
		}
		out = c.events(out, finish())
	}
	finish := finishReason(r, c.calls)
	out = append(out, c.marshal(oai.Chunk{Choices: []oai.ChunkChoice{{Delta: oai.Delta{}, FinishReason: &finish, StopReason: stopReason(r, c.calls)}}}))
	return append(out, c.marshal(oai.Chunk{Choices: []oai.ChunkChoice{}, Usage: usage(r)}))
}

// text reads one piece of the completion (and, at the end, what the <think> reader
// held) into deltas.
func (c *chunker) text(out [][]byte, s string, end bool) [][]byte {
	if c.th == nil {
		return c.content(out, s)
	}
	ds := c.th.Feed(s)
	if end {
		ds = append(ds, c.th.Finish()...)
	}
	for _, d := range ds {
		if d.Reasoning != "" {
			out = c.reasoning(out, d.Reasoning)
		}
		out = c.content(out, d.Content)
	}
	return out
}

// content sends answer text as it is, or through the tool-call parser.
func (c *chunker) content(out [][]byte, s string) [][]byte {
	if c.sp != nil {
		return c.events(out, c.sp.Feed(s))
	}
	if s != "" {
		out = append(out, c.delta(oai.Delta{Content: &s}, nil))
	}
	return out
}

func (c *chunker) reasoning(out [][]byte, s string) [][]byte {
	return append(out, c.delta(oai.Delta{ReasoningContent: &s}, nil))
}

// events turns parsed text into deltas: content, reasoning (harmony's analysis channel)
// and calls.
func (c *chunker) events(out [][]byte, evs []toolcall.Event) [][]byte {
	for _, ev := range evs {
		switch {
		case ev.Content != "":
			text := ev.Content
			out = append(out, c.delta(oai.Delta{Content: &text}, nil))
		case ev.Reasoning != "":
			out = c.reasoning(out, ev.Reasoning)
		case ev.Call != nil:
			c.calls++
			head := oai.ToolCall{Index: ev.Call.Index, ID: ev.Call.ID, Type: "function", Function: oai.FunctionCall{Name: ev.Call.Function.Name}}
			args := oai.ToolCall{Index: ev.Call.Index, Function: oai.FunctionCall{Arguments: ev.Call.Function.Arguments}}
			out = append(out,
				c.delta(oai.Delta{ToolCalls: []oai.ToolCall{head}}, nil),
				c.delta(oai.Delta{ToolCalls: []oai.ToolCall{args}}, nil))
		}
	}
	return out
}

func (c *chunker) delta(d oai.Delta, finish *string) []byte {
	return c.marshal(oai.Chunk{Choices: []oai.ChunkChoice{{Delta: d, FinishReason: finish}}})
}

func (c *chunker) marshal(ch oai.Chunk) []byte {
	ch.ID, ch.Object, ch.Created, ch.Model = c.m.id, "chat.completion.chunk", c.m.created, c.m.model
	b, err := json.Marshal(ch)
	if err != nil { // strings and numbers only: cannot fail
		panic(err)
	}
	return b
}
