package kvcache

import "math"

// Strategy is how the gateway presents a catalog to an engine; see the README,
// "Strategies", and ARCHITECTURE.md, "One request". The values are those of the
// X-Maskgate-Strategy header.
type Strategy string

// The strategies the auto strategy chooses among.
const (
	// StrategyEager: the whole catalog, no meta-tools; the prefix is stable.
	StrategyEager Strategy = "eager"
	// StrategyMask: meta-tools and the whole catalog, byte-identical across turns; the
	// engine constrains decoding to the loaded set.
	StrategyMask Strategy = "mask"
	// StrategyAllowedTools: as mask, enforced by an OpenAI upstream's allowed_tools.
	StrategyAllowedTools Strategy = "allowed_tools"
	// StrategyRemove: meta-tools and the loaded tools only, loads appended; each load
	// changes the tools and so the prefix before the conversation.
	StrategyRemove Strategy = "remove"
	// StrategyValidate: as mask without a constraint; a call outside the loaded set is
	// answered with an error and retried.
	StrategyValidate Strategy = "validate"
	// StrategyIndex: meta-tools, the client's callable tools and a compact index of the
	// catalog (a name and a one-line summary per tool), byte-identical across turns; a
	// tool's definition enters the conversation at its end when it is loaded, and the
	// engine constrains decoding to the loaded set (or the upstream loads it natively).
	StrategyIndex Strategy = "index"
)

// Strategies returns every strategy the auto strategy knows, in the order estimates are
// reported and ties are broken.
func Strategies() []Strategy {
	return []Strategy{StrategyEager, StrategyMask, StrategyAllowedTools, StrategyRemove, StrategyValidate, StrategyIndex}
}

// Capabilities are what a backend can do, which bounds the strategies open to it.
type Capabilities struct {
	// Constrains: the engine enforces an allowed set of tools while decoding (mask).
	Constrains bool
	// AllowedTools: the upstream honours tool_choice {"type":"allowed_tools"}.
	AllowedTools bool
	// CachesPrefixes: the engine reuses a cached prompt prefix. Without it every call
	// recomputes its whole prompt, and validate is not offered.
	CachesPrefixes bool
	// Index: the backend can serve index (backends.ToolLoader).
	Index bool
}

// Engine is what the cost model knows about one backend.
type Engine struct {
	Capabilities
	// Prefill is the engine's prefill time. If zero, DefaultPrefill. Measured timings
	// (CostModel.ObservePrefill) replace it once they determine a fit.
	Prefill PrefillCost
	// Decode is the engine's decode time. If zero, DefaultDecode.
	Decode DecodeCost
	// ConstrainedDecode is its decode time under the gateway's constraint, which mask
	// and index pay and the other strategies do not (a grammar or token mask is work at every
	// step). If zero, Decode: no extra cost until measured (CostModel.ObserveDecode with
	// constrained samples) or configured.
	ConstrainedDecode DecodeCost
	// ContextTokens is the engine's context window for one request, prompt and answer
	// together, in tokens (llama-server's n_ctx per slot, the embedded engine's num_ctx).
	// A strategy whose modelled session outgrows it is not open (window.go). Zero:
	// unknown, and nothing is ruled out by size.
	ContextTokens int
}

// withDefaults fills e's zero costs.
func (e Engine) withDefaults() Engine {
	if e.Prefill.IsZero() {
		e.Prefill = DefaultPrefill()
	}
	if e.Decode.IsZero() {
		e.Decode = DefaultDecode()
	}
	return e
}

// CatalogSize is a profile's catalog in tokens, as the engine sees it.
type CatalogSize struct {
	// Tools is the number of tools in the catalog; eager is offered only below
	// Options.EagerMaxTools.
	Tools int
	// Tokens is the tokens of the whole rendered catalog.
	Tokens int
	// MetaTokens is the tokens of the meta-tool definitions.
	MetaTokens int
	// IndexTokens is the tokens of the meta-tool definitions that carry the catalog's
	// index (strategy index's tools array, less the client's callable tools).
	IndexTokens int
}

// Workload is what an average session of a profile looks like.
type Workload struct {
	// TurnsPerSession is the requests per session (thread).
	TurnsPerSession float64
	// InputTokensPerTurn is the prompt tokens a turn adds outside the tools: new
	// messages and tool results (the first turn's include the system prompt).
	InputTokensPerTurn float64
	// OutputTokensPerTurn is the completion tokens per turn.
	OutputTokensPerTurn float64
	// LoadsPerSession is the tool loads per session.
	LoadsPerSession float64
	// TokensPerLoad is the tokens of the tool definitions one load adds.
	TokensPerLoad float64
	// StraysPerTurn is the calls to tools outside the loaded set per turn, where the
	// engine does not prevent them.
	StraysPerTurn float64
}

// Tokens the meta-tool and stray exchanges add; small next to the rest, so fixed.
const (
	loadCallTokens   = 20 // the model's load_tool call
	loadResultTokens = 40 // its result
	strayCallTokens  = 30 // a call to a tool that is not loaded
	strayErrorTokens = 30 // the error the gateway answers it with
)

