//go:build llamacpp

package embedded

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/maskgate/maskgate/backends"
	"github.com/maskgate/maskgate/backends/chatlayer"
	"github.com/maskgate/maskgate/backends/oai"
)

// job is one queued request. The worker fills it; the caller waits on done.
type job struct {
	ctx    context.Context
	req    *request
	prompt []int
	mask   Masker
	stream bool
	meta   meta
	events chan event // stream only, unbuffered
	done   chan struct{}

	body []byte // non-streaming answer
	err  error

	// inside says the prompt opened a <think> block; think reads a stream's text into
	// reasoning and content (nil when the model's format does not think in tags).
	inside bool
	think  *chatlayer.Think
}

type meta struct {
	id      string
	created int64
	model   string
}

// event is one step of a stream: a chunk, or the error that ends it (io.EOF when done).
type event struct {
	data []byte
	err  error
}

// send hands a chunk to the stream's reader; false means the request was cancelled.
func (j *job) send(ev event) bool {
	select {
	case j.events <- ev:
		return true
	case <-j.ctx.Done():
		return false
	}
}

// started is called once the prompt is decoded: a stream sends its role chunk.
func (j *job) started() bool {
	if !j.stream {
		return true
	}
	return j.send(event{data: j.chunk(oai.Delta{Role: "assistant", Content: new(string)}, nil)})
}

// content sends a stream's text: through the <think> reader, when there is one, as
// reasoning_content and content deltas.
func (j *job) content(s string) bool {
	if !j.stream {
		return true
	}
	if j.think == nil {
		return j.send(event{data: j.chunk(oai.Delta{Content: &s}, nil)})
	}
	for _, c := range j.deltas(nil, j.think.Feed(s)) {
		if !j.send(event{data: c}) {
			return false
		}
	}
	return true
}

// deltas appends the chunks of split text to out.
func (j *job) deltas(out [][]byte, ds []chatlayer.Delta) [][]byte {
	for _, d := range ds {
		r, c := d.Reasoning, d.Content
		if r != "" {
			out = append(out, j.chunk(oai.Delta{ReasoningContent: &r}, nil))
		} else {
			out = append(out, j.chunk(oai.Delta{Content: &c}, nil))
		}
	}
	return out
}

func (j *job) fail(err error) {
	j.err = err
	if j.stream {
		j.send(event{err: err})
	}
	close(j.done)
}

// finish sends what the answer still owes: tool calls, the finish reason and usage.
func (j *job) finish(r *result) {
	defer close(j.done)
	reasoning, content, calls, finish, rest := r.answer(j.meta.id, j.think != nil, j.inside)
	usage := &oai.Usage{
		PromptTokens:        r.prompt,
		CompletionTokens:    r.completion,
		TotalTokens:         r.prompt + r.completion,
		PromptTokensDetails: &oai.PromptTokensDetails{CachedTokens: r.cached},
	}
	if !j.stream {
		j.body = j.marshal(oai.ChatCompletion{
			ID: j.meta.id, Object: "chat.completion", Created: j.meta.created, Model: j.meta.model,
			Choices: []oai.Choice{{Message: oai.ResponseMessage{Role: "assistant", Content: content, ToolCalls: calls, ReasoningContent: reasoning}, FinishReason: finish}},
			Usage:   usage,
		})
		return
	}
	var out [][]byte
	if reasoning != nil && j.think == nil { // harmony's, read from the tail at the end
		out = append(out, j.chunk(oai.Delta{ReasoningContent: reasoning}, nil))
	}
	switch {
	case j.think != nil:
		out = j.deltas(out, append(j.think.Feed(rest), j.think.Finish()...))
	case rest != "":
		out = append(out, j.chunk(oai.Delta{Content: &rest}, nil))
	}
	for i, c := range calls {
		head := oai.ToolCall{Index: &i, ID: c.ID, Type: "function", Function: oai.FunctionCall{Name: c.Function.Name}}
		args := oai.ToolCall{Index: &i, Function: oai.FunctionCall{Arguments: c.Function.Arguments}}
		out = append(out, j.chunk(oai.Delta{ToolCalls: []oai.ToolCall{head}}, nil), j.chunk(oai.Delta{ToolCalls: []oai.ToolCall{args}}, nil))
	}
	out = append(out, j.chunk(oai.Delta{}, &finish))
	out = append(out, j.marshal(oai.Chunk{ID: j.meta.id, Object: "chat.completion.chunk", Created: j.meta.created, Model: j.meta.model,
		Choices: []oai.ChunkChoice{}, Usage: usage}))
	for _, c := range out {
		if !j.send(event{data: c}) {
			return
		}
	}
	j.send(event{err: io.EOF})
}

