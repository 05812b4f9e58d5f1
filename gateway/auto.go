package gateway

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

func (s *Server) countTokens(b []byte) int {
	if s.opt.Tokens != nil {
		return s.opt.Tokens.Count(b)
	}
	return (len(b) + 3) / 4 // the usual four bytes a token, where nothing counts better
}

func (s *Server) catalogSize(cat *toolsearch.Catalog, autoLoad bool) kvcache.CatalogSize {
	return cached(&s.catalogs.mu, &s.catalogs.sizes, maxCachedSizes, cat.Version()+boolJSON(autoLoad), func() kvcache.CatalogSize {
		return kvcache.CatalogSize{Tools: cat.Len(), Tokens: s.countTokens(cat.Render()), MetaTokens: s.countTokens(meta.Definitions(autoLoad))}
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

// observe reports a finished managed request to an Observer chooser.
func (s *Server) observe(x *exchange) {
	ob, ok := s.opt.Chooser.(Observer)
	p := x.plan
	if !ok || p == nil || x.status != 200 {
		return
	}
	input := 0
	for _, m := range p.added {
		input += s.countTokens(m)
	}
	loadedTokens := 0
	for _, name := range p.loaded[min(p.loadedAtStart, len(p.loaded)):] {
		if t, ok := p.cat.Lookup(name); ok {
			loadedTokens += s.countTokens(p.cat.AppendNames(nil, []string{t.Name}))
		}
	}
	t := kvcache.Turn{Input: input, Loads: len(p.loaded) - p.loadedAtStart, LoadedTokens: loadedTokens,
		Strays: p.strays, Constrained: p.strategy == StrategyMask || p.strategy == StrategyAllowedTools}
	if x.usage != nil {
		t.Output = x.usage.CompletionTokens
	}
	prefills, decodes := timingSamples(x)
	ob.Observe(Observation{Profile: p.prof.Name, Backend: x.backend, NewSession: p.newSession, Catalog: s.catalogSize(p.cat, p.prof.AutoLoad), Turn: t,
		Prefills: prefills, Decodes: decodes, Constrained: x.strategy == StrategyMask})
}

// timingSamples are the request's measured engine costs. The engine's own timings of
// each round are preferred. Without them the gateway's clock serves where it times the
// engine alone: a streamed answer of one round, whose time to the first chunk is
// prefill (plus one step) and whose time from there to the last chunk is the decode of
// the tokens after it.
func timingSamples(x *exchange) (prefills []kvcache.PrefillSample, decodes []kvcache.DecodeSample) {
	if len(x.engine) > 0 {
		for _, t := range x.engine {
			prefills = append(prefills, kvcache.PrefillSample{Cached: t.Cached, Computed: t.Computed, Seconds: t.PrefillSeconds})
			if t.DecodeSteps > 0 {
				decodes = append(decodes, kvcache.DecodeSample{Context: t.Cached + t.Computed + 1, Tokens: t.DecodeSteps, Seconds: t.DecodeSeconds})
			}
		}
		return prefills, decodes
	}
	u := x.usage
	if u == nil || !x.stream || x.ttft <= 0 || x.plan == nil || len(x.plan.hidden) > 0 {
		return nil, nil
	}
	a := accounting(u, x.cache)
	prefills = []kvcache.PrefillSample{{Cached: a.Cached, Computed: a.Computed, Seconds: x.ttft.Seconds()}}
	if n := u.CompletionTokens - 1; n > 0 && x.lastFrame > x.ttft {
		decodes = []kvcache.DecodeSample{{Context: u.PromptTokens + 1, Tokens: n, Seconds: (x.lastFrame - x.ttft).Seconds()}}
	}
	return prefills, decodes
}
