package planner

import (
	"bytes"
	"encoding/json"
	"slices"
	"strconv"

	"github.com/maskgate/maskgate/backends"
	"github.com/maskgate/maskgate/backends/oai"
	"github.com/maskgate/maskgate/toolsearch"
	"github.com/maskgate/maskgate/toolsearch/meta"
	"github.com/maskgate/maskgate/toolsearch/state"
)

// Strategy index: the engine's tools array is the meta-tools, load_tool's description
// ending in the catalog's compact index (toolsearch.Catalog.IndexText), then the client's
// callable tools — byte-identical whatever is loaded. A load puts the loaded tools' full
// definitions into the conversation, in the load's result, so the prompt only grows at
// its end; a constraining backend holds calls to the loaded set (Request.Allowed), each
// to its schema (Request.Definitions), and an upstream that loads deferred tools itself
// gets the rest of the catalog deferred and the loads as its references
// (backends.LoadDeferred).

// loadKind is how be serves index.
func loadKind(be backends.Backend) backends.LoadKind {
	if l, ok := be.(backends.ToolLoader); ok {
		return l.LoadsTools()
	}
	return backends.LoadNone
}

// indexText is the index the request's tools array carries: the catalog less the
// client's callable tools, which the engine sees whole.
func (p *Plan) indexText() (text, id string) {
	return p.cat.IndexText(!p.clientCallable)
}

// isCallable says whether name is one of the client's tools the engine sees whole under
// index (loaded from the first turn, never behind the index).
func (p *Plan) isCallable(name string) bool {
	if !p.clientCallable {
		return false
	}
	t, ok := p.cat.Lookup(name)
	return ok && t.Source == toolsearch.FromClient
}

// indexTools is index's tools array (see the top of this file); under LoadDeferred every
// other tool of the catalog follows, marked "defer_loading": true. Built once per catalog,
// index and backend kind.
func (p *Plan) indexTools() []byte {
	text, _ := p.indexText()
	return p.pl.catalogs.wholeTools(p.indexKey(), func() []byte {
		out := bytes.TrimSuffix(meta.IndexDefinitions(p.prof.AutoLoad, text), []byte("]"))
		var callable, deferred []string
		for _, t := range p.cat.All() {
			if p.isCallable(t.Name) {
				callable = append(callable, t.Name)
			} else if p.loadKind == backends.LoadDeferred {
				deferred = append(deferred, t.Name)
			}
		}
		if len(callable) > 0 {
			out = append(append(out, ','), p.cat.AppendNames(nil, callable)[1:]...)
			out = out[:len(out)-1]
		}
		for _, n := range deferred {
			one := p.cat.AppendNames(nil, []string{n})
			out = append(append(out, ','), one[1:len(one)-2]...) // the object less its last '}'
			out = append(out, `,"defer_loading":true}`...)
		}
		return append(out, ']')
	})
}

// indexKey identifies indexTools' bytes: what they are built from.
func (p *Plan) indexKey() string {
	_, id := p.indexText()
	return p.cat.Version() + "/index/" + id + "/" + boolJSON(p.prof.AutoLoad) + "/" + boolJSON(p.clientCallable) + "/" + strconv.Itoa(int(p.loadKind))
}

// definitions is Request.Definitions under index on a LoadByDefinition backend: the
// active loaded tools the tools array leaves out, in load order.
func (p *Plan) definitions() []byte {
	if p.strategy != StrategyIndex || p.loadKind != backends.LoadByDefinition {
		return nil
	}
	var names []string
	for _, n := range p.Active() {
		if !p.isCallable(n) {
			names = append(names, n)
		}
	}
	if len(names) == 0 {
		return nil // AppendNames would take nil names for the whole catalog
	}
	return p.cat.AppendNames(nil, names)
}

