package planner

import (
	"context"
	"encoding/json"
	"slices"

	"github.com/maskgate/maskgate/toolsearch"
	"github.com/maskgate/maskgate/toolsearch/meta"
	"github.com/maskgate/maskgate/toolsearch/policy"
	"github.com/maskgate/maskgate/toolsearch/state"
)

// What the tool loop reads of a plan, and what it records in it round by round.

// Thread is the request's conversation ("" for none).
func (p *Plan) Thread() string { return p.thread }

// Strategy is how tools reach the engine in this request.
func (p *Plan) Strategy() Strategy { return p.strategy }

// Catalog is the request's catalog: the profile's view with the client's tools.
func (p *Plan) Catalog() *toolsearch.Catalog { return p.cat }

// Profile is the profile the request runs under.
func (p *Plan) Profile() *Profile { return p.prof }

// Messages is the conversation as the engine sees it: the client's messages with
// earlier hidden exchanges spliced back, and this request's rounds after them.
func (p *Plan) Messages() [][]byte { return p.messages }

// ClientMessages is how many messages the client sent.
func (p *Plan) ClientMessages() int { return p.clientMsgs }

// Hidden is what this request's rounds added to the conversation, kept for its thread.
func (p *Plan) Hidden() [][]byte { return p.hidden }

// Strays is how many calls to tools outside the loaded set the model made.
func (p *Plan) Strays() int { return p.strays }

// CountStrays adds n calls to tools outside the loaded set.
func (p *Plan) CountStrays(n int) { p.strays += n }

// Cut says the round being answered ended at max_tokens, its last call's arguments
// possibly unfinished: the gateway runs none of its calls.
func (p *Plan) Cut() bool { return p.cut }

// SetCut records whether the round being answered was cut (Cut).
func (p *Plan) SetCut(cut bool) { p.cut = cut }

// DemandMet records that the gateway ran a call: a client's tool_choice that demanded
// one is met, and the following rounds are auto (forcing again would only loop).
func (p *Plan) DemandMet() {
	if p.forced {
		p.toolChoice, p.forced = []byte(`"auto"`), false
	}
}

// Runs says whether the gateway runs calls to name itself (a profile tool, not one the
// client sent under that name).
func (p *Plan) Runs(name string) bool {
	if p.prof.Runner == nil || !p.prof.Runner.Runs(name) {
		return false
	}
	t, ok := p.cat.Lookup(name)
	return ok && t.Source == toolsearch.FromProfile
}

// MetaEnv is what search_tools and load_tool run against in this request: its index,
// its filters and loaded set, its profile's search settings.
func (p *Plan) MetaEnv() meta.Env {
	var searcher meta.Searcher = meta.IndexSearcher{Index: p.ix}
	if p.hybrid != nil {
		searcher = meta.HybridSearcher{Hybrid: p.hybrid}
	}
	return meta.Env{
		Searcher: searcher,
		Names:    p.cat,
		Allowed: func(ph meta.Phase, name string) bool {
			return p.Allowed(policy.Phase(ph), name)
		},
		Loaded:   func(name string) bool { return slices.Contains(p.loaded, name) },
		AutoLoad: p.prof.AutoLoad,
		TopK:     p.prof.SearchTopK,
		MinScore: p.prof.SearchMinScore,
		Define:   p.defineFunc(),
	}
}

// Add appends a message of the gateway's rounds to the engine's conversation and to
// what is kept for the thread.
func (p *Plan) Add(m []byte) {
	p.messages = append(p.messages, m)
	p.hidden = append(p.hidden, m)
}

// Keep files this request's hidden exchange under its thread, to be spliced back after
// the client's last message of this request, found by its content.
func (p *Plan) Keep(ctx context.Context) error {
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
	if err := p.pl.cfg.Store.AddSplice(ctx, p.thread, sp); err != nil {
		return StateUnavailable(err)
	}
	return nil
}
