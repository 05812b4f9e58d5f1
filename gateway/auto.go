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
	Backend string
	// NewSession: the client's messages hold no assistant message yet.
	NewSession bool
	Catalog    kvcache.CatalogSize
	Turn       kvcache.Turn
	// Prefill, when set, is the engine's prefill time as the gateway measured it: a
	// streamed answer of one round, from arrival to its first chunk, with the usage's
	// cached and computed prompt tokens.
	Prefill *kvcache.PrefillSample
	// Decode, when set, is the engine's decode time as the gateway measured it on the
	// same kind of answer: from its first chunk to its last, for the completion tokens
	// after the first, after the prompt.
	Decode *kvcache.DecodeSample
}

// Observer is a Chooser that learns from what requests did.
type Observer interface {
	Observe(o Observation)
}

// CostChooser is strategy auto on kvcache's cost model: each managed request reports its
// catalog, session starts and turns, and each asks for the profile's decision, which
// the model changes only with hysteresis.
type CostChooser struct {
	Model *kvcache.CostModel
	// Profile labels the model's state and metrics. If empty, "default".
	Profile string
}

func (c *CostChooser) profile() string {
	if c.Profile == "" {
		return "default"
	}
	return c.Profile
}

// Choose returns the model's decision for the backend.
func (c *CostChooser) Choose(in ChoiceInput) Strategy {
	if in.Catalog.Tools > 0 {
		// The first request of a profile must be decided on its catalog, not the
		// fallback the model gives before it has seen one.
		c.Model.ObserveCatalog(c.profile(), in.Backend, in.Catalog)
	}
	return c.Model.Decide(c.profile(), in.Backend).Strategy
}

// Observe feeds the model.
func (c *CostChooser) Observe(o Observation) {
	p := c.profile()
	c.Model.ObserveCatalog(p, o.Backend, o.Catalog)
	if o.NewSession {
		c.Model.ObserveSession(p, o.Backend)
	}
	c.Model.ObserveTurn(p, o.Backend, o.Turn)
	if o.Prefill != nil {
		c.Model.ObservePrefill(o.Backend, *o.Prefill)
	}
	if o.Decode != nil {
		c.Model.ObserveDecode(o.Backend, *o.Decode)
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
	var prefill *kvcache.PrefillSample
	var decode *kvcache.DecodeSample
	if x.usage != nil {
		t.Output = x.usage.CompletionTokens
		// Time to first token is prefill (plus one step) only when one round ran; the
		// time from there to the last chunk is the decode of the tokens after it.
		if x.stream && x.ttft > 0 && len(p.hidden) == 0 {
			a := accounting(x.usage, x.cache)
			prefill = &kvcache.PrefillSample{Cached: a.Cached, Computed: a.Computed, Seconds: x.ttft.Seconds()}
			if n := x.usage.CompletionTokens - 1; n > 0 && x.lastFrame > x.ttft {
				decode = &kvcache.DecodeSample{Context: x.usage.PromptTokens + 1, Tokens: n, Seconds: (x.lastFrame - x.ttft).Seconds()}
			}
		}
	}
	ob.Observe(Observation{Backend: x.backend, NewSession: p.newSession, Catalog: s.catalogSize(p.cat, p.prof.AutoLoad), Turn: t,
		Prefill: prefill, Decode: decode})
}
