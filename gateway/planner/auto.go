package planner

import (
	"encoding/json"
	"sync"

	"github.com/maskgate/maskgate/backends/oai"
	"github.com/maskgate/maskgate/kvcache"
	"github.com/maskgate/maskgate/toolsearch"
	"github.com/maskgate/maskgate/toolsearch/meta"
)

// Observation is what one managed request did, reported to a Chooser that learns.
type Observation struct {
	Profile string // the request's profile: see ChoiceInput.Profile
	Backend string
	// NewSession: the client's messages hold no assistant message yet.
	NewSession bool
	Catalog    kvcache.CatalogSize
	Turn       kvcache.Turn
	// Prefills are the engine's prefill times: its own account of each round
	// (backends.Timings) where it gives one, else, for a streamed answer of one round,
	// the gateway's measure from arrival to the first chunk, with the usage's cached and
	// computed prompt tokens.
	Prefills []kvcache.PrefillSample
	// Decodes are the engine's decode times, from the same sources: its own account of
	// the steps after the first output token, or the gateway's from the first chunk to
	// the last, after the prompt.
	Decodes []kvcache.DecodeSample
	// Constrained: the engine decoded under the gateway's constraint (the backend
	// reported mask), so Decodes are what mask pays per token, fitted apart.
	Constrained bool
}

// Observer is a Chooser that learns from what requests did.
type Observer interface {
	Observe(o Observation)
}

// CostChooser is strategy auto on kvcache's cost model: each managed request reports its
// catalog, session starts and turns, and each asks for its profile's decision, which the
// model changes only with hysteresis. Each profile and backend has its own state (the
// engine's fitted costs are the backend's, shared).
type CostChooser struct {
	Model *kvcache.CostModel
}

// profile is the model's state for a request's profile; every request has one, the
// default's included, so "" comes only from a caller outside the pipeline.
func (c *CostChooser) profile(name string) string {
	if name == "" {
		return DefaultProfile
	}
	return name
}

// Choose returns the model's decision for the profile on the backend.
func (c *CostChooser) Choose(in ChoiceInput) Strategy {
	p := c.profile(in.Profile)
	if in.Catalog.Tools > 0 {
		// The first request of a profile must be decided on its catalog, not the
		// fallback the model gives before it has seen one.
		c.Model.ObserveCatalog(p, in.Backend, in.Catalog)
	}
	return c.Model.Decide(p, in.Backend).Strategy
}

// Explain returns the latest decision for the profile on the backend (Explainer).
func (c *CostChooser) Explain(profile, backend string) (kvcache.Decision, bool) {
	return c.Model.Last(c.profile(profile), backend)
}

// Explainer is a Chooser that can say what it decided last for a profile on a backend,
// and why: the estimates the operator's view shows.
type Explainer interface {
	Explain(profile, backend string) (kvcache.Decision, bool)
}

var (
	_ Chooser   = (*CostChooser)(nil)
	_ Observer  = (*CostChooser)(nil)
	_ Explainer = (*CostChooser)(nil)
)

// Observe feeds the model.
func (c *CostChooser) Observe(o Observation) {
	p := c.profile(o.Profile)
	c.Model.ObserveCatalog(p, o.Backend, o.Catalog)
	if o.NewSession {
		c.Model.ObserveSession(p, o.Backend)
	}
	c.Model.ObserveTurn(p, o.Backend, o.Turn)
	for _, sm := range o.Prefills {
		c.Model.ObservePrefill(o.Backend, sm)
	}
	for _, sm := range o.Decodes {
		if o.Constrained {
			c.Model.ObserveConstrainedDecode(o.Backend, sm)
		} else {
			c.Model.ObserveDecode(o.Backend, sm)
		}
	}
}

// catalogCache keeps what the gateway derives from a catalog version and uses on every
// request: the whole-catalog tools array (the same bytes each time) and the catalog's
// size in tokens (counting 500 tools costs milliseconds). Entries are built outside the
// lock, so a new catalog does not hold up requests for the others; two requests may
// build the same entry once each, with the same result.
type catalogCache struct {
	mu    sync.Mutex
	sizes map[string]kvcache.CatalogSize
	tools map[string][]byte
}

