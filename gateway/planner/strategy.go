package planner

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/maskgate/maskgate/backends"
	"github.com/maskgate/maskgate/kvcache"
	"github.com/maskgate/maskgate/masking"
	"github.com/maskgate/maskgate/toolsearch"
	"github.com/maskgate/maskgate/toolsearch/meta"
	"github.com/maskgate/maskgate/toolsearch/policy"
)

// Strategy is how managed tools reach the engine: kvcache's type, so the gateway, the
// cost model and the auto strategy name strategies with one type. Its values are those of
// the strategy: setting and the X-Maskgate-Strategy header.
type Strategy = kvcache.Strategy

// Tool strategies, as configured (strategy:) and as reported in X-Maskgate-Strategy.
const (
	// StrategyAuto picks per request from what the backend can do and, when a
	// Chooser is set, a cost model.
	StrategyAuto Strategy = "auto"
	// StrategyEager sends the whole catalog and no meta-tools.
	StrategyEager = kvcache.StrategyEager
	// StrategyMask sends the meta-tools and the whole catalog, byte-identical
	// whatever is loaded, and has the backend enforce the loaded set while decoding.
	StrategyMask = kvcache.StrategyMask
	// StrategyAllowedTools sends the same prompt as mask and the loaded set as an
	// OpenAI tool_choice of type allowed_tools, for the engine to honour.
	StrategyAllowedTools = kvcache.StrategyAllowedTools
	// StrategyRemove sends the meta-tools and the loaded tools in load order.
	StrategyRemove = kvcache.StrategyRemove
	// StrategyValidate sends the same prompt as mask and constrains nothing: a call
	// outside the loaded set is answered to the model and retried.
	StrategyValidate = kvcache.StrategyValidate
	// StrategyIndex sends the meta-tools, load_tool's description ending in a compact
	// index of the catalog, and the client's callable tools, byte-identical whatever is
	// loaded; a load puts the tools' definitions into the conversation, and the backend
	// enforces the loaded set (or loads deferred tools itself).
	StrategyIndex = kvcache.StrategyIndex
)

// Capabilities is what a backend can do for a strategy: kvcache's type. The gateway
// reads Constrains from the backend (backends.ToolConstrainer); the cost model's other
// fields come from configuration (cmd/gateway).
type Capabilities = kvcache.Capabilities

// Chooser decides the strategy of strategy auto per profile and backend. It is
// called once per managed request with the strategies the backend can do.
type Chooser interface {
	Choose(c ChoiceInput) Strategy
}

// ChoiceInput is what a Chooser decides from.
type ChoiceInput struct {
	// Profile names the request's profile: each profile's catalog and sessions are its
	// own, so a chooser decides for each apart.
	Profile      string
	Backend      string
	Capabilities Capabilities
	// CatalogTools is the number of tools in the request's catalog.
	CatalogTools int
	// Catalog is the request's catalog in tokens.
	Catalog kvcache.CatalogSize
}

func capabilities(be backends.Backend) Capabilities {
	c, ok := be.(backends.ToolConstrainer)
	return Capabilities{Constrains: ok && c.ConstrainsTools(), Index: loadKind(be) != backends.LoadNone}
}

// chooseStrategy turns the configured strategy into the one this request uses on
// this backend. mask on a backend that cannot constrain becomes validate: the same
// prompt, with stray calls answered afterwards.
//
// Under auto with a Chooser, a thread keeps the strategy its first request got: a
// switch in mid-conversation would break its prefix, so the Chooser's changes reach new
// conversations only.
func (pl *Planner) chooseStrategy(ctx context.Context, prof *Profile, backend string, be backends.Backend, cat *toolsearch.Catalog, thread string, pins map[string]string) (Strategy, error) {
	caps := capabilities(be)
	st := prof.Strategy
	if st == StrategyAuto || st == "" {
		if pl.cfg.Chooser != nil {
			if pinned, ok := pins[backend]; thread != "" && ok && (Strategy(pinned) != StrategyMask || caps.Constrains) && (Strategy(pinned) != StrategyIndex || caps.Index) {
				return Strategy(pinned), nil
			}
			st = pl.cfg.Chooser.Choose(ChoiceInput{Profile: prof.Name, Backend: backend, Capabilities: caps, CatalogTools: cat.Len(), Catalog: pl.catalogSize(cat, prof.AutoLoad)})
			if thread != "" { // a request without a thread has nothing to keep consistent
				// Kept with the thread, so every instance serving it agrees: the first
				// pin wins.
				won, err := pl.cfg.Store.Pin(ctx, thread, backend, string(st))
				if err != nil {
					return "", StateUnavailable(err)
				}
				st = Strategy(won)
			}
		} else if caps.Constrains {
			st = StrategyMask
		} else {
			st = StrategyRemove
		}
	}
	if st == StrategyMask && !caps.Constrains {
		st = StrategyValidate
	}
	if st == StrategyIndex && !caps.Index {
		// Neither enforced nor loaded natively, a call to a tool seen only in the index
		// could not even be read back (a template's parser knows the tools it was given).
		st = StrategyRemove
	}
	return st, nil
}

