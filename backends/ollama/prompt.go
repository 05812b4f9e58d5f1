package ollama

import (
	"encoding/json"

	"github.com/ollama/ollama/api"

	"github.com/maskgate/maskgate/kvcache"
)

// canonicalPrompt renders what Ollama's template turns into the prompt (tools, then the
// messages) as bytes that are the same for the same conversation, and that a later turn
// extends: one JSON line for the tools, then one per message. Call ids are left out, as
// templates do not render them and they differ between otherwise equal turns.
func canonicalPrompt(req *api.ChatRequest) []byte {
	var out []byte
	if len(req.Tools) > 0 {
		tools, err := json.Marshal(req.Tools)
		if err == nil {
			out = append(out, "tools "...)
			out = append(out, tools...)
			out = append(out, '\n')
		}
	}
	for _, m := range req.Messages {
		out = appendCanonicalMessage(out, m)
	}
	return out
}

type canonicalCall struct {
	Name      string                        `json:"name"`
	Arguments api.ToolCallFunctionArguments `json:"arguments"`
}

type canonicalMessage struct {
	Role     string          `json:"role"`
	Content  string          `json:"content"`
	Calls    []canonicalCall `json:"calls,omitempty"`
	ToolName string          `json:"tool_name,omitempty"`
}

func appendCanonicalMessage(out []byte, m api.Message) []byte {
	c := canonicalMessage{Role: m.Role, Content: m.Content, ToolName: m.ToolName}
	for _, tc := range m.ToolCalls {
		c.Calls = append(c.Calls, canonicalCall{Name: tc.Function.Name, Arguments: tc.Function.Arguments})
	}
	b, err := json.Marshal(c)
	if err != nil { // strings and JSON-born values only: cannot fail
		return out
	}
	out = append(out, b...)
	return append(out, '\n')
}

// accounting estimates one request's cached tokens and, when the engine has answered,
// remembers what its cache now holds.
type accounting struct {
	est    *kvcache.PrefixEstimator // nil: no estimate
	model  string
	prompt []byte
	match  kvcache.PrefixMatch
	// withAnswer says whether the answer is remembered after the prompt: the engine keeps
	// the generated tokens, and the next turn renders them the same way, except for a
	// forced call, which the template renders differently from the raw JSON generated.
	withAnswer bool
}

func newAccounting(est *kvcache.PrefixEstimator, t *translated) *accounting {
	a := &accounting{est: est, model: t.req.Model, withAnswer: t.mode != toolsRequired}
	if est != nil {
		a.prompt = canonicalPrompt(t.req)
		a.match = est.Estimate(a.model, a.prompt)
	}
	return a
}

// settle records the finished reply and returns the cached tokens estimate: the matched
// share of the prompt tokens, rounded down and at most one below them, since Ollama
// always evaluates at least the last prompt token.
func (a *accounting) settle(r *reply) int {
	if a == nil || a.est == nil {
		return 0
	}
	held := a.prompt
	if a.withAnswer {
		held = appendCanonicalMessage(append([]byte(nil), a.prompt...),
			api.Message{Role: "assistant", Content: r.content.String(), ToolCalls: r.calls})
	}
	a.est.Remember(a.model, held)
	n := r.metrics.PromptEvalCount
	return max(0, min(a.match.Tokens(n), n-1))
}
