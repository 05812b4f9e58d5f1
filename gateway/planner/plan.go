package planner

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/maskgate/maskgate/backends"
	"github.com/maskgate/maskgate/backends/oai"
	"github.com/maskgate/maskgate/masking"
	"github.com/maskgate/maskgate/toolsearch"
	"github.com/maskgate/maskgate/toolsearch/meta"
	"github.com/maskgate/maskgate/toolsearch/policy"
	"github.com/maskgate/maskgate/toolsearch/state"
)

// Tool modes.
const (
	// ModeServer: the gateway runs search_tools and load_tool itself (the default).
	ModeServer = "server"
	// ModeClient: meta-tool calls go back to the client; loaded state comes from messages.
	ModeClient = "client"
)

// How the tools a client sends without deferring them are served (gateway.Options.ClientTools, Profile.ClientTools).
const (
	// ClientToolsCallable: they are the client's working set, callable from the first
	// turn (the default). Only the profile's catalog and what the client defers are
	// behind search_tools/load_tool; a request with neither is not managed at all.
	ClientToolsCallable = "callable"
	// ClientToolsManaged: from eager_below tools on they are managed like the profile's
	// catalog, loaded by search (a Chat Completions client that sends hundreds of tools).
	ClientToolsManaged = "managed"
)

// HeaderClientTools chooses ClientToolsCallable or ClientToolsManaged for one request,
// over its profile's setting.
const HeaderClientTools = "X-Maskgate-Client-Tools"

// clientToolsMode is the request's choice of HeaderClientTools, else its profile's.
func clientToolsMode(h http.Header, prof *Profile) (string, error) {
	switch h := h.Get(HeaderClientTools); h {
	case "":
		return prof.ClientTools, nil
	case ClientToolsCallable, ClientToolsManaged:
		return h, nil
	default:
		return "", &backends.Error{Status: http.StatusBadRequest, Type: "invalid_request_error", Code: "invalid_header",
			Message: HeaderClientTools + " must be " + ClientToolsCallable + " or " + ClientToolsManaged + ", not " + strconv.Quote(h)}
	}
}

// Plan is one request's view of tools under management: its catalog, its thread, what
// is loaded, and the conversation as the engine sees it. The tool loop reads it and
// records its rounds in it; it is one request's, never shared.
type Plan struct {
	pl     *Planner
	prof   *Profile
	thread string
	cat    *toolsearch.Catalog
	ix     *toolsearch.Index
	hybrid *toolsearch.Hybrid // nil without embeddings
	policy policy.Request
	// rules are the filters in force when the request began.
	rules *policy.Policy
	// removed names profile tools still rendered but gone from their source (an MCP
	// server dropped them): masked in every phase.
	removed map[string]bool
	loaded  []string
	// messages is the engine's view: the client's messages with earlier hidden
	// exchanges spliced back where they happened; rounds append to it.
	messages [][]byte
	// hidden is what this request's rounds added, to splice back next time.
	hidden     [][]byte
	clientMsgs int
	// lastClient is the client's last message (a slice of the body), the anchor of
	// this request's hidden exchange.
	lastClient json.RawMessage
	// strategy is how tools reach the engine (Strategy* constants). Under every one but
	// remove the engine sees the whole catalog, byte-identical whatever is loaded.
	strategy Strategy

	// What a learning Chooser is told at the end.
	newSession    bool              // no assistant message yet
	added         []json.RawMessage // the client messages this turn added
	loadedAtStart int
	strays        int // calls to tools outside the loaded set

	// clientSearch: the client discovers tools itself (Input.ClientSearch).
	clientSearch bool
	// metaHidden: the meta-tools' definitions stay out of the tools array. A client
	// that searches itself needs none; where the whole catalog goes out, the thread's
	// first request decides for all of its turns (metaPin), so the array's bytes hold
	// still when a later turn first shows the client searching.
	metaHidden bool

	// forced: the client's tool_choice demands a call (required, a function, allowed
	// tools in required mode). Once the gateway has run a call it demanded, the
	// following rounds are auto: the demand is met, and forcing again would only loop.
	forced bool
	// cut: the round being answered ended at max_tokens, its last call's arguments
	// possibly unfinished; the gateway runs none of its calls.
	cut bool

	// toolChoice, when set, replaces the client's tool_choice (a namespace it named,
	// expanded).
	toolChoice []byte

	// clientCallable: the client's tools are callable from the first turn (not managed):
	// under index the engine sees them whole, never behind the index.
	clientCallable bool
	// loadKind is how the backend serves index (backends.ToolLoader).
	loadKind backends.LoadKind
	// missing, under index, are loaded tools whose definitions the conversation no longer
	// holds: the request's next load brings them back (define).
	missing []string
}