// Client catalogs come and go; a profile's stay. Past these bounds a map starts over.
const (
	maxCachedSizes = 64
	maxCachedTools = 16
)

// cached returns m[key], building and storing it on a miss.
func cached[V any](mu *sync.Mutex, m *map[string]V, limit int, key string, build func() V) V {
	mu.Lock()
	v, ok := (*m)[key]
	mu.Unlock()
	if ok {
		return v
	}
	v = build()
	mu.Lock()
	if *m == nil || len(*m) >= limit {
		*m = make(map[string]V)
	}
	(*m)[key] = v
	mu.Unlock()
	return v
}

// wholeTools returns the tools array cached under key, building it once.
func (c *catalogCache) wholeTools(key string, build func() []byte) []byte {
	return cached(&c.mu, &c.tools, maxCachedTools, key, build)
}

func (pl *Planner) countTokens(b []byte) int {
	if pl.cfg.Tokens != nil {
		return pl.cfg.Tokens.Count(b)
	}
	return (len(b) + 3) / 4 // the usual four bytes a token, where nothing counts better
}

func (pl *Planner) catalogSize(cat *toolsearch.Catalog, autoLoad bool) kvcache.CatalogSize {
	// The index without the client's tools, which callable client tools leave out: the
	// estimate's catalog is the profile's.
	index, id := cat.IndexText(false)
	return cached(&pl.catalogs.mu, &pl.catalogs.sizes, maxCachedSizes, cat.Version()+boolJSON(autoLoad)+id, func() kvcache.CatalogSize {
		return kvcache.CatalogSize{Tools: cat.Len(), Tokens: pl.countTokens(cat.Render()), MetaTokens: pl.countTokens(meta.Definitions(autoLoad)),
			IndexTokens: pl.countTokens(meta.IndexDefinitions(autoLoad, index))}
	})
}

// turnInput reads the client's messages for what a Chooser learns: whether the session
// is new, and the messages this turn added (after the last assistant message).
func turnInput(msgs []json.RawMessage) (newSession bool, added []json.RawMessage) {
	for i := len(msgs) - 1; i >= 0; i-- {
		o, err := oai.ParseObject(msgs[i])
		if err != nil {
			continue
		}
		if role, _ := o.Get("role"); string(role) == `"assistant"` {
			return false, msgs[i+1:]
		}
	}
	return true, msgs
}

// Outcome is what a finished managed request did, as the gateway measured it.
type Outcome struct {
	Backend string
	// Usage is the request's usage summed over rounds; nil when none was reported.
	Usage *oai.Usage
	// Prefills and Decodes are its measured engine costs (Observation's).
	Prefills []kvcache.PrefillSample
	Decodes  []kvcache.DecodeSample
	// Constrained: the backend reported mask.
	Constrained bool
}

// Learns says whether the Chooser learns from what requests did (an Observer): only
// then does Observe need an Outcome.
func (pl *Planner) Learns() bool {
	_, ok := pl.cfg.Chooser.(Observer)
	return ok
}

// Observe reports p's request, answered with success, to an Observer chooser.
func (pl *Planner) Observe(p *Plan, o Outcome) {
	ob, ok := pl.cfg.Chooser.(Observer)
	if !ok || p == nil {
		return
	}
	input := 0
	for _, m := range p.added {
		input += pl.countTokens(m)
	}
	loadedTokens := 0
	for _, name := range p.loaded[min(p.loadedAtStart, len(p.loaded)):] {
		if t, ok := p.cat.Lookup(name); ok {
			loadedTokens += pl.countTokens(p.cat.AppendNames(nil, []string{t.Name}))
		}
	}
	t := kvcache.Turn{Input: input, Loads: len(p.loaded) - p.loadedAtStart, LoadedTokens: loadedTokens,
		Strays: p.strays, Constrained: p.Constrained() || p.strategy == StrategyAllowedTools}
	if o.Usage != nil {
		t.Output = o.Usage.CompletionTokens
	}
	ob.Observe(Observation{Profile: p.prof.Name, Backend: o.Backend, NewSession: p.newSession, Catalog: pl.catalogSize(p.cat, p.prof.AutoLoad), Turn: t,
		Prefills: o.Prefills, Decodes: o.Decodes, Constrained: o.Constrained})
}
