package anthropic

import (
	"encoding/json"
	"fmt"

	"github.com/maskgate/maskgate/backends/oai"
	"github.com/maskgate/maskgate/backends/toolname"
)

// chunker turns the Messages API's stream events ("Streaming Messages": message_start,
// content_block_start / _delta / _stop, message_delta, message_stop, ping, error) into
// chat.completion.chunk objects as OpenAI streams them: the role in the first chunk
// only, content deltas, each tool call as a chunk with its index, id, type and name and
// then its argument fragments, a chunk with the finish reason, and a usage chunk with
// no choices. It is pure, so tests and fuzzing drive it without HTTP.
type chunker struct {
	name  string // the backend's, for errors
	names *toolname.Map
	m     meta

	started bool
	done    bool
	id      string
	model   string
	usage   usage
	stop    string
	// calls maps a tool_use block's index to its OpenAI tool call index; text marks the
	// text blocks; other blocks (thinking, ...) are in neither and their deltas dropped.
	calls map[int]int
	text  map[int]bool
	open  map[int]bool
}

func newChunker(name string, names *toolname.Map, m meta) *chunker {
	return &chunker{name: name, names: names, m: m, calls: map[int]int{}, text: map[int]bool{}, open: map[int]bool{}}
}

// event converts one event's data. After message_stop it returns nothing more; an error
// event, or an event that breaks the protocol, is an error.
func (c *chunker) event(data []byte) ([][]byte, error) {
	if c.done {
		return nil, nil
	}
	var ev streamEvent
	if err := json.Unmarshal(data, &ev); err != nil {
		return nil, invalidAnswer(c.name, "an event is not JSON: %v", err)
	}
	if ev.Type == "error" {
		d := ev.Error
		if d == nil {
			d = &errorDetail{Type: "api_error", Message: "error event without details"}
		}
		return nil, streamError(c.name, d)
	}
	if ev.Type == "ping" {
		return nil, nil
	}
	if !c.started && ev.Type != "message_start" {
		return nil, invalidAnswer(c.name, "%q before message_start", ev.Type)
	}
	switch ev.Type {
	case "message_start":
		if c.started {
			return nil, invalidAnswer(c.name, "a second message_start")
		}
		if ev.Message == nil {
			return nil, invalidAnswer(c.name, "message_start without a message")
		}
		c.started = true
		c.id, c.model = ev.Message.ID, ev.Message.Model
		if c.model == "" {
			c.model = c.m.model
		}
		c.usage.merge(ev.Message.Usage)
		return [][]byte{c.delta(oai.Delta{Role: "assistant", Content: new(string)}, nil)}, nil

	case "content_block_start":
		if ev.Index == nil || ev.ContentBlock == nil {
			return nil, invalidAnswer(c.name, "content_block_start without an index or a block")
		}
		i, b := *ev.Index, ev.ContentBlock
		if c.open[i] || c.text[i] {
			return nil, invalidAnswer(c.name, "block %d started twice", i)
		}
		if _, ok := c.calls[i]; ok {
			return nil, invalidAnswer(c.name, "block %d started twice", i)
		}
		c.open[i] = true
		switch b.Type {
		case "text":
			c.text[i] = true
			if b.Text != "" {
				s := b.Text
				return [][]byte{c.delta(oai.Delta{Content: &s}, nil)}, nil
			}
		case "tool_use":
			if b.ID == "" || b.Name == "" {
				return nil, invalidAnswer(c.name, "tool_use block %d without an id or a name", i)
			}
			k := len(c.calls)
			c.calls[i] = k
			head := oai.ToolCall{Index: &k, ID: b.ID, Type: "function",
				Function: oai.FunctionCall{Name: c.names.Real(b.Name)}}
			return [][]byte{c.delta(oai.Delta{ToolCalls: []oai.ToolCall{head}}, nil)}, nil
		}
		return nil, nil

	case "content_block_delta":
		if ev.Index == nil || ev.Delta == nil {
			return nil, invalidAnswer(c.name, "content_block_delta without an index or a delta")
		}
		i := *ev.Index
		if !c.open[i] {
			return nil, invalidAnswer(c.name, "delta for block %d, which is not open", i)
		}
		switch ev.Delta.Type {
		case "text_delta":
			if !c.text[i] {
				return nil, invalidAnswer(c.name, "text_delta for block %d, which is not text", i)
			}
			if ev.Delta.Text == "" {
				return nil, nil
			}
			s := ev.Delta.Text
			return [][]byte{c.delta(oai.Delta{Content: &s}, nil)}, nil
		case "input_json_delta":
			k, ok := c.calls[i]
			if !ok {
				return nil, invalidAnswer(c.name, "input_json_delta for block %d, which is not a tool_use", i)
			}
			if ev.Delta.PartialJSON == "" {
				return nil, nil
			}
			frag := oai.ToolCall{Index: &k, Function: oai.FunctionCall{Arguments: ev.Delta.PartialJSON}}
			return [][]byte{c.delta(oai.Delta{ToolCalls: []oai.ToolCall{frag}}, nil)}, nil
		}
		return nil, nil // thinking_delta, signature_delta, citations_delta, ...

	case "content_block_stop":
		if ev.Index == nil || !c.open[*ev.Index] {
			return nil, invalidAnswer(c.name, "content_block_stop for a block that is not open")
		}
		c.open[*ev.Index] = false
		return nil, nil

	case "message_delta":
		if ev.Delta != nil && ev.Delta.StopReason != nil {
			c.stop = *ev.Delta.StopReason
		}
		if ev.Usage != nil {
			c.usage.merge(*ev.Usage) // counts here are totals so far, not increments
		}
		return nil, nil

	case "message_stop":
		c.done = true
		finish := finishReason(c.stop)
		return [][]byte{
			c.delta(oai.Delta{}, &finish),
			c.marshal(oai.Chunk{Choices: []oai.ChunkChoice{}, Usage: openAIUsage(c.usage)}),
		}, nil
	}
	return nil, nil // event types added after this was written
}

func (c *chunker) delta(d oai.Delta, finish *string) []byte {
	return c.marshal(oai.Chunk{Choices: []oai.ChunkChoice{{Delta: d, FinishReason: finish}}})
}

func (c *chunker) marshal(ch oai.Chunk) []byte {
	ch.ID, ch.Object, ch.Created, ch.Model = completionID(c.id), "chat.completion.chunk", c.m.created, c.model
	b, err := json.Marshal(ch)
	if err != nil { // strings and numbers only: cannot fail
		panic(fmt.Sprintf("anthropic: encode chunk: %v", err))
	}
	return b
}
