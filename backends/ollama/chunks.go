package ollama

import (
	"encoding/json"

	"github.com/ollama/ollama/api"

	"github.com/maskgate/maskgate/backends/oai"
)

// chunker turns Ollama's streamed lines into chat.completion.chunk objects, as OpenAI
// streams them: the role in the first chunk only, content deltas, each tool call as a
// chunk with its index, id, type and name and then one with its arguments, a chunk with
// the finish reason, and a usage chunk with no choices.
type chunker struct {
	t     *translated
	m     meta
	acct  *accounting
	r     reply
	role  bool // the role chunk was sent
	calls int  // tool calls sent so far
}

// add converts one line. After the line marked done it returns nothing more.
func (c *chunker) add(resp *api.ChatResponse) ([][]byte, error) {
	if c.r.done {
		return nil, nil
	}
	c.r.add(resp)
	var out [][]byte
	if !c.role {
		c.role = true
		out = append(out, c.delta(oai.Delta{Role: "assistant", Content: new(string)}, nil))
	}
	if c.t.mode != toolsRequired {
		if s := resp.Message.Content; s != "" {
			out = append(out, c.delta(oai.Delta{Content: &s}, nil))
		}
		for _, tc := range resp.Message.ToolCalls {
			out = append(out, c.callChunks(convertCall(tc, c.m.newCallID))...)
		}
	}
	if !c.r.done {
		return out, nil
	}
	finish := finishReason(c.r.reason, c.calls > 0)
	if c.t.mode == toolsRequired {
		a, err := c.t.finalAnswer(&c.r, c.m.newCallID)
		if err != nil {
			return out, err
		}
		if a.content != nil && *a.content != "" {
			out = append(out, c.delta(oai.Delta{Content: a.content}, nil))
		}
		for _, call := range a.calls {
			out = append(out, c.callChunks(call)...)
		}
		finish = a.finish
	}
	out = append(out, c.delta(oai.Delta{}, &finish))
	out = append(out, c.marshal(oai.Chunk{Choices: []oai.ChunkChoice{}, Usage: usage(&c.r, c.acct.settle(&c.r))}))
	return out, nil
}

// done says whether Ollama has said the reply is complete.
func (c *chunker) done() bool { return c.r.done }

func (c *chunker) callChunks(call oai.ToolCall) [][]byte {
	i := c.calls
	c.calls++
	head := oai.ToolCall{Index: &i, ID: call.ID, Type: "function", Function: oai.FunctionCall{Name: call.Function.Name}}
	args := oai.ToolCall{Index: &i, Function: oai.FunctionCall{Arguments: call.Function.Arguments}}
	return [][]byte{
		c.delta(oai.Delta{ToolCalls: []oai.ToolCall{head}}, nil),
		c.delta(oai.Delta{ToolCalls: []oai.ToolCall{args}}, nil),
	}
}

func (c *chunker) delta(d oai.Delta, finish *string) []byte {
	return c.marshal(oai.Chunk{Choices: []oai.ChunkChoice{{Delta: d, FinishReason: finish}}})
}

func (c *chunker) marshal(ch oai.Chunk) []byte {
	ch.ID, ch.Object, ch.Created, ch.Model = c.m.id, "chat.completion.chunk", c.m.created, c.m.model
	b, err := json.Marshal(ch)
	if err != nil { // strings, numbers and compacted JSON text only: cannot fail
		panic(err)
	}
	return b
}
