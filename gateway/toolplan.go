package gateway

import (
	"bytes"
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

// How the tools a client sends without deferring them are served (Options.ClientTools).
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
func clientToolsMode(r *http.Request, prof *Profile) (string, error) {
	switch h := r.Header.Get(HeaderClientTools); h {
	case "":
		return prof.ClientTools, nil
	case ClientToolsCallable, ClientToolsManaged:
		return h, nil
	default:
		return "", &apiError{Status: http.StatusBadRequest, Type: "invalid_request_error", Code: "invalid_header",
			Message: HeaderClientTools + " must be " + ClientToolsCallable + " or " + ClientToolsManaged + ", not " + strconv.Quote(h)}
	}
}

// toolPlan is one request's view of tools under management: its catalog, its thread,
// what is loaded, and the conversation as the engine sees it.
type toolPlan struct {
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

	// clientSearch: the client discovers tools itself (request.clientSearch).
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
}

// planTools decides whether tools are managed for this request and, if so, builds the
// plan. A nil plan means eager: the request goes through unchanged.
func (s *Server) planTools(r *http.Request, q *request, backend string, be backends.Backend) (*toolPlan, error) {
	env := q.env
	if s.store == nil {
		return nil, nil
	}
	prof := q.prof
	mode, err := clientToolsMode(r, prof)
	if err != nil {
		return nil, err
	}
	// callableTools: the client's tools, less hidden, are loaded from the first turn. A
	// client that discovers tools itself keeps its door's meaning (what it defers is
	// hidden until found); otherwise the mode says.
	callableTools := q.clientTools
	if !q.clientSearch {
		callableTools = mode == ClientToolsCallable
	}
	// The request's context, for the policy and the profile's variants; the namespaces
	// are the catalog's, once it is known.
	c := callerOf(r.Context())
	metadata, _ := env.Object.Get("metadata")
	pol := policy.NewRequest(prof.Name, r.Header, json.RawMessage(metadata), nil)
	pol.Key = c.name()
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
		// The client's tools alone: a small array is not managed, and is neither
		// parsed nor indexed — unless the client defers some of it, which must stay
		// uncallable until found (Claude Code's tool search sends 12 tools and one
		// deferred placeholder).
		if env.Tools == nil || (env.ToolCount < prof.EagerBelow && len(q.hidden) == 0) {
			return nil, nil
		}
		// Every tool callable and none filtered: nothing to manage, and the tools go as
		// the client sent them.
		if callableTools && len(q.hidden) == 0 && !q.clientSearch && s.profiles.Load().rules.Empty(policy.Active) {
			return nil, nil
		}
	}
	var ix *toolsearch.Index
	var hybrid *toolsearch.Hybrid
	var callable []string // the client's, when it says what may be called
	if env.Tools != nil {
		scope := c.name() + "\x00" + prof.Name + "\x00"
		if base != nil {
			scope += base.Catalog().Version()
		}
		ct, err := s.clientTools(scope, env.Tools, base, prof.hybridFor(base))
		if err != nil {
			return nil, err
		}
		ix, hybrid = ct.ix, ct.hybrid
		if callableTools {
			for _, name := range ct.names {
				if !slices.Contains(q.hidden, name) {
					callable = append(callable, name)
				}
			}
		}
	} else if base != nil {
		ix, hybrid = base, prof.hybridFor(base)
	}
	if ix == nil {
		return nil, nil
	}
	cat := ix.Catalog()
	// A small catalog is not managed: the request goes as it is, unless the gateway
	// runs some of its tools, which needs the loop (with every tool offered: eager),
	// or the client deferred some.
	small := cat.Len() < prof.EagerBelow
	if small && !runsAny(prof, cat) && len(q.hidden) == 0 {
		return nil, nil
	}
	for i := 0; i < cat.Len(); i++ {
		if meta.IsMeta(cat.Tool(i).Name) {
			return nil, badRequest("tool name "+cat.Tool(i).Name+" is reserved for the gateway's meta-tools; rename the tool", "tools")
		}
	}

	pol.Namespace = cat.Namespace
	p := &toolPlan{
		prof:       prof,
		thread:     s.threadOf(r, q),
		cat:        cat,
		ix:         ix,
		hybrid:     hybrid,
		policy:     pol,
		rules:      s.profiles.Load().rules,
		removed:    removed,
		clientMsgs: len(env.Messages),
	}
	if n := len(env.Messages); n > 0 {
		p.lastClient = env.Messages[n-1]
	}
	// What was kept for the thread: its loaded tools, hidden exchanges and strategy pin.
	var snap state.Snapshot
	if p.thread != "" {
		if snap, _, err = s.store.Get(r.Context(), p.thread); err != nil {
			return nil, stateUnavailable(err)
		}
	}
	if q.clientSearch && (prof.Strategy == StrategyAuto || prof.Strategy == "") && capabilities(be).Constrains {
		// A client that searches itself changes only what may be called: mask keeps its
		// prompt whole and the same from session to session, where the chooser's eager
		// would make what it deferred callable and remove would move the prompt with
		// each discovery.
		p.strategy = StrategyMask
	} else if p.strategy, err = s.chooseStrategy(r.Context(), prof, backend, be, cat, p.thread, snap.Pins); err != nil {
		return nil, err
	}
	if small && len(q.hidden) == 0 {
		p.strategy = StrategyEager
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
	if q.clientSearch {
		p.clientSearch, p.loaded = true, nil
	}
	p.metaHidden = p.clientSearch
	if p.thread != "" && p.wholeCatalog() && p.strategy != StrategyEager {
		want := metaShown
		if p.clientSearch {
			want = metaHiddenPin
		}
		got, ok := snap.Pins[metaPin]
		if !ok {
			if got, err = s.store.Pin(r.Context(), p.thread, metaPin, want); err != nil {
				return nil, stateUnavailable(err)
			}
		}
		p.metaHidden = got == metaHiddenPin
	}
	if callableTools {
		// What the client made callable is loaded.
		var add []string
		for _, name := range callable {
			if _, ok := cat.Lookup(name); ok && !contains(p.loaded, name) && !contains(add, name) {
				add = append(add, name)
			}
		}
		p.loaded = append(slices.Clip(p.loaded), add...)
	}
	p.loadedAtStart = len(p.loaded)
	if prof.Progressive && prof.ToolMode != ModeClient && !p.clientSearch {
		if err := s.loadForUserMessage(r.Context(), p, env.Messages[len(env.Messages)-1]); err != nil {
			return nil, err
		}
	}
	p.messages = spliceMessages(env.Messages, splices)
	if _, ok := s.opt.Chooser.(Observer); ok {
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

// findable says whether search may return name and load_tool load it.
func (s *Server) findable(p *toolPlan, name string) bool {
	return !p.removed[name] && p.rules.Allowed(policy.Search, p.policy, name) && p.rules.Allowed(policy.Load, p.policy, name)
}

// loadForUserMessage is progressive loading: when the conversation ends with a user
// message, the top results of a search for its text are loaded before the model runs.
// Loading is idempotent, so a retried request loads nothing new.
func (s *Server) loadForUserMessage(ctx context.Context, p *toolPlan, last json.RawMessage) error {
	var m oai.Message
	if json.Unmarshal(last, &m) != nil || m.Role != "user" {
		return nil
	}
	text, err := m.TextContent()
	if err != nil || strings.TrimSpace(text) == "" {
		return nil
	}
	allowed := func(t *toolsearch.Tool) bool {
		return s.findable(p, t.Name)
	}
	found := p.ix.Search(text, toolsearch.SearchOptions{TopK: p.prof.SearchTopK, MinScore: p.prof.SearchMinScore, Filter: allowed})
	names := make([]string, len(found))
	for i, r := range found {
		names[i] = r.Name
	}
	added, err := s.load(ctx, p, names)
	p.loaded = append(p.loaded, added...)
	return err
}

// load adds names to the plan's thread and returns those newly loaded, in order. A
// request without a thread loads for itself alone.
func (s *Server) load(ctx context.Context, p *toolPlan, names []string) ([]string, error) {
	if p.thread != "" {
		added, err := s.store.Load(ctx, p.thread, names...)
		if err != nil {
			return nil, stateUnavailable(err)
		}
		return added, nil
	}
	var added []string
	for _, n := range names {
		if !contains(p.loaded, n) && !contains(added, n) {
			added = append(added, n)
		}
	}
	return added, nil
}

// stateUnavailable is the answer when the state store fails: a 503 that says what the
// gateway could not do, never a silent loss of the thread's loaded tools.
func stateUnavailable(err error) error {
	return &apiError{Status: http.StatusServiceUnavailable, Type: "server_error", Code: "state_unavailable", RetryAfter: "1",
		Message: "the gateway's state store is unavailable, so this conversation's loaded tools cannot be read or kept; retry shortly", Err: err}
}

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

// active is the loaded set less what the policy hides in this request.
func (s *Server) active(p *toolPlan) []string {
	out := make([]string, 0, len(p.loaded))
	for _, name := range p.loaded {
		if !p.removed[name] && p.rules.Allowed(policy.Active, p.policy, name) {
			out = append(out, name)
		}
	}
	return out
}

// upstreamBody rewrites the client's request for the engine: tools become the
// meta-tools followed by the loaded tools in load order (so loads only ever append),
// messages become the spliced conversation, and a streamed round asks for usage (the
// gateway counts every round).
func (s *Server) upstreamBody(req *oai.Object, p *toolPlan, stream bool) ([]byte, error) {
	tools := s.toolsArray(p)
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
		if choice, ok := s.allowedToolChoice(p, client); ok {
			edits = append(edits, oai.Edit{Key: "tool_choice", Value: choice})
		} else if p.toolChoice != nil {
			edits = append(edits, oai.Edit{Key: "tool_choice", Value: p.toolChoice})
		}
	} else if p.toolChoice != nil {
		edits = append(edits, oai.Edit{Key: "tool_choice", Value: p.toolChoice})
	}
	if stream {
		// Last, so the member lands where requestUsage after the edits put it.
		edits = append(edits, oai.Edit{Key: "stream_options", Value: usageOptions(req)})
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

// toolsArray is the tools the engine sees: under eager the whole catalog alone; else the
// meta-tools, then under remove the loaded tools in load order (so loads only append),
// under the others the whole catalog in its fixed order (the same bytes whatever is
// loaded).
func (s *Server) toolsArray(p *toolPlan) []byte {
	if p.strategy == StrategyEager {
		return p.cat.Render()
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
	if p.wholeCatalog() {
		// The same bytes for every request of the catalog: built once per version.
		// Shared, so read-only: it has no spare capacity for an append to write into.
		return s.catalogs.wholeTools(key, func() []byte {
			r := p.cat.Render()
			out := make([]byte, 0, len(tools)+len(r))
			return append(append(append(out, tools...), sep...), r[1:]...)
		})
	}
	if loaded := p.cat.AppendNames(nil, s.active(p)); len(loaded) > 2 {
		return append(append(append([]byte(nil), tools...), sep...), loaded[1:]...)
	}
	return append(append([]byte(nil), tools...), ']')
}

// allowed is what a constraining backend lets the model call under mask: the
// meta-tools and the active loaded tools. Nil under other strategies.
func (s *Server) allowed(p *toolPlan) []string {
	if p.strategy != StrategyMask {
		return nil
	}
	return s.allowedNames(p)
}

func boolJSON(b bool) string {
	if b {
		return "true"
	}
	return "false"
}

// sameTool reports whether a and b are the same tool to the engine: the same
// description and schema bytes, and strict the same (absent is false).
func sameTool(a, b *toolsearch.Tool) bool {
	strict := func(p *bool) bool { return p != nil && *p }
	return a.Description == b.Description && bytes.Equal(a.Parameters, b.Parameters) && strict(a.Strict) == strict(b.Strict)
}

// threadOf names the request's conversation (state.Threads.Thread): the X-Thread-Id
// header, else the door's own conversation identity, else the body's metadata.thread_id,
// prompt_cache_key or user, within the caller's identity and profile; "" for none.
func (s *Server) threadOf(r *http.Request, q *request) string {
	env := q.env
	metadata, _ := env.Object.Get("metadata")
	pck, _ := env.Object.Get("prompt_cache_key")
	user, _ := env.Object.Get("user")
	in := state.ThreadInputOf(metadata, pck, user, env.Messages)
	// The thread is the caller's: its authenticated identity, never a header alone.
	in.Header = r.Header.Get("X-Thread-Id")
	if in.Header == "" {
		in.Header = q.thread // the door's own conversation identity
	}
	if !s.unscopedThreads {
		in.Identity = threadIdentity(callerOf(r.Context()).name(), q.prof.Name)
	}
	return s.threads.Thread(in)
}
