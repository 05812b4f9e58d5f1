package gateway

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sync"

	"github.com/maskgate/maskgate/backends/oai"
	"github.com/maskgate/maskgate/gateway/access"
	"github.com/maskgate/maskgate/gateway/observe"
	"github.com/maskgate/maskgate/toolsearch"
	"github.com/maskgate/maskgate/toolsearch/meta"
	"github.com/maskgate/maskgate/toolsearch/policy"
	"github.com/maskgate/maskgate/toolsearch/state"
)

// keepExchange files this request's hidden exchange under its thread, to be spliced back
// after the client's last message of this request, found by its content.
func (s *Server) keepExchange(ctx context.Context, p *toolPlan) error {
	if len(p.hidden) == 0 || p.thread == "" {
		return nil
	}
	hidden := make([]json.RawMessage, len(p.hidden))
	for i, h := range p.hidden {
		hidden[i] = h
	}
	sp := state.Splice{After: p.clientMsgs, Messages: hidden}
	if p.lastClient != nil {
		sp.Anchor = state.AnchorOf(p.lastClient)
	}
	if err := s.store.AddSplice(ctx, p.thread, sp); err != nil {
		return stateUnavailable(err)
	}
	return nil
}

// roundsExceeded is the answer when the model still calls meta-tools or unloaded tools
// after MaxRounds: those calls must not reach the client, and there is nothing else to
// give it.
func roundsExceeded(p *toolPlan) error {
	return &apiError{Status: http.StatusBadGateway, Type: "upstream_error", Code: "tool_rounds_exceeded",
		Message: fmt.Sprintf("the model was still calling tools the gateway answers (search, load, or tools it runs) after %d rounds; raise search.max_rounds or load the tools it needs up front", p.prof.MaxRounds)}
}

// needsRound says whether the gateway must answer these calls itself: any meta-tool call,
// any call to a tool outside the loaded set, or a call to a tool the gateway runs.
func (s *Server) needsRound(p *toolPlan, calls []oai.ToolCall) bool {
	for _, c := range calls {
		if meta.IsMeta(c.Function.Name) || !s.callable(p, c.Function.Name) || p.runs(c.Function.Name) {
			return true
		}
	}
	return false
}

// runs says whether the gateway runs calls to name itself (a profile tool, not one the
// client sent under that name).
func (p *toolPlan) runs(name string) bool {
	if p.prof.Runner == nil || !p.prof.Runner.Runs(name) {
		return false
	}
	t, ok := p.cat.Lookup(name)
	return ok && t.Source == toolsearch.FromProfile
}

// runTools runs the calls to tools the gateway runs, at once, each under its own
// timeout (the runner's), and returns their tool messages' contents by call index.
func (s *Server) runTools(r *http.Request, p *toolPlan, calls []oai.ToolCall) map[int]string {
	out := map[int]string{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	bearer, _ := access.PresentedKey(r.Header) // the caller's own key, for a runner told to pass it on
	tctx := r.Context()                        // with tracing, tool spans go under the round's (observe.View.ToolBegun)
	for i, c := range calls {
		if meta.IsMeta(c.Function.Name) || !s.callable(p, c.Function.Name) || !p.runs(c.Function.Name) {
			continue
		}
		if p.cut {
			s.metrics.toolRuns.WithLabelValues(p.prof.Name, "error").Observe(0)
			_, sp := s.ops.ToolBegun(tctx, c.Function.Name, c.ID, observe.ToolTypeExtension) // a failed run, as the metric counts it
			s.ops.ToolEnded(tctx, sp, observe.ToolErrCut)
			out[i] = `{"error":"the call to ` + jsonEscape(c.Function.Name) + ` was cut short by max_tokens before its arguments ended; nothing ran"}`
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			t := s.now()
			ctx, sp := s.ops.ToolBegun(tctx, c.Function.Name, c.ID, observe.ToolTypeExtension)
			content, isErr := p.prof.Runner.Run(ctx, c.Function.Name, json.RawMessage(c.Function.Arguments), bearer)
			errType := ""
			outcome := "ok"
			if isErr {
				outcome, errType = "error", observe.ToolErrFailed
				s.log.Warn("tool run failed; the model gets the error as the result", "request_id", requestID(r.Context()),
					"profile", p.prof.Name, "tool", c.Function.Name, "error", truncate(content, 300))
				content = `{"error":"` + jsonEscape(content) + `"}`
			}
			s.metrics.toolRuns.WithLabelValues(p.prof.Name, outcome).Observe(s.now().Sub(t).Seconds())
			s.ops.ToolEnded(ctx, sp, errType)
			mu.Lock()
			out[i] = content
			mu.Unlock()
		}()
	}
	wg.Wait()
	return out
}

// truncate cuts s to at most n bytes for a log line, saying so.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
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
func (s *Server) runCalls(r *http.Request, p *toolPlan, msg json.RawMessage, calls []oai.ToolCall) error {
	p.add(msg)
	var searcher meta.Searcher = meta.IndexSearcher{Index: p.ix}
	if p.hybrid != nil {
		searcher = meta.HybridSearcher{Hybrid: p.hybrid}
	}
	env := meta.Env{
		Searcher: searcher,
		Names:    p.cat,
		Allowed: func(ph meta.Phase, name string) bool {
			return !p.removed[name] && p.rules.Allowed(policy.Phase(ph), p.policy, name)
		},
		Loaded:   func(name string) bool { return contains(p.loaded, name) },
		AutoLoad: p.prof.AutoLoad,
		TopK:     p.prof.SearchTopK,
		MinScore: p.prof.SearchMinScore,
	}
	ran := s.runTools(r, p, calls)
	if len(ran) > 0 && p.forced {
		p.toolChoice, p.forced = []byte(`"auto"`), false
	}
	for i, c := range calls {
		content, done := ran[i]
		switch name := c.Function.Name; {
		case done:
		case meta.IsMeta(name):
			ctx, sp := s.ops.ToolBegun(r.Context(), c.Function.Name, c.ID, observe.ToolTypeDatastore)
			out := meta.Execute(ctx, meta.Call{Name: name, Arguments: c.Function.Arguments}, env)
			errType := ""
			if out.Log != nil {
				errType = observe.ToolErrFailed
				// The arguments come from the prompt: only a debug log shows them.
				s.log.Warn("tool search failed", "request_id", requestID(r.Context()), "error", out.Log)
				s.log.Debug("tool search failed", "request_id", requestID(r.Context()), "arguments", c.Function.Arguments)
			}
			if len(out.Load) > 0 {
				added, err := s.load(ctx, p, out.Load)
				if err != nil {
					s.ops.ToolEnded(ctx, sp, toAPIError(err).Code) // state_unavailable
					return err
				}
				p.loaded = append(p.loaded, added...)
			}
			s.ops.ToolEnded(ctx, sp, errType)
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
	return nil
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