// Plan decides whether tools are managed for the request and, if so, plans them. A nil
// plan means eager: the request goes through unchanged.
func (pl *Planner) Plan(ctx context.Context, in Input) (*Plan, error) {
	env := in.Env
	if pl.cfg.Store == nil {
		return nil, nil
	}
	prof := in.Profile
	mode, err := clientToolsMode(in.Header, prof)
	if err != nil {
		return nil, err
	}
	// callableTools: the client's tools, less hidden, are loaded from the first turn. A
	// client that discovers tools itself keeps its door's meaning (what it defers is
	// hidden until found); otherwise the mode says.
	callableTools := in.ClientTools
	if !in.ClientSearch {
		callableTools = mode == ClientToolsCallable
	}
	// The request's context, for the policy and the profile's variants; the namespaces
	// are the catalog's, once it is known.
	metadata, _ := env.Object.Get("metadata")
	pol := policy.NewRequest(prof.Name, in.Header, json.RawMessage(metadata), nil)
	pol.Key = in.Caller
	var base *toolsearch.Index
	var removed map[string]bool
	if prof.Catalog != nil {
		view, err := prof.Catalog.View(pol)
		if err != nil {
			return nil, err
		}
		base, removed = view.Index, view.Removed
	}
	if base == nil {
		// The client's tools alone: an array eager for its size is not managed, and is
		// neither parsed nor indexed — unless the client defers some of it, which must
		// stay uncallable until found (Claude Code's tool search sends 12 tools and one
		// deferred placeholder).
		if env.Tools == nil || (prof.eagerBySize(env.ToolCount) && len(in.Hidden) == 0) {
			return nil, nil
		}
		// Every tool callable and none filtered: nothing to manage, and the tools go as
		// the client sent them.
		if callableTools && len(in.Hidden) == 0 && !in.ClientSearch && pl.profiles.Load().rules.Empty(policy.Active) {
			return nil, nil
		}
	}
	var ix *toolsearch.Index
	var hybrid *toolsearch.Hybrid
	var callable []string // the client's, when it says what may be called
	if env.Tools != nil {
		scope := in.Caller + "\x00" + prof.Name + "\x00"
		if base != nil {
			scope += base.Catalog().Version()
		}
		ct, err := pl.clientTools(scope, env.Tools, base, prof.HybridFor(base))
		if err != nil {
			return nil, err
		}
		ix, hybrid = ct.ix, ct.hybrid
		if callableTools {
			for _, name := range ct.names {
				if !slices.Contains(in.Hidden, name) {
					callable = append(callable, name)
				}
			}
		}
	} else if base != nil {
		ix, hybrid = base, prof.HybridFor(base)
	}
	if ix == nil {
		return nil, nil
	}
	cat := ix.Catalog()
	// A catalog eager for its size (strategy auto, fewer than eager_below tools, none
	// deferred) is sent whole: the profile's tools with the client's, every one
	// callable, no meta-tools. Made of the client's tools alone it is what the client
	// sent, and the request goes as it is — unless the gateway runs some of its tools,
	// which needs the loop.
	eager := prof.eagerBySize(cat.Len()) && len(in.Hidden) == 0
	if eager && (base == nil || base.Catalog().Len() == 0) && !runsAny(prof, cat) {
		return nil, nil
	}
	for i := 0; i < cat.Len(); i++ {
		if meta.IsMeta(cat.Tool(i).Name) {
			return nil, badRequest("tool name "+cat.Tool(i).Name+" is reserved for the gateway's meta-tools; rename the tool", "tools")
		}
	}

	pol.Namespace = cat.Namespace
	p := &Plan{
		pl:         pl,
		prof:       prof,
		thread:     pl.Thread(in),
		cat:        cat,
		ix:         ix,
		hybrid:     hybrid,
		policy:     pol,
		rules:      pl.profiles.Load().rules,
		removed:    removed,
		clientMsgs: len(env.Messages),

		clientCallable: callableTools && !in.ClientSearch,
		loadKind:       loadKind(in.Upstream),
	}
	if n := len(env.Messages); n > 0 {
		p.lastClient = env.Messages[n-1]
	}
	// What was kept for the thread: its loaded tools, hidden exchanges and strategy pin.
	var snap state.Snapshot
	if p.thread != "" {
		if snap, _, err = pl.cfg.Store.Get(ctx, p.thread); err != nil {
			return nil, StateUnavailable(err)
		}
	}
	switch {
	case eager:
		// Decided by size, before any chooser: nothing is pinned for the thread, so
		// the catalog's first request at eager_below tools or more is the one the
		// chooser decides.
		p.strategy = StrategyEager
	case in.ClientSearch && (prof.Strategy == StrategyAuto || prof.Strategy == "") && capabilities(in.Upstream).Constrains:
		// A client that searches itself changes only what may be called: mask keeps its
		// prompt whole and the same from session to session, where the chooser's eager
		// would make what it deferred callable and remove would move the prompt with
		// each discovery.
		p.strategy = StrategyMask
	default:
		if p.strategy, err = pl.chooseStrategy(ctx, prof, in.Backend, in.Upstream, cat, p.thread, snap.Pins); err != nil {
			return nil, err
		}
		if p.strategy == StrategyIndex && in.ClientSearch {
			// A client that searches itself loads with its own tool search: the index
			// would only offer load_tool calls it may not make.
			p.strategy = StrategyRemove
			if capabilities(in.Upstream).Constrains {
				p.strategy = StrategyMask
			}
		}
	}
	if raw, ok := env.Object.Get("tool_choice"); ok {
		if p.toolChoice, err = namespaceChoice(cat, raw); err != nil {
			return nil, err
		}
		mode, _, _, _ := masking.ParseToolChoice(raw)
		p.forced = mode != masking.ModeAuto
	}

	var splices []state.Splice
	if prof.ToolMode == ModeClient {
		p.loaded = state.FromMessages(env.Messages, prof.AutoLoad)
	} else {
		// No thread: nothing was kept for this request, and nothing will be.
		p.loaded, splices = snap.Loaded, snap.Splices
	}
	if in.ClientSearch {
		p.clientSearch, p.loaded = true, nil
	}
	p.metaHidden = p.clientSearch
	if p.thread != "" && p.WholeCatalog() && p.strategy != StrategyEager {
		want := metaShown
		if p.clientSearch {
			want = metaHiddenPin
		}
		got, ok := snap.Pins[metaPin]
		if !ok {
			if got, err = pl.cfg.Store.Pin(ctx, p.thread, metaPin, want); err != nil {
				return nil, StateUnavailable(err)
			}
		}
		p.metaHidden = got == metaHiddenPin
	}
	if callableTools {
		// What the client made callable is loaded.
		var add []string
		for _, name := range callable {
			if _, ok := cat.Lookup(name); ok && !slices.Contains(p.loaded, name) && !slices.Contains(add, name) {
				add = append(add, name)
			}
		}
		p.loaded = append(slices.Clip(p.loaded), add...)
	}
	p.loadedAtStart = len(p.loaded)
	var progressive []string
	if prof.Progressive && prof.ToolMode != ModeClient && !p.clientSearch {
		if err := p.loadForUserMessage(ctx, env.Messages[len(env.Messages)-1]); err != nil {
			return nil, err
		}
		progressive = p.loaded[p.loadedAtStart:]
	}
	p.messages = spliceMessages(env.Messages, splices)
	if p.strategy == StrategyIndex && prof.ToolMode == ModeClient {
		p.clientLoads()
	} else if p.strategy == StrategyIndex {
		p.findMissing()
		if len(progressive) > 0 || (prof.Progressive && len(p.missing) > 0) {
			p.loadExchange(progressive)
		}
	}
	if _, ok := pl.cfg.Chooser.(Observer); ok {
		p.newSession, p.added = turnInput(env.Messages)
	}
	return p, nil
}

