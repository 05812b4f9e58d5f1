//go:build llamacpp

package embedded

import (
	"encoding/json"

	"github.com/ardanlabs/jinja"

	"github.com/maskgate/maskgate/backends/chatlayer"
	"github.com/maskgate/maskgate/backends/toolcall"
)

// Reasoning, as backends/chatlayer reads it for the llamacpp backend too: an answer's
// leading <think> block is reasoning_content, never content; the history's reasoning
// reaches the template as each message's reasoning_content, as llama-server passes it;
// reasoning_effort becomes the template's enable_thinking (Qwen3) or reasoning_effort
// (gpt-oss).

// templateExtra is what the template gets besides the messages' and tools' values.
type templateExtra struct {
	reasoning []string               // per message, "" where none
	vars      map[string]jinja.Value // the reasoning switch's variables
}

// historyReasoning is each message's reasoning, under either name (reasoning when both
// are set, as oai.ResponseMessage.Thought reads it); nil when no message has any.
func historyReasoning(ext *extensions) []string {
	var out []string
	for i, m := range ext.Messages {
		s := m.ReasoningContent
		if m.Reasoning != nil {
			s = m.Reasoning
		}
		if s == nil || *s == "" {
			continue
		}
		if out == nil {
			out = make([]string, len(ext.Messages))
		}
		out[i] = *s
	}
	return out
}

// extra is r's templateExtra for a model whose tool-call format is format.
func (r *request) extra(format string) (templateExtra, error) {
	x := templateExtra{reasoning: r.reasoning}
	kw, err := chatlayer.Effort(r.effort, format == toolcall.Harmony)
	if err != nil {
		return x, badRequest("reasoning_effort", err.Error())
	}
	if kw == nil {
		return x, nil
	}
	var members map[string]any
	if err := json.Unmarshal(kw, &members); err != nil {
		return x, err
	}
	x.vars = map[string]jinja.Value{}
	for k, v := range members {
		x.vars[k] = jinja.FromGoValue(v)
	}
	return x, nil
}

// thinks says the model writes its reasoning as a <think> block (harmony's models write
// an analysis channel instead).
func thinks(format string) bool { return format != toolcall.Harmony }
