package gateway

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"runtime/debug"
	"sync"

	"github.com/maskgate/maskgate/backends/oai"
	"github.com/maskgate/maskgate/gateway/access"
	"github.com/maskgate/maskgate/gateway/observe"
	"github.com/maskgate/maskgate/gateway/planner"
	"github.com/maskgate/maskgate/toolsearch/meta"
)

// roundsExceeded is the answer when the model still calls meta-tools or unloaded tools
// after MaxRounds: those calls must not reach the client, and there is nothing else to
// give it.
func roundsExceeded(p *planner.Plan) error {
	return &apiError{Status: http.StatusBadGateway, Type: "upstream_error", Code: "tool_rounds_exceeded",
		Message: fmt.Sprintf("the model was still calling tools the gateway answers (search, load, or tools it runs) after %d rounds; raise search.max_rounds or load the tools it needs up front", p.Profile().MaxRounds)}
}

// needsRound says whether the gateway must answer these calls itself: any meta-tool call,
// any call to a tool outside the loaded set, or a call to a tool the gateway runs.
func (s *Server) needsRound(p *planner.Plan, calls []oai.ToolCall) bool {
	for _, c := range calls {
		if meta.IsMeta(c.Function.Name) || !p.Callable(c.Function.Name) || p.Runs(c.Function.Name) {
			return true
		}
	}
	return false
}

// runTools runs the calls to tools the gateway runs, at once, each under its own
// timeout (the runner's), and returns their tool messages' contents by call index.
func (s *Server) runTools(r *http.Request, p *planner.Plan, calls []oai.ToolCall) map[int]string {
	out := map[int]string{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	bearer := forwardedBearer(r) // for a runner told to pass the caller's token on
	tctx := r.Context()          // with tracing, tool spans go under the round's (observe.View.ToolBegun)
	for i, c := range calls {
		if meta.IsMeta(c.Function.Name) || !p.Callable(c.Function.Name) || !p.Runs(c.Function.Name) {
			continue
		}
		if p.Cut() {
			s.metrics.toolRuns.WithLabelValues(p.Profile().Name, "error").Observe(0)
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
			content, isErr := s.runOne(ctx, p.Profile().Runner, c.Function.Name, json.RawMessage(c.Function.Arguments), bearer)
			errType := ""
			outcome := "ok"
			if isErr {
				outcome, errType = "error", observe.ToolErrFailed
				s.log.Warn("tool run failed; the model gets the error as the result", "request_id", requestID(r.Context()),
					"profile", p.Profile().Name, "tool", c.Function.Name, "error", truncate(content, 300))
				content = `{"error":"` + jsonEscape(content) + `"}`
			}
			s.metrics.toolRuns.WithLabelValues(p.Profile().Name, outcome).Observe(s.now().Sub(t).Seconds())
			s.ops.ToolEnded(ctx, sp, errType)
			mu.Lock()
			out[i] = content
			mu.Unlock()
		}()
	}
	wg.Wait()
	return out
}

// forwardedBearer is the token a forward_auth MCP server gets for r's caller: with keys,
// the key's own MCP token (tenant.Key.MCPToken), never the gateway key the caller
// presented; without keys, the bearer the caller sent (it is no secret of the gateway's
// then: a local program passing its own token on).
func forwardedBearer(r *http.Request) string {
	if k := callerOf(r.Context()).key; k != nil {
		return k.MCPToken
	}
	bearer, _ := access.PresentedKey(r.Header)
	return bearer
}

// runOne runs one call through runner. A runner that panics (a fault in an MCP client or
// in what a server answered) gives a failed result the model reads: in this goroutine no
// handler's recovery would catch it, and the whole gateway would stop.
func (s *Server) runOne(ctx context.Context, runner planner.ToolRunner, tool string, args json.RawMessage, bearer string) (content string, isErr bool) {
	defer func() {
		if v := recover(); v != nil {
			s.log.Error("tool runner panicked", "tool", tool, "panic", v, "stack", string(debug.Stack()))
			content, isErr = "the gateway's runner of this tool failed", true
		}
	}()
	return runner.Run(ctx, tool, args, bearer)
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
func (s *Server) countDisabled(x *exchange, p *planner.Plan, calls []oai.ToolCall, outcome string) {
	n := 0
	for _, c := range calls {
		if !meta.IsMeta(c.Function.Name) && !p.Callable(c.Function.Name) {
			n++
		}
	}
	p.CountStrays(n)
	if n > 0 {
		s.metrics.disabledCalls.WithLabelValues(x.backend, string(x.strategy), outcome).Add(float64(n))
	}
}

// runCalls appends the model's message and one tool message per call, updating the
// loaded set. Calls to loaded tools made alongside meta-tool calls are asked for again,
// since the client cannot run half a turn.
func (s *Server) runCalls(r *http.Request, p *planner.Plan, msg json.RawMessage, calls []oai.ToolCall) error {
	p.Add(msg)
	env := p.MetaEnv()
	ran := s.runTools(r, p, calls)
	if len(ran) > 0 {
		p.DemandMet()
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
				if err := p.Load(ctx, out.Load); err != nil {
					s.ops.ToolEnded(ctx, sp, toAPIError(err).Code) // state_unavailable
					return err
				}
			}
			s.ops.ToolEnded(ctx, sp, errType)
			content = out.Content
		case !p.Callable(name):
			if _, ok := p.Catalog().Lookup(name); ok {
				content = meta.NotLoadedError(name)
			} else {
				content = meta.UnknownToolError(name)
			}
		default:
			content = `{"error":"call ` + jsonEscape(name) + ` again on its own, after the meta-tool calls of this turn"}`
		}
		p.Add(toolMessage(c.ID, content))
	}
	return nil
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

// withUsage replaces the response's usage with the sum over all rounds.
func withUsage(body []byte, u *oai.Usage) ([]byte, error) {
	raw, _ := json.Marshal(u)
	return oai.Set(body, "usage", raw)
}
