package gateway

import (
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/maskgate/maskgate/backends"
	"github.com/maskgate/maskgate/backends/oai"
	"github.com/maskgate/maskgate/toolsearch/meta"
	"github.com/maskgate/maskgate/toolsearch/policy"
	"github.com/maskgate/maskgate/toolsearch/state"
)

// roundReply is what the loop reads of one round's answer.
type roundReply struct {
	Choices []struct {
		Message      json.RawMessage `json:"message"`
		FinishReason string          `json:"finish_reason"`
	} `json:"choices"`
	Usage *oai.Usage `json:"usage"`
}

// serverLoop runs meta-tool calls inside the request: it calls the backend, answers
// search_tools and load_tool itself (and calls to tools that are not loaded with an
// error the model can act on), appends call and result, and calls again, until the model
// answers or calls a loaded tool, or MaxRounds is spent. The client sees only the last
// answer; the exchange is kept for its thread and spliced back on the next request, so
// the engine's view of the conversation only grows at the end.
//
// A streaming client goes through streamLoop instead.
func (s *Server) serverLoop(w http.ResponseWriter, r *http.Request, x *exchange, be backends.Backend, env *oai.Envelope, p *toolPlan) error {
	if env.Stream {
		return s.streamLoop(w, r, x, be, env, p)
	}
	var total oai.Usage
	var last []byte
	for round := 0; ; round++ {
		body, err := s.upstreamBody(env.Object, p, false)
		if err != nil {
			return err
		}
		t := s.now()
		resp, err := be.ChatCompletion(r.Context(), s.backendRequest(x, p, body, env.Model, false))
		x.upstream += s.now().Sub(t)
		if err != nil {
			return err
		}
		if resp.Body == nil {
			return &apiError{Status: http.StatusBadGateway, Type: "upstream_error", Message: "backend " + x.backend + " streamed a request that did not ask for it"}
		}
		var reply roundReply
		if err := json.Unmarshal(resp.Body, &reply); err != nil || len(reply.Choices) == 0 {
			return &apiError{Status: http.StatusBadGateway, Type: "upstream_error", Code: "upstream_invalid_response",
				Message: fmt.Sprintf("backend %q returned a response without choices", x.backend), Err: err}
		}
		if u := reply.Usage; u != nil {
			addUsage(&total, u)
		}
		x.strategy = backendLabel(p, x.strategy, resp.Strategy)
		x.cache = cacheSource(resp.Cache, reply.Usage)
		last = resp.Body
		msg := reply.Choices[0].Message
		var m oai.Message
		if err := json.Unmarshal(msg, &m); err != nil {
			return &apiError{Status: http.StatusBadGateway, Type: "upstream_error", Message: "backend returned an unreadable message", Err: err}
		}
		if len(m.ToolCalls) == 0 || !s.needsRound(p, m.ToolCalls) {
			break
		}
		if round >= s.opt.MaxRounds {
			s.keepExchange(p)
			s.countDisabled(x, p, m.ToolCalls, outcomeRefused)
			return s.roundsExceeded()
		}
		s.countDisabled(x, p, m.ToolCalls, outcomeRetried)
		s.runCalls(r, p, msg, m.ToolCalls)
	}
	s.keepExchange(p)
	out, err := withUsage(last, &total)
	if err != nil {
		return err
	}
	return s.whole(w, x, &backends.Response{Body: out, Strategy: x.strategy, Cache: x.cache})
}

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
		s.metrics.disabledCalls.WithLabelValues(x.backend, x.strategy, outcome).Add(float64(n))
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