// answer reads the generated text as OpenAI sees it: reasoning (a leading <think> block,
// when the model thinks in tags; inside says the prompt opened it), content, tool calls
// parsed from the held-back tail, and the finish reason. rest is tail text that was not
// a tool call and that a stream has not sent yet. A call max_tokens cut short is still a
// call, with the arguments so far, and the finish reason stays "length", as OpenAI
// answers.
func (r *result) answer(id string, thinks, inside bool) (reasoning, content *string, calls []oai.ToolCall, finish, rest string) {
	text := r.text.content.String()
	finish = r.finish
	if r.text.inCall {
		tail := r.text.tail.String()
		cut := finish == oai.FinishLength
		parsed, kept, said, err := parseCalls(r.format, tail, cut)
		if err != nil {
			kept = tail
		}
		if said != "" { // harmony's analysis channel
			reasoning = &said
		}
		text += kept
		rest = kept
		for i, c := range parsed {
			calls = append(calls, oai.ToolCall{ID: fmt.Sprintf("call_%s_%d", strings.TrimPrefix(id, "chatcmpl-"), i), Type: "function",
				Function: oai.FunctionCall{Name: c.name, Arguments: c.args}})
		}
		if len(calls) > 0 && !cut {
			finish = oai.FinishToolCalls
		}
	}
	if thinks {
		var said string
		if said, text = chatlayer.Split(text, inside); said != "" {
			reasoning = &said
		}
	}
	if len(calls) == 0 || strings.TrimSpace(text) != "" {
		content = &text
	}
	return reasoning, content, calls, finish, rest
}

func (j *job) chunk(d oai.Delta, finish *string) []byte {
	return j.marshal(oai.Chunk{ID: j.meta.id, Object: "chat.completion.chunk", Created: j.meta.created, Model: j.meta.model,
		Choices: []oai.ChunkChoice{{Delta: d, FinishReason: finish}}})
}

func (j *job) marshal(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil { // strings, numbers and compacted JSON text only: cannot fail
		panic(err)
	}
	return b
}

// stream adapts the worker's chunks to the pull-style backends.Stream.
type stream struct {
	j      *job
	cancel context.CancelFunc
	first  []byte
	err    error
}

var errStreamClosed = errors.New("embedded: stream closed")

// startStream waits for the role chunk, which the worker sends once the prompt is
// decoded, so that a failure before any output is a plain error.
func (b *Backend) startStream(ctx context.Context, j *job, cancel context.CancelFunc) (*backends.Response, error) {
	var ev event
	select {
	case ev = <-j.events:
	case <-j.done:
		cancel()
		return nil, j.err
	case <-ctx.Done(): // still queued, or prefilling: the worker drops it at its next step
		cancel()
		return nil, fmt.Errorf("embedded: %w", context.Cause(ctx))
	}
	if ev.err != nil {
		cancel()
		<-j.done
		if errors.Is(ev.err, io.EOF) {
			return nil, backends.ErrTruncated
		}
		return nil, ev.err
	}
	return &backends.Response{Stream: &stream{j: j, cancel: cancel, first: ev.data}, Cache: backends.CacheReported}, nil
}

func (s *stream) Next() ([]byte, error) {
	if s.err != nil {
		return nil, s.err
	}
	if s.first != nil {
		data := s.first
		s.first = nil
		return data, nil
	}
	select {
	case ev := <-s.j.events:
		if ev.err != nil {
			s.err = ev.err
			return nil, s.err
		}
		return ev.data, nil
	case <-s.j.done: // the request's context ended and the worker gave up sending
		if s.j.err != nil {
			s.err = s.j.err
		} else {
			s.err = fmt.Errorf("embedded: %w", context.Cause(s.j.ctx))
		}
		return nil, s.err
	}
}

// Close cancels the request and waits for the worker to let go of it (one decoding step
// at most).
func (s *stream) Close() error {
	s.cancel()
	<-s.j.done
	if s.err == nil {
		s.err = errStreamClosed
	}
	return nil
}