// define is meta.Env.Define under index: the definitions a load puts into the
// conversation, those of names and, once per request, those of loaded tools the
// conversation lost (a dropped hidden exchange, a compacted history). nil when there are
// none.
func (p *Plan) define(names []string) json.RawMessage {
	var out []string
	add := func(n string) {
		if !p.isCallable(n) && !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	for _, n := range p.missing {
		add(n)
	}
	p.missing = nil
	for _, n := range names {
		add(n)
	}
	if len(out) == 0 {
		return nil
	}
	return p.cat.AppendNames(nil, out)
}

// definitionMark is how a load result's definitions begin inside a tool message's
// content string: `"tools":[{"type":"function"` escaped as a JSON string's bytes.
var definitionMark = []byte(`\"tools\":[{\"type\":\"function\"`)

// findMissing sets p.missing: the active loaded tools whose definitions no load result
// in the engine's conversation holds any more. Their definitions come back with the
// request's next load (define).
func (p *Plan) findMissing() {
	seen := map[string]bool{}
	for _, m := range p.messages {
		if !bytes.Contains(m, definitionMark) {
			continue
		}
		var msg struct {
			Role    string `json:"role"`
			Content string `json:"content"`
		}
		if json.Unmarshal(m, &msg) != nil || msg.Role != "tool" {
			continue
		}
		var res struct {
			Tools []struct {
				Function struct {
					Name string `json:"name"`
				} `json:"function"`
			} `json:"tools"`
		}
		if json.Unmarshal([]byte(msg.Content), &res) != nil {
			continue
		}
		for _, t := range res.Tools {
			seen[t.Function.Name] = true
		}
	}
	p.missing = nil
	for _, n := range p.Active() {
		if !seen[n] && !p.isCallable(n) {
			p.missing = append(p.missing, n)
		}
	}
}

// loadExchange is a hidden exchange that puts a load the gateway made on its own
// (progressive loading) into the conversation under index, as if the model had called
// load_tool: its call, and its result with the definitions. Nothing when the load added
// no definition.
func (p *Plan) loadExchange(names []string) {
	defs := p.define(names)
	if defs == nil {
		return
	}
	loaded := []string{}
	for _, t := range names {
		if !p.isCallable(t) {
			loaded = append(loaded, t)
		}
	}
	args, _ := json.Marshal(map[string][]string{"toolNames": loaded})
	id := "call_maskgate_load_" + strconv.Itoa(len(p.loaded))
	call := oai.AppendString([]byte(`{"role":"assistant","content":null,"tool_calls":[{"id":`), id)
	call = append(call, `,"type":"function","function":{"name":"load_tool","arguments":`...)
	call = append(oai.AppendString(call, string(args)), "}}]}"...)
	out := meta.Loaded(loaded, defs)
	result := oai.AppendString([]byte(`{"role":"tool","tool_call_id":`), id)
	result = append(oai.AppendString(append(result, `,"content":`...), out), '}')
	p.Add(call)
	p.Add(result)
}

// defineFunc is meta.Env.Define: p.define under index, nil otherwise.
func (p *Plan) defineFunc() func([]string) json.RawMessage {
	if p.strategy != StrategyIndex {
		return nil
	}
	return p.define
}

// Constrained says whether the engine decodes under the gateway's constraint: mask, or
// index on a backend that enforces it.
func (p *Plan) Constrained() bool {
	return p.strategy == StrategyMask || (p.strategy == StrategyIndex && p.loadKind == backends.LoadByDefinition)
}

// clientLoads, in client mode under index, puts the definitions of what each load the
// client relayed loaded into the engine's view of its result: the client answered the
// load_tool call (with whatever it runs), and the gateway appends, after the result's
// text, the definitions of the tools that load added. The same messages give the same
// bytes, so the conversation's prefix holds from turn to turn.
func (p *Plan) clientLoads() {
	var last []byte // the latest assistant message with tool calls
	seen := map[string]bool{}
	for i, m := range p.messages {
		var msg struct {
			Role       string          `json:"role"`
			ToolCallID string          `json:"tool_call_id"`
			Content    json.RawMessage `json:"content"` // decoded only for a load's result
			ToolCalls  []struct {
				ID string `json:"id"`
			} `json:"tool_calls"`
		}
		if json.Unmarshal(m, &msg) != nil {
			continue
		}
		if msg.Role == "assistant" {
			if len(msg.ToolCalls) > 0 {
				last = m
			}
			continue
		}
		if msg.Role != "tool" || last == nil || msg.ToolCallID == "" {
			continue
		}
		var added []string
		for _, n := range state.FromMessages([]json.RawMessage{last, m}, p.prof.AutoLoad) {
			if !seen[n] && !p.isCallable(n) && slices.Contains(p.loaded, n) {
				seen[n] = true
				added = append(added, n)
			}
		}
		if len(added) == 0 {
			continue
		}
		var text string
		if json.Unmarshal(msg.Content, &text) != nil {
			var parts []struct {
				Text string `json:"text"`
			}
			_ = json.Unmarshal(msg.Content, &parts)
			for _, part := range parts {
				text += part.Text
			}
		}
		text += "\n\n" + "Definitions of the tools this loaded: " + string(p.cat.AppendNames(nil, added))
		out := oai.AppendString([]byte(`{"role":"tool","tool_call_id":`), msg.ToolCallID)
		p.messages[i] = append(oai.AppendString(append(out, `,"content":`...), text), '}')
	}
}
