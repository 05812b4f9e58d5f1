package gateway

import (
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/maskgate/maskgate/backends/oai"
	"github.com/maskgate/maskgate/toolsearch/meta"
	"github.com/maskgate/maskgate/toolsearch/policy"
	"github.com/maskgate/maskgate/toolsearch/state"
)

// keepExchange files this request's hidden exchange under its thread, to be spliced back
// after the client's messages of this request.
func (s *Server) keepExchange(p *toolPlan) {
	if len(p.hidden) == 0 || p.thread == "" {
		return
	}
	hidden := make([]json.RawMessage, len(p.hidden))
	for i, h := range p.hidden {
		hidden[i] = h
	}
	s.opt.State.AddSplice(p.thread, state.Splice{After: p.clientMsgs, Messages: hidden})
}

// roundsExceeded is the answer when the model still calls meta-tools or unloaded tools
// after MaxRounds: those calls must not reach the client, and there is nothing else to
// give it.
func (s *Server) roundsExceeded() error {
	return &apiError{Status: http.StatusBadGateway, Type: "upstream_error", Code: "tool_rounds_exceeded",
		Message: fmt.Sprintf("the model was still searching for or loading tools after %d rounds; raise search.max_rounds or load the tools it needs up front", s.opt.MaxRounds)}
}

// needsRound says whether the gateway must answer these calls itself: any meta-tool call,
// or any call to a tool outside the loaded set.
func (s *Server) needsRound(p *toolPlan, calls []oai.ToolCall) bool {
	for _, c := range calls {
		if meta.IsMeta(c.Function.Name) || !s.callable(p, c.Function.Name) {
			return true
		}
	}
	return false
}

// countDisabled counts the calls to tools the model may not call: not meta-tools and
// not callable in this request.
func (s *Server) countDisabled(x *exchange, p *toolPlan, calls []oai.ToolCall, outcome string) {
	n := 0
	for _, c := range calls {
		if !meta.IsMeta(c.Function.Name) && !s.callable(p, c.Function.Name) {
			n++
		}
	}
	p.strays += n
	if n > 0 {
		s.metrics.disabledCalls.WithLabelValues(x.backend, string(x.strategy), outcome).Add(float64(n))
	}
}

// runCalls appends the model's message and one tool message per call, updating the
// loaded set. Calls to loaded tools made alongside meta-tool calls are asked for again,
// since the client cannot run half a turn.
func (s *Server) runCalls(r *http.Request, p *toolPlan, msg json.RawMessage, calls []oai.ToolCall) {
	p.add(msg)
	var searcher meta.Searcher = meta.IndexSearcher{Index: p.ix}
	if p.hybrid != nil {
		searcher = meta.HybridSearcher{Hybrid: p.hybrid}
	}
	env := meta.Env{
		Searcher: searcher,
		Names:    p.cat,
		Allowed: func(ph meta.Phase, name string) bool {
			return s.opt.Policy.Allowed(policy.Phase(ph), p.policy, name)
		},
		Loaded:   func(name string) bool { return contains(p.loaded, name) },
		AutoLoad: s.opt.AutoLoad,
		TopK:     s.opt.SearchTopK,
		MinScore: s.opt.SearchMinScore,
	}
	for _, c := range calls {
		var content string
		switch name := c.Function.Name; {
		case meta.IsMeta(name):
			out := meta.Execute(r.Context(), meta.Call{Name: name, Arguments: c.Function.Arguments}, env)
			if out.Log != nil {
				// The arguments come from the prompt: only a debug log shows them.
				s.log.Warn("tool search failed", "request_id", requestID(r.Context()), "error", out.Log)
				s.log.Debug("tool search failed", "request_id", requestID(r.Context()), "arguments", c.Function.Arguments)
			}
			if len(out.Load) > 0 {
				p.loaded = append(p.loaded, s.load(p, out.Load)...)
			}
			content = out.Content
		case !s.callable(p, name):
			if _, ok := p.cat.Lookup(name); ok {
				content = meta.NotLoadedError(name)
			} else {
				content = meta.UnknownToolError(name)
			}
		default:
			content = `{"error":"call ` + jsonEscape(name) + ` again on its own, after the meta-tool calls of this turn"}`
		}
		p.add(toolMessage(c.ID, content))
	}
}

func (p *toolPlan) add(m []byte) {
	p.messages = append(p.messages, m)
	p.hidden = append(p.hidden, m)
}

func toolMessage(id, content string) []byte {
	b, _ := json.Marshal(struct {
		Role       string `json:"role"`
		ToolCallID string `json:"tool_call_id"`
		Content    string `json:"content"`
	}{"tool", id, content})
	return b
}

func jsonEscape(s string) string {
	b, _ := json.Marshal(s)
	return string(b[1 : len(b)-1])
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// withUsage replaces the response's usage with the sum over all rounds.
func withUsage(body []byte, u *oai.Usage) ([]byte, error) {
	raw, _ := json.Marshal(u)
	return oai.Set(body, "usage", raw)
}
