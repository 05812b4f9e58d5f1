package llamacpp

import (
	"encoding/json"
	"fmt"

	"github.com/maskgate/maskgate/backends"
	"github.com/maskgate/maskgate/backends/chatlayer"
	"github.com/maskgate/maskgate/backends/oai"
	"github.com/maskgate/maskgate/masking"
)

// grammarFields are the grammar members of the /completion body (see GrammarFunc):
//
//   - calls possible, a GrammarFunc configured: the function's grammar, told the answer
//     (response_format) so that, unless a call is required, the output is one of the
//     allowed calls or the answer;
//   - calls possible, no GrammarFunc (a tool-call format no grammar expresses) and an
//     answer: a 400, since no grammar could admit both the calls and the answer;
//   - no calls (no tools, tool_choice none) and an answer: the answer's grammar, the
//     whole output held to the schema;
//   - otherwise none.
//
// response_format never reaches /apply-template: the prompt stays the client's bytes.
//
// Where the prompt opened a reasoning block (p.inside: Qwen3's thinking templates and the
// like), a grammar that holds the answer first closes the block ("</think>\n\n", as
// those templates write an empty one): the answer then comes as content, without
// reasoning, where a grammar from the first token would have made the whole answer
// reasoning.
func (b *Backend) grammarFields(req *backends.Request, p *params, answer *masking.Answer) (json.RawMessage, error) {
	switch {
	case p.calls && b.opt.Grammar != nil:
		tools, _ := oai.Get(req.Body, "tools")
		gr := GrammarRequest{Allowed: p.allowed, Required: p.required, OneCall: p.oneCall, Tools: tools, ToolsID: req.ToolsID, Definitions: req.Definitions, Answer: answer}
		g, err := b.opt.Grammar(gr)
		if err != nil {
			return nil, fmt.Errorf("backend %q: build grammar: %w", b.opt.Name, err)
		}
		if answer != nil && !p.required && p.inside {
			return closingThink(g)
		}
		return g, nil
	case p.calls && answer != nil:
		return nil, backends.BadRequest("response_format", "backend %q reads tool calls in the %s format, which no grammar here expresses, so the answer cannot be held to response_format while tools may be called; send tool_choice \"none\" or leave response_format out", b.opt.Name, b.opt.Format)
	case answer != nil:
		g := answer.GBNF()
		if p.inside {
			g = masking.PrefixRoot(g, thinkClose)
		}
		return json.Marshal(masking.Grammar{Grammar: g})
	}
	return nil, nil
}

// thinkClose is what closes a reasoning block the prompt opened, as templates write an
// empty one.
const thinkClose = chatlayer.CloseTag + "\n\n"

// closingThink rewrites the grammar member of fields to close the reasoning block first.
func closingThink(fields json.RawMessage) (json.RawMessage, error) {
	raw, ok := oai.Get(fields, "grammar")
	var g string
	if !ok || json.Unmarshal(raw, &g) != nil {
		return fields, nil
	}
	enc, err := json.Marshal(masking.PrefixRoot(g, thinkClose))
	if err != nil {
		return nil, err
	}
	return oai.Set(fields, "grammar", enc)
}
