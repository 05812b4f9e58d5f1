package openai

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/maskgate/maskgate/backends"
	"github.com/maskgate/maskgate/backends/oai"
	"github.com/maskgate/maskgate/backends/sse"
)

// rsEvent is the data of one Responses stream event; which members are set depends on
// Type.
type rsEvent struct {
	Type        string      `json:"type"`
	Response    *rsResponse `json:"response"`
	OutputIndex *int        `json:"output_index"`
	Item        *rsItem     `json:"item"`
	Delta       string      `json:"delta"`
	Code        string      `json:"code"`
	Message     string      `json:"message"`
}

// rsCall is what the chunker knows of one call item of the stream.
type rsCall struct {
	index    int  // its tool call index in the chunks
	streamed bool // argument deltas went out
}

// chunker turns Responses stream events into chat.completion.chunk objects as OpenAI's
// Chat Completions streams them: the role first; output_text (and refusal) deltas as
// content; a function_call as a chunk with its index, id, type and name when its item is
// added, then its argument deltas; a tool_search_call, whose arguments come whole with
// its item's done event, as one call of the loader (load_tool); response.completed or
// response.incomplete as the finish chunk and a usage chunk without choices. It is pure,
// so tests and fuzzing drive it without HTTP.
type chunker struct {
	name    string
	names   *Names
	loader  string
	started bool
	done    bool
	id      string
	model   string
	created int64
	calls   map[int]*rsCall // by output_index
	ncalls  int
}

func newChunker(name string, names *Names, loader string) *chunker {
	return &chunker{name: name, names: names, loader: loader, calls: map[int]*rsCall{}}
}

func (c *chunker) chunk(d oai.Delta, finish *string, usage *oai.Usage) []byte {
	ch := oai.Chunk{ID: c.id, Object: "chat.completion.chunk", Created: c.created, Model: c.model, Choices: []oai.ChunkChoice{}}
	if usage != nil {
		ch.Usage = usage
	} else {
		ch.Choices = append(ch.Choices, oai.ChunkChoice{Delta: d, FinishReason: finish})
	}
	b, _ := json.Marshal(ch) // plain structs always marshal
	return b
}

// start gives the first chunk, with the role, once.
func (c *chunker) start(r *rsResponse) [][]byte {
	if c.started {
		return nil
	}
	c.started = true
	if r != nil {
		c.id, c.model, c.created = r.ID, r.Model, r.CreatedAt
	}
	empty := ""
	return [][]byte{c.chunk(oai.Delta{Role: "assistant", Content: &empty}, nil, nil)}
}

// event converts one event's data. After the response ends it returns nothing more; an
// error event or a failed response is an error.
func (c *chunker) event(data []byte) ([][]byte, error) {
	if c.done {
		return nil, nil
	}
	var ev rsEvent
	if err := json.Unmarshal(data, &ev); err != nil {
		return nil, invalidAnswer(c.name, "an event is not JSON: %v", err)
	}
	switch ev.Type {
	case "error":
		return nil, failed(c.name, &rsError{Code: ev.Code, Message: ev.Message})
	case "response.failed":
		var e *rsError
		if ev.Response != nil {
			e = ev.Response.Error
		}
		return nil, failed(c.name, e)
	}
	out := c.start(ev.Response)
	switch ev.Type {
	case "response.output_text.delta", "response.refusal.delta":
		if ev.Delta != "" {
			s := ev.Delta
			out = append(out, c.chunk(oai.Delta{Content: &s}, nil, nil))
		}
	case "response.output_item.added", "response.output_item.done":
		if ev.Item == nil || ev.OutputIndex == nil {
			return nil, invalidAnswer(c.name, "%s without an item or an output_index", ev.Type)
		}
		out = append(out, c.item(*ev.OutputIndex, ev.Item, ev.Type == "response.output_item.done")...)
	case "response.function_call_arguments.delta":
		if ev.OutputIndex == nil {
			return nil, invalidAnswer(c.name, "%s without an output_index", ev.Type)
		}
		if k := c.calls[*ev.OutputIndex]; k != nil && ev.Delta != "" {
			k.streamed = true
			i := k.index
			out = append(out, c.chunk(oai.Delta{ToolCalls: []oai.ToolCall{{Index: &i, Function: oai.FunctionCall{Arguments: ev.Delta}}}}, nil, nil))
		}
	case "response.completed", "response.incomplete":
		if ev.Response == nil {
			return nil, invalidAnswer(c.name, "%s without its response", ev.Type)
		}
		c.done = true
		reason := ""
		if ev.Response.IncompleteDetails != nil {
			reason = ev.Response.IncompleteDetails.Reason
		}
		f := finish(ev.Response.Status, reason, c.ncalls > 0)
		if ev.Response.Status == "" && ev.Type == "response.incomplete" {
			f = finish("incomplete", reason, c.ncalls > 0)
		}
		out = append(out, c.chunk(oai.Delta{}, &f, nil), c.chunk(oai.Delta{}, nil, ev.Response.Usage.chat()))
	}
	return out, nil
}