// toolTokens is the size of the tools array a strategy starts a session with: the part
// of the prompt every session of the profile shares. Under index it is the meta-tools
// carrying the catalog's index. The client's callable tools, which every strategy sends
// alike, are counted in none.
func toolTokens(s Strategy, cat CatalogSize) float64 {
	switch s {
	case StrategyEager:
		return float64(cat.Tokens)
	case StrategyRemove:
		return float64(cat.MetaTokens)
	case StrategyIndex:
		return float64(cat.IndexTokens)
	default:
		return float64(cat.MetaTokens + cat.Tokens)
	}
}

// sessionTurns is the whole number of turns the model plays out.
func sessionTurns(w Workload) int { return max(1, int(math.Round(w.TurnsPerSession))) }

// sessionSeconds is the modelled engine time of one average session under s: each turn
// prefills its new input on top of what is cached, runs its share of loads (and of stray
// retries under validate), then decodes its answer, which stays in the cache; under mask
// and index every decode is at the engine's constrained cost. The tools every session
// starts with are prefilled once per shared sessions. Under remove a load appends tools
// before the conversation, so the whole conversation is prefilled again. Under index a
// load's result carries the loaded tools' definitions at the end of the conversation:
// they are prefilled once, nothing before them again, and every later token is decoded
// over them. Loads and strays enter as expected (fractional) counts per turn.
func sessionSeconds(s Strategy, w Workload, cat CatalogSize, shared float64, e Engine) float64 {
	secs, _ := session(s, w, cat, shared, e)
	return secs
}

// session is sessionSeconds and the context the session ends with: its last turn's
// prompt and the answer decoded after it, the tokens the engine's window must hold.
func session(s Strategy, w Workload, cat CatalogSize, shared float64, e Engine) (secs, context float64) {
	pre, dec := e.Prefill, e.Decode
	if (s == StrategyMask || s == StrategyIndex) && !e.ConstrainedDecode.IsZero() {
		dec = e.ConstrainedDecode
	}
	call := func(cached, computed float64) float64 {
		if !e.CachesPrefixes {
			cached, computed = 0, cached+computed
		}
		return pre.seconds(cached, computed)
	}
	tools := toolTokens(s, cat)
	loads, strays := w.LoadsPerSession, 0.0
	switch s {
	case StrategyEager:
		loads = 0 // everything is loaded already
	case StrategyValidate:
		strays = w.StraysPerTurn
	}
	turns := sessionTurns(w)
	perTurn := loads / float64(turns)

	total := 0.0
	if e.CachesPrefixes {
		total += (pre.seconds(0, tools) - pre.Fixed) / max(shared, 1)
	}
	x := 0.0 // conversation tokens after the tools
	for range turns {
		total += call(tools+x, w.InputTokensPerTurn)
		x += w.InputTokensPerTurn
		if perTurn > 0 {
			r := float64(loadCallTokens + loadResultTokens)
			if s == StrategyIndex {
				r += w.TokensPerLoad // the definitions, in the load's result
			}
			next := call(tools+x, r)
			if s == StrategyRemove {
				next = call(tools, w.TokensPerLoad+x+r)
			}
			total += perTurn * (dec.seconds(tools+x, loadCallTokens) + next)
			if s == StrategyRemove {
				tools += perTurn * w.TokensPerLoad
			}
			x += perTurn * r
		}
		if strays > 0 {
			const r = strayCallTokens + strayErrorTokens
			total += strays * (dec.seconds(tools+x, strayCallTokens) + call(tools+x, r))
			x += strays * r
		}
		total += dec.seconds(tools+x, w.OutputTokensPerTurn)
		x += w.OutputTokensPerTurn
	}
	return total, tools + x
}

// breakSeconds is the one-off cost of moving a profile's sessions to s: its tools are
// prefilled once, and each live session's conversation (half a session's, on average)
// is prefilled again behind them. Nothing breaks on an engine that caches nothing.
func breakSeconds(s Strategy, w Workload, cat CatalogSize, live float64, e Engine) float64 {
	if !e.CachesPrefixes {
		return 0
	}
	pre := e.Prefill
	tools := toolTokens(s, cat)
	conv := float64(sessionTurns(w)) / 2 * (w.InputTokensPerTurn + w.OutputTokensPerTurn)
	return pre.seconds(0, tools) - pre.Fixed + max(live, 1)*(pre.seconds(tools, conv)-pre.Fixed)
}

// eligible reports whether the backend with caps can do s for a catalog of cat, its
// context aside (window.go). Index needs the size of its index: a catalog whose index
// was not measured (IndexTokens zero) is not offered it rather than guessed.
func eligible(s Strategy, caps Capabilities, cat CatalogSize, eagerMaxTools int) bool {
	switch s {
	case StrategyEager:
		return cat.Tools < eagerMaxTools
	case StrategyMask:
		return caps.Constrains
	case StrategyAllowedTools:
		return caps.AllowedTools
	case StrategyValidate:
		return caps.CachesPrefixes
	case StrategyRemove:
		return true
	case StrategyIndex:
		return caps.Index && cat.IndexTokens > 0
	}
	return false
}