// runsAny says whether the gateway runs any tool of cat itself.
func runsAny(prof *Profile, cat *toolsearch.Catalog) bool {
	if prof.Runner == nil {
		return false
	}
	for _, t := range cat.All() {
		if t.Source == toolsearch.FromProfile && prof.Runner.Runs(t.Name) {
			return true
		}
	}
	return false
}

// Allowed says whether the request's filters let name through in phase, and its source
// still has it.
func (p *Plan) Allowed(phase policy.Phase, name string) bool {
	return !p.removed[name] && p.rules.Allowed(phase, p.policy, name)
}

// findable says whether search may return name and load_tool load it.
func (p *Plan) findable(name string) bool {
	return p.Allowed(policy.Search, name) && p.Allowed(policy.Load, name)
}

// loadForUserMessage is progressive loading: when the conversation ends with a user
// message, the top results of a search for its text are loaded before the model runs.
// Loading is idempotent, so a retried request loads nothing new.
func (p *Plan) loadForUserMessage(ctx context.Context, last json.RawMessage) error {
	var m oai.Message
	if json.Unmarshal(last, &m) != nil || m.Role != "user" {
		return nil
	}
	text, err := m.TextContent()
	if err != nil || strings.TrimSpace(text) == "" {
		return nil
	}
	allowed := func(t *toolsearch.Tool) bool {
		return p.findable(t.Name)
	}
	found := p.ix.Search(text, toolsearch.SearchOptions{TopK: p.prof.SearchTopK, MinScore: p.prof.SearchMinScore, Filter: allowed})
	names := make([]string, len(found))
	for i, r := range found {
		names[i] = r.Name
	}
	return p.Load(ctx, names)
}

// Load adds names to the plan's loaded set and its thread's, after what was loaded. A
// request without a thread loads for itself alone.
func (p *Plan) Load(ctx context.Context, names []string) error {
	if p.thread != "" {
		added, err := p.pl.cfg.Store.Load(ctx, p.thread, names...)
		if err != nil {
			return StateUnavailable(err)
		}
		p.loaded = append(p.loaded, added...)
		return nil
	}
	var added []string
	for _, n := range names {
		if !slices.Contains(p.loaded, n) && !slices.Contains(added, n) {
			added = append(added, n)
		}
	}
	p.loaded = append(p.loaded, added...)
	return nil
}