// item handles an output item added or done: a call gets its index and its first chunk
// when first seen (a tool_search_call only when done, when its arguments are whole), and
// a function_call whose arguments never came as deltas gets them whole when done.
func (c *chunker) item(at int, it *rsItem, done bool) [][]byte {
	if it.Type == "tool_search_call" && !done {
		return nil
	}
	tc, ok := it.call(c.names, c.loader)
	if !ok {
		return nil
	}
	k := c.calls[at]
	if k == nil {
		k = &rsCall{index: c.ncalls}
		c.ncalls++
		c.calls[at] = k
		if it.Type == "function_call" && !done {
			tc.Function.Arguments = "" // the deltas follow
		} else {
			k.streamed = true
		}
		i := k.index
		tc.Index = &i
		return [][]byte{c.chunk(oai.Delta{ToolCalls: []oai.ToolCall{tc}}, nil, nil)}
	}
	if done && !k.streamed && tc.Function.Arguments != "" {
		k.streamed = true
		i := k.index
		return [][]byte{c.chunk(oai.Delta{ToolCalls: []oai.ToolCall{{Index: &i, Function: oai.FunctionCall{Arguments: tc.Function.Arguments}}}}, nil, nil)}
	}
	return nil
}

// rsStream reads the Responses event stream as chat.completion.chunk objects.
type rsStream struct {
	parent  context.Context
	body    io.ReadCloser
	r       *sse.Reader
	cancel  context.CancelCauseFunc
	c       *chunker
	pending [][]byte
	err     error
}

var errStreamClosed = errors.New("stream closed")

// Next returns the next chunk; io.EOF after the response ends, backends.ErrTruncated
// when the stream ends before, and the upstream's error for an error event.
func (s *rsStream) Next() ([]byte, error) {
	for len(s.pending) == 0 {
		if s.err != nil {
			return nil, s.err
		}
		if s.c.done {
			s.err = io.EOF
			return nil, s.err
		}
		ev, err := s.r.Next()
		if err != nil {
			s.err = backends.ReadError(s.c.name, s.parent, err, true)
			continue
		}
		if string(ev.Data) == "[DONE]" {
			s.err = backends.ReadError(s.c.name, s.parent, io.EOF, true)
			continue
		}
		chunks, err := s.c.event(ev.Data)
		if err != nil {
			s.err = err
			continue
		}
		s.pending = chunks
	}
	ch := s.pending[0]
	s.pending = s.pending[1:]
	return ch, nil
}

// Close cancels the request and releases the connection; it is safe to call twice.
func (s *rsStream) Close() error {
	s.cancel(errStreamClosed)
	if s.err == nil {
		s.err = errStreamClosed
	}
	return s.body.Close()
}

// viaResponses serves a request under strategy index: translated to POST /responses
// (responsesRequest), its answer translated back, whole or streamed.
func (b *Backend) viaResponses(ctx context.Context, req *backends.Request) (*backends.Response, error) {
	t, err := responsesRequest(req.Body, req.Model)
	if err != nil {
		return nil, err
	}
	resp, cancel, err := b.inner.Open(ctx, "/responses", t.body, nil)
	if err != nil {
		return nil, err
	}
	out := &backends.Response{Header: http.Header{}, Cache: backends.CacheReported, Strategy: StrategyIndex}
	if v := resp.Header.Get("X-Request-Id"); v != "" {
		out.Header.Set("X-Request-Id", v)
	}
	if t.stream {
		if !strings.HasPrefix(strings.ToLower(resp.Header.Get("Content-Type")), "text/event-stream") {
			resp.Body.Close()
			cancel(nil)
			return nil, &backends.Error{Status: http.StatusBadGateway, Type: "upstream_error", Code: "upstream_not_streaming",
				Message: fmt.Sprintf("backend %q answered a streaming request with %q instead of an event stream", b.opt.Name, resp.Header.Get("Content-Type"))}
		}
		out.Stream = &rsStream{parent: ctx, body: resp.Body, r: sse.NewReader(resp.Body, b.opt.MaxEventBytes), cancel: cancel, c: newChunker(b.opt.Name, t.names, t.loader)}
		return out, nil
	}
	defer cancel(nil)
	defer resp.Body.Close()
	limit := b.opt.MaxResponseBytes
	if limit == 0 {
		limit = 64 << 20
	}
	body, err := backends.ReadAnswer(b.opt.Name, ctx, resp.Body, limit)
	if err != nil {
		return nil, err
	}
	if out.Body, err = completion(b.opt.Name, body, t.names, t.loader); err != nil {
		return nil, err
	}
	return out, nil
}
