package ollama

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/ollama/ollama/api"

	"github.com/maskgate/maskgate/backends"
	"github.com/maskgate/maskgate/backends/oai"
)

// reply accumulates Ollama's answer, line by line.
type reply struct {
	content strings.Builder
	calls   []api.ToolCall
	done    bool
	reason  string // done_reason
	metrics api.Metrics
}

// add takes one response line; lines after the one marked done are ignored.
func (r *reply) add(resp *api.ChatResponse) {
	if r.done {
		return
	}
	r.content.WriteString(resp.Message.Content)
	r.calls = append(r.calls, resp.Message.ToolCalls...)
	if resp.Done {
		r.done = true
		r.reason = resp.DoneReason
		r.metrics = resp.Metrics
	}
}

// answer is the assistant turn in OpenAI terms.
type answer struct {
	content *string
	calls   []oai.ToolCall
	finish  string
}

// finalAnswer reads a finished reply. For a forced call it parses the model's JSON into
// one tool call; when the model was cut off first, the text is returned with "length".
func (t *translated) finalAnswer(r *reply, newCallID func() string) (answer, error) {
	text := r.content.String()
	if t.mode == toolsRequired && len(r.calls) == 0 {
		name, args, err := parseForcedCall(text)
		if err != nil {
			if r.reason == "length" {
				return answer{content: &text, finish: oai.FinishLength}, nil
			}
			return answer{}, &backends.Error{Status: http.StatusBadGateway, Type: "upstream_error", Code: "upstream_invalid_tool_call",
				Message: fmt.Sprintf("the model's answer to a required tool call is not a call: %v", err)}
		}
		call := oai.ToolCall{ID: newCallID(), Type: "function", Function: oai.FunctionCall{Name: name, Arguments: args}}
		return answer{calls: []oai.ToolCall{call}, finish: oai.FinishToolCalls}, nil
	}
	a := answer{finish: finishReason(r.reason, len(r.calls) > 0)}
	for _, c := range r.calls {
		a.calls = append(a.calls, convertCall(c, newCallID))
	}
	if len(a.calls) == 0 || text != "" {
		a.content = &text
	}
	return a, nil
}

func finishReason(doneReason string, calls bool) string {
	switch {
	case calls:
		return oai.FinishToolCalls
	case doneReason == "length":
		return oai.FinishLength
	default:
		return oai.FinishStop
	}
}

// convertCall turns one of Ollama's parsed calls into OpenAI's, keeping Ollama's id when
// it sent one.
func convertCall(c api.ToolCall, newCallID func() string) oai.ToolCall {
	id := c.ID
	if id == "" {
		id = newCallID()
	}
	args, err := c.Function.Arguments.MarshalJSON()
	if err != nil { // values came from JSON: cannot fail
		args = []byte("{}")
	}
	return oai.ToolCall{ID: id, Type: "function", Function: oai.FunctionCall{Name: c.Function.Name, Arguments: string(args)}}
}

// parseForcedCall reads {"name": ..., "arguments": {...}}, the shape callFormat forces.
// The arguments keep the model's key order, compacted.
func parseForcedCall(text string) (name, args string, err error) {
	var v struct {
		Name      *string         `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	}
	if err := json.Unmarshal([]byte(text), &v); err != nil {
		return "", "", fmt.Errorf("not a JSON object: %w", err)
	}
	if v.Name == nil || *v.Name == "" {
		return "", "", fmt.Errorf("no name")
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, v.Arguments); err != nil || buf.Len() == 0 || buf.Bytes()[0] != '{' {
		return "", "", fmt.Errorf("arguments of %q are not an object", *v.Name)
	}
	return *v.Name, buf.String(), nil
}

// meta is what a response carries besides the answer.
type meta struct {
	id        string
	created   int64
	model     string
	newCallID func() string
}

// usage is OpenAI's usage for a finished reply with cached tokens estimated.
func usage(r *reply, cached int) *oai.Usage {
	p, c := r.metrics.PromptEvalCount, r.metrics.EvalCount
	return &oai.Usage{PromptTokens: p, CompletionTokens: c, TotalTokens: p + c,
		PromptTokensDetails: &oai.PromptTokensDetails{CachedTokens: cached}}
}

// completion builds the chat.completion for a finished reply.
func (t *translated) completion(r *reply, m meta, cached int) (*oai.ChatCompletion, error) {
	a, err := t.finalAnswer(r, m.newCallID)
	if err != nil {
		return nil, err
	}
	return &oai.ChatCompletion{
		ID: m.id, Object: "chat.completion", Created: m.created, Model: m.model,
		Choices: []oai.Choice{{
			Message:      oai.ResponseMessage{Role: "assistant", Content: a.content, ToolCalls: a.calls},
			FinishReason: a.finish,
		}},
		Usage: usage(r, cached),
	}, nil
}
