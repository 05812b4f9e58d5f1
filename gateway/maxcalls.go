package gateway

import (
	"github.com/maskgate/maskgate/backends/oai"
	"github.com/maskgate/maskgate/gateway/planner"
	"github.com/maskgate/maskgate/toolsearch/meta"
)

// A toolCallLimiter is a door whose client bounds how many calls to tools the gateway
// runs itself one answer may make (Responses' max_tool_calls, which OpenAI applies to
// its built-in tools, never to function calls the client runs); -1 for no bound.
type toolCallLimiter interface {
	maxToolCalls() int
}

func (d *responsesDoor) maxToolCalls() int {
	if d.rq == nil {
		return -1
	}
	return d.rq.MaxToolCalls
}

// toolCallLimit is d's bound on the calls the gateway runs, nil for none.
func toolCallLimit(d doorway) *int {
	if l, ok := d.(toolCallLimiter); ok {
		if n := l.maxToolCalls(); n >= 0 {
			return &n
		}
	}
	return nil
}

// builtin says whether the gateway answers a call to name itself: a meta-tool, or a
// tool it runs.
func builtin(p *planner.Plan, name string) bool {
	return meta.IsMeta(name) || (p.Callable(name) && p.Runs(name))
}

// builtinCalls counts the calls of a round the gateway would answer itself.
func builtinCalls(p *planner.Plan, calls []oai.ToolCall) int {
	n := 0
	for _, c := range calls {
		if builtin(p, c.Function.Name) {
			n++
		}
	}
	return n
}

// ignoreBuiltin takes out of rd the calls the gateway would answer itself (and those
// the model may not make), once the answer's max_tool_calls is spent, as OpenAI ignores
// further attempts: the turn ends with the round's text and the calls the client runs;
// with none left it ends with stop.
func ignoreBuiltin(p *planner.Plan, rd *round) {
	for i, c := range rd.calls {
		if name := c.name.String(); builtin(p, name) || !p.Callable(name) {
			delete(rd.calls, i)
		}
	}
	if len(rd.calls) == 0 && rd.finish == oai.FinishToolCalls {
		rd.finish = oai.FinishStop
	}
}
