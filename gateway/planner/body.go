package planner

import (
	"bytes"
	"encoding/json"

	"github.com/maskgate/maskgate/backends"
	"github.com/maskgate/maskgate/backends/oai"
	"github.com/maskgate/maskgate/toolsearch/meta"
	"github.com/maskgate/maskgate/toolsearch/policy"
	"github.com/maskgate/maskgate/toolsearch/state"
)

// spliceMessages puts each hidden exchange back after the client message it followed,
// found by its content (state.Place): an exchange whose message the client removed or
// rewrote is dropped, and what it loaded stays loaded.
func spliceMessages(client []json.RawMessage, splices []state.Splice) [][]byte {
	at := state.Place(client, splices)
	out := make([][]byte, 0, len(client))
	for i := 0; i <= len(client); i++ {
		for k, sp := range splices {
			if at[k] == i {
				for _, m := range sp.Messages {
					out = append(out, m)
				}
			}
		}
		if i < len(client) {
			out = append(out, client[i])
		}
	}
	return out
}

// Active is the loaded set less what the policy hides in this request.
func (p *Plan) Active() []string {
	out := make([]string, 0, len(p.loaded))
	for _, name := range p.loaded {
		if !p.removed[name] && p.rules.Allowed(policy.Active, p.policy, name) {
			out = append(out, name)
		}
	}
	return out
}

// UpstreamBody rewrites the client's request for the engine: tools become the
// meta-tools followed by the loaded tools in load order (so loads only ever append),
// messages become the spliced conversation, and a streamed round asks for usage (the
// gateway counts every round).
func (p *Plan) UpstreamBody(req *oai.Object, stream bool) ([]byte, error) {
	tools := p.ToolsArray()
	msgs := make([]byte, 0, 1024)
	msgs = append(msgs, '[')
	for i, m := range p.messages {
		if i > 0 {
			msgs = append(msgs, ',')
		}
		msgs = append(msgs, m...)
	}
	msgs = append(msgs, ']')

	// One copy of a body that may hold a 300 KB catalog, however many edits.
	edits := []oai.Edit{{Key: "tools", Value: tools}, {Key: "messages", Value: msgs},
		{Key: "stream", Value: []byte(boolJSON(stream))}}
	if !stream {
		edits = append(edits, oai.Edit{Key: "stream_options", Delete: true})
	}
	client, _ := req.Get("tool_choice")
	if p.toolChoice != nil {
		client = p.toolChoice
	}
	if p.strategy == StrategyAllowedTools {
		if choice, ok := p.allowedToolChoice(client); ok {
			edits = append(edits, oai.Edit{Key: "tool_choice", Value: choice})
		} else if p.toolChoice != nil {
			edits = append(edits, oai.Edit{Key: "tool_choice", Value: p.toolChoice})
		}
	} else if p.toolChoice != nil {
		edits = append(edits, oai.Edit{Key: "tool_choice", Value: p.toolChoice})
	}
	if stream {
		// Last, so the member lands where requestUsage after the edits put it.
		edits = append(edits, oai.Edit{Key: "stream_options", Value: req.UsageOptions()})
	}
	return req.Edit(edits...), nil
}

// The thread pin that keeps the meta-tools' definitions in or out of a whole-catalog
// tools array for all of a thread's turns; a backend's name is never this.
const (
	metaPin       = "\x00meta-tools"
	metaShown     = "shown"
	metaHiddenPin = "hidden"
)

// ToolsArray is the tools the engine sees: under eager the whole catalog alone; else the
// meta-tools, then under remove the loaded tools in load order (so loads only append),
// under the others the whole catalog in its fixed order (the same bytes whatever is
// loaded).
func (p *Plan) ToolsArray() []byte {
	if p.strategy == StrategyEager {
		return p.cat.Render()
	}
	if p.strategy == StrategyIndex {
		return p.indexTools()
	}
	// A client that searches itself finds and loads tools with its own (Claude Code's
	// ToolSearch) and is offered no meta-tools: under remove they would only be stray
	// calls, and under mask definitions the model may not call. Where the whole catalog
	// goes out, the thread's first request decided (metaHidden), so that an agent whose
	// first turn deferred nothing keeps the same bytes when it starts searching; mask
	// leaves the meta-tools out of the allowed set either way (allowedNames).
	key := p.cat.Version() + boolJSON(p.prof.AutoLoad)
	tools, sep := bytes.TrimSuffix(meta.Definitions(p.prof.AutoLoad), []byte("]")), []byte(",")
	if p.metaHidden {
		key += "/client"
		tools, sep = []byte("["), nil
	}
	if p.WholeCatalog() {
		// The same bytes for every request of the catalog: built once per version.
		// Shared, so read-only: it has no spare capacity for an append to write into.
		return p.pl.catalogs.wholeTools(key, func() []byte {
			r := p.cat.Render()
			out := make([]byte, 0, len(tools)+len(r))
			return append(append(append(out, tools...), sep...), r[1:]...)
		})
	}
	if loaded := p.cat.AppendNames(nil, p.Active()); len(loaded) > 2 {
		return append(append(append([]byte(nil), tools...), sep...), loaded[1:]...)
	}
	return append(append([]byte(nil), tools...), ']')
}

// allowed is what a constraining backend lets the model call under mask: the
// meta-tools and the active loaded tools. Nil under other strategies.
func (p *Plan) allowed() []string {
	if p.strategy != StrategyMask && (p.strategy != StrategyIndex || p.loadKind != backends.LoadByDefinition) {
		return nil
	}
	return p.allowedNames()
}

func boolJSON(b bool) string {
	if b {
		return "true"
	}
	return "false"
}