// Label is the strategy a response reports (p nil: an unmanaged request). A backend's own word counts where
// the gateway left the tools to it (an unmanaged request: e.g. a forced call it enforced
// is mask) or asked it to mask (it may say it could only validate); under the gateway's
// other strategies the gateway's label stands, whatever the engine did within them.
func Label(p *Plan, gateway Strategy, backend string) Strategy {
	if backend == "" || (p != nil && p.strategy != StrategyMask) {
		return gateway
	}
	return Strategy(backend)
}

// WholeCatalog reports whether the engine sees every tool of the catalog.
func (p *Plan) WholeCatalog() bool {
	return p.strategy != StrategyRemove && p.strategy != StrategyIndex
}

// StableTools reports whether the engine's tools array holds still whatever is loaded:
// every strategy but remove.
func (p *Plan) StableTools() bool { return p.strategy != StrategyRemove }

// Callable reports whether the model may call name in this request: a loaded tool
// that the policy keeps active, or under eager any tool of the catalog it keeps.
func (p *Plan) Callable(name string) bool {
	if p.strategy == StrategyEager {
		_, ok := p.cat.Lookup(name)
		return ok && p.Allowed(policy.Active, name)
	}
	return slices.Contains(p.Active(), name)
}

// allowedNames is what the model may call: the meta-tools and the active loaded
// tools.
func (p *Plan) allowedNames() []string {
	if p.clientSearch {
		return p.Active()
	}
	names := []string{meta.SearchTools}
	if !p.prof.AutoLoad {
		names = append(names, meta.LoadTool)
	}
	return append(names, p.Active()...)
}

// Route fills in req, one call to the backend under the plan, what the backend needs of
// the plan: the allowed set (mask) and what replicas route on: the catalog version,
// which every session of the profile shares as its prefix (an isolated caller's own, as
// its cache salt makes it), and the thread.
func (p *Plan) Route(req *backends.Request, cacheSalt string) {
	req.Allowed = p.allowed()
	req.Prefix = p.cat.Version()
	if cacheSalt != "" {
		req.Prefix += "/" + cacheSalt
	}
	req.Thread = p.thread
	if p.strategy == StrategyIndex {
		req.Definitions = p.definitions()
		req.ToolsID = p.indexKey() // indexTools' bytes depend on nothing else
	} else if p.WholeCatalog() {
		// ToolsArray's bytes depend on nothing else.
		req.ToolsID = p.cat.Version() + "/" + string(p.strategy) + "/" + boolJSON(p.prof.AutoLoad)
		if p.metaHidden { // no meta-tools in its tools array (ToolsArray)
			req.ToolsID += "/client"
		}
	}
}

// namespaceChoice expands a client tool_choice that names tools by prefix — a function
// or allowed_tools entry named "browser_*" — into the catalog's tools with that prefix,
// as allowed_tools (mode required for a function). It is the specified mode: a forced
// call within a namespace, as an agent prefilling `{"name": "browser_` would ask. Every
// engine then enforces it like any allowed_tools. nil when nothing names a prefix.
func namespaceChoice(cat *toolsearch.Catalog, raw []byte) ([]byte, error) {
	mode, names, none, err := masking.ParseToolChoice(raw)
	if err != nil || none || !slices.ContainsFunc(names, isPrefixName) {
		return nil, nil // the engine answers for what it cannot read
	}
	var out []string
	for _, n := range names {
		prefix, ok := strings.CutSuffix(n, "*")
		if !ok {
			out = append(out, n)
			continue
		}
		found := false
		for _, t := range cat.All() {
			if strings.HasPrefix(t.Name, prefix) && !slices.Contains(out, t.Name) {
				out, found = append(out, t.Name), true
			}
		}
		if !found {
			return nil, badRequest(fmt.Sprintf("tool_choice names %q, and no tool's name starts with %q", n, prefix), "tool_choice")
		}
	}
	return masking.AllowedTools(masking.Spec{Allowed: out, Mode: mode}), nil
}

func isPrefixName(n string) bool { return strings.HasSuffix(n, "*") }

// allowedToolChoice is the tool_choice of strategy allowed_tools: the client's own
// choice narrowed to the allowed names. ok is false when the client's choice stays
// as it is (none, or unreadable: the engine then answers for it).
func (p *Plan) allowedToolChoice(client []byte) ([]byte, bool) {
	mode, narrow, none, err := masking.ParseToolChoice(client)
	if err != nil || none {
		return nil, false
	}
	names := masking.Narrow(p.allowedNames(), narrow)
	if len(names) == 0 {
		if mode == masking.ModeAuto {
			return []byte(`"none"`), true
		}
		return nil, false
	}
	return masking.AllowedTools(masking.Spec{Allowed: names, Mode: mode}), true
}
