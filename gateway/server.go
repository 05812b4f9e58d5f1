package gateway

import (
	"context"
	"crypto/rand"
	"io"
	"log/slog"
	"net/http"
	"net/netip"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"go.opentelemetry.io/otel/trace"

	"github.com/maskgate/maskgate/gateway/access"
	"github.com/maskgate/maskgate/gateway/planner"
	"github.com/maskgate/maskgate/gateway/respstore"
	"github.com/maskgate/maskgate/gateway/wsock"
	"github.com/maskgate/maskgate/tenant"
	"github.com/maskgate/maskgate/toolsearch"
	"github.com/maskgate/maskgate/toolsearch/policy"
	"github.com/maskgate/maskgate/toolsearch/state"
	"github.com/maskgate/maskgate/toolsearch/tokens"
)

// Options configure a Server. The zero value of each field is its default.
type Options struct {
	// Upstreams are the backends, in configuration order.
	Upstreams []Upstream
	// MaxRequestBytes caps a request body (413 above it). If zero, 16 MiB.
	MaxRequestBytes int64
	// BodyTimeout and MinBodyRate (bytes per second) bound the reading of a request
	// body: it must arrive within BodyTimeout + its size / MinBodyRate, or the client
	// gets 408 and its connection is closed. If zero, 10 seconds and 64 KiB/s.
	BodyTimeout time.Duration
	MinBodyRate int64
	// WriteTimeout bounds each write to a client (16 KiB at most at a time): a client
	// that takes no bytes for that long is cut, its upstream request cancelled. If
	// zero, 30 seconds.
	WriteTimeout time.Duration
	// Registry receives the gateway's metrics and is served at /metrics. If nil, a
	// registry private to this server is used.
	Registry *prometheus.Registry
	// Logger receives request logs. If nil, logs are discarded.
	Logger *slog.Logger
	// Now is the clock. If nil, time.Now.
	Now func() time.Time
	// ProbeTimeout bounds each backend probe of /readyz and each model listing of
	// /v1/models. If zero, 2 seconds.
	ProbeTimeout time.Duration
	// Tools is the profile's indexed tool catalog. If nil, the profile has no tools of its
	// own: /v1/tools is empty and only clients' tools exist.
	Tools *toolsearch.Index
	// Hybrid, if set, is Tools with embeddings: searches fuse lexical and vector ranks.
	// Its Index must be Tools.
	Hybrid *toolsearch.Hybrid
	// Profiles are named tool setups besides the default one the fields below
	// describe; a profile named "default" replaces it. Aliases map model names to a
	// profile and a backend model. See planner.Planner.ProfileFor.
	Profiles []*Profile
	Aliases  map[string]Alias
	// SearchTopK is how many results a search returns when the caller does not say. If
	// zero, 5.
	SearchTopK int
	// SearchMinScore, when positive, also drops results under this relevance (0–1).
	// Zero leaves the search's own cut, relative to the best match.
	SearchMinScore float64

	// State holds each thread's loaded tools and hidden meta-tool exchanges. If nil,
	// tools are not managed: every request goes through as the client sent it (eager).
	State *state.Memory
	// Store, if set, is where thread state lives instead of State: files that survive a
	// restart, or Redis shared by every instance (toolsearch/state). A failing store is
	// a 503 state_unavailable for requests that need it.
	Store state.Store
	// Budgets enforces keys' and profiles' limits. If nil, this process's own
	// (tenant.Limiter); tenant/redislimit shares them between instances.
	Budgets tenant.Budgets
	// Strategy is how managed tools reach the engine: StrategyAuto (the default when
	// empty), StrategyEager, StrategyMask, StrategyAllowedTools, StrategyRemove or
	// StrategyValidate. Mask on a backend that cannot constrain decoding is validate.
	Strategy Strategy
	// Chooser picks the strategy under StrategyAuto. If nil, auto is mask where the
	// backend constrains decoding and remove elsewhere.
	Chooser Chooser
	// EagerBelow is the catalog size under which, with Strategy auto, the engine gets
	// the whole catalog (eager: every tool callable, no meta-tools); a catalog of the
	// client's tools alone then goes as the client sent it. A Strategy other than auto
	// wins over it. If zero, 20; if negative, no catalog is eager for its size.
	EagerBelow int
	// ToolMode is ModeServer (the gateway runs meta-tool calls; the default when empty)
	// or ModeClient (they go back to the client).
	ToolMode string
	// MaxRounds bounds the meta-tool rounds of one request in server mode. If zero, 4.
	MaxRounds int
	// AutoLoad makes search_tools load what it finds; load_tool is then hidden.
	AutoLoad bool
	// Progressive makes the gateway itself load the top results of a search for each new
	// user message, keeping what is loaded (server mode).
	Progressive bool
	// ClientTools is how the tools a client sends without deferring them are served:
	// ClientToolsCallable (the default when empty), callable from the first turn, or
	// ClientToolsManaged, behind search_tools/load_tool like the profile's catalog. A
	// request may choose with HeaderClientTools.
	ClientTools string
	// TemplateOrder keeps the chat template's own order of system prompt and tools where
	// a backend renders the prompt (llama-server, the embedded engine) or lays out the
	// messages the engine renders (vLLM, SGLang under Hermes). If false, the
	// catalog goes ahead of the system prompt where the template allows it
	// (backends.Request.CatalogFirst).
	TemplateOrder bool
	// Policy filters tools by phase. If nil, nothing is filtered.
	Policy *policy.Policy
	// AdminKey guards /admin/, presented as Authorization: Bearer only. If empty, the
	// admin API is off.
	AdminKey string
	// SocketsPerKey is how many Responses WebSockets one key (or, without keys, the one
	// anonymous identity) may hold open at once; one more is a 429 before the upgrade. If
	// zero, DefaultSocketsPerKey; negative, no cap.
	SocketsPerKey int
	// TrustedProxies are TLS-terminating proxies whose X-Forwarded-Proto: https makes
	// the dashboard's session cookie Secure (observe.Options).
	TrustedProxies []netip.Prefix
	// Keys are the client keys /v1/ requires (401 without one). If nil, every client is
	// one anonymous identity: the caller must then serve on loopback only, or mean it,
	// and /v1/ refuses what a web page would send (access.Guard.Keys says what).
	Keys *tenant.Keyring
	// AnyHost, without Keys, accepts requests to any Host name, not only loopback ones:
	// the operator serves without keys beyond loopback on purpose (auth: none).
	AnyHost bool
	// ThreadSecret salts thread ids (X-Maskgate-Thread) and cache salts. If nil, 32
	// random bytes, so ids hold for this process only.
	ThreadSecret []byte
	// FingerprintThreads files requests that name no thread under their opening messages,
	// within their identity (state.Threads). Off: they keep nothing between requests.
	FingerprintThreads bool
	// Tokens counts tokens for the context-budget guard and /v1/tools. If nil, requests
	// are not measured and /v1/tools reports no token counts.
	Tokens *tokens.Counter

	// StoreBytes bounds the memory of stored responses (POST /v1/responses with store,
	// the default): past it the oldest go first. If zero, 64 MiB; negative stores none.
	StoreBytes int64
	// StoreTTL is how long a stored response is kept. If zero, one hour.
	StoreTTL time.Duration
	// HistoryBytes bounds the conversation one Responses chain may hold (the history
	// previous_response_id continues, or a socket's last response, with the new input and
	// instructions): a request past it is a 400 history_too_large, a warm-up included.
	// If zero, 32 MiB; negative, no bound.
	HistoryBytes int64
	// HostedTools is what the Responses and Messages doors do with hosted tools the
	// gateway cannot run (web_search, code_execution, ...): "drop" (the default; the
	// answer's X-Maskgate-Dropped-Tools header names them) or "refuse" (400).
	HostedTools string
	// BetaFlags are the OpenAI-Beta and Anthropic-Beta flags a request passed to an
	// upstream that speaks its door (OpenAI's Responses, Anthropic's Messages) may carry;
	// others are left out with an X-Maskgate-Warning, or refused (400) under HostedTools
	// "refuse". If nil, DefaultBetaFlags.
	BetaFlags []string
	// WebSocket configures the Responses API's WebSocket mode (GET /v1/responses).
	WebSocket wsock.Options
	// KeepaliveInterval is how long a begun stream of the tool loop may stay silent
	// before the gateway writes a keep-alive: Anthropic's ping event on Messages, an SSE
	// comment line on Chat Completions and Responses (see keepalive.go). If zero, 15
	// seconds; negative sends none.
	KeepaliveInterval time.Duration
	// LateStreams turns off the early events: a streamed Responses or Messages request
	// then begins its stream at the model's first output (an error before it is an HTTP
	// status) rather than as soon as it is admitted.
	LateStreams bool

	// RequestLog is how many of the latest requests GET /admin/requests keeps. If zero,
	// DefaultRequestLog; negative keeps none.
	RequestLog int
	// EventInterval is how often GET /admin/events sends a snapshot. If zero, a second.
	EventInterval time.Duration
	// TracerProvider, if set, gets a span per request, per round of the tool loop and per
	// upstream call (gateway/observe). If nil, no span is made.
	TracerProvider trace.TracerProvider
}

// Server is the gateway's HTTP handler.
type Server struct {
	opt     Options
	router  *router
	metrics *metrics
	log     *slog.Logger
	now     func() time.Time
	mux     *http.ServeMux

	stopping context.Context // done once Stop is called
	stop     context.CancelCauseFunc
	bodies   bodyReader
	threads  state.Threads
	budgets  tenant.Budgets
	access   *access.Guard // authentication, keys' limits, backends' gates

	responses *respstore.Store
	sockets   wsock.Registry

	// store is Options' Store, or its State; nil: tools are not managed.
	store state.Store

	// planner plans each request's tools: its profile, catalog, loaded set and
	// strategy (gateway/planner).
	planner *planner.Planner

	// readiness is /readyz's last round of probes (health.go).
	readiness readiness

	// ops is the operator's view (gateway/observe): the request log, live statistics
	// and their event streams, spans, the admin endpoints.
	ops opsObserver

	// unscopedThreads files every caller's threads together, as if no identity were
	// known: the mutation the isolation property test must catch. Only tests set it
	// (UnscopeThreads in export_test.go); it is never configurable.
	unscopedThreads bool
}

// New returns a Server for o.
func New(o Options) *Server {
	if o.MaxRequestBytes == 0 {
		o.MaxRequestBytes = 16 << 20
	}
	if o.BodyTimeout == 0 {
		o.BodyTimeout = 10 * time.Second
	}
	if o.MinBodyRate == 0 {
		o.MinBodyRate = 64 << 10
	}
	if o.WriteTimeout == 0 {
		o.WriteTimeout = 30 * time.Second
	}
	if o.Registry == nil {
		o.Registry = prometheus.NewRegistry()
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.ProbeTimeout == 0 {
		o.ProbeTimeout = 2 * time.Second
	}
	if o.StoreBytes == 0 {
		o.StoreBytes = 64 << 20
	}
	if o.StoreTTL == 0 {
		o.StoreTTL = time.Hour
	}
	if o.HistoryBytes == 0 {
		o.HistoryBytes = 32 << 20
	}
	if o.BetaFlags == nil {
		o.BetaFlags = DefaultBetaFlags
	}
	if o.HostedTools == "" {
		o.HostedTools = "drop"
	}
	if o.KeepaliveInterval == 0 {
		o.KeepaliveInterval = 15 * time.Second
	}
	if o.ThreadSecret == nil {
		o.ThreadSecret = make([]byte, 32)
		_, _ = rand.Read(o.ThreadSecret) // never fails (crypto/rand)
	}
	s := &Server{
		responses: respstore.New(o.StoreBytes, o.StoreTTL, o.Now),
		opt:       o,
		router:    newRouter(o.Upstreams),
		metrics:   newMetrics(o.Registry),
		log:       o.Logger,
		now:       o.Now,
		mux:       http.NewServeMux(),
		threads:   state.Threads{Secret: o.ThreadSecret, Fingerprint: o.FingerprintThreads},
		budgets:   o.Budgets,
	}
	if s.budgets == nil {
		s.budgets = tenant.Local(tenant.NewLimiter(o.Now))
	}
	s.store = o.Store
	if s.store == nil && o.State != nil {
		s.store = o.State.Store()
	}
	s.planner = planner.New(planner.Config{Store: s.store, Chooser: o.Chooser, Tokens: o.Tokens, Policy: o.Policy,
		Threads: s.threads, Default: defaultProfile(&s.opt), CatalogChanges: s.metrics.catalogChanges, Now: o.Now})
	s.planner.SetProfiles(o.Profiles, o.Aliases, nil)
	s.stopping, s.stop = context.WithCancelCause(context.Background())
	if s.opt.EventInterval <= 0 {
		s.opt.EventInterval = time.Second
	}
	view := newOperatorView(s)
	s.ops = view
	s.access = newAccess(s)
	d := newDoors(s)
	s.handle("/v1/chat/completions", http.MethodPost, s.access.Authenticate(d.chat.ServeHTTP))
	s.handle("/v1/messages", http.MethodPost, s.access.Authenticate(d.messages.create))
	s.handle("/v1/messages/count_tokens", http.MethodPost, s.access.Authenticate(s.metered(d.messages.countTokens)))
	s.mux.HandleFunc("/v1/responses", s.access.Authenticate(d.responses.root))
	s.handle("/v1/responses/compact", http.MethodPost, s.access.Authenticate(d.responses.compact))
	s.handle("/v1/responses/input_tokens", http.MethodPost, s.access.Authenticate(s.metered(d.responses.inputTokens)))
	s.mux.HandleFunc("/v1/responses/", s.access.Authenticate(d.responses.byID))
	s.handle("/v1/models", http.MethodGet, s.access.Authenticate(s.metered(d.models.ServeHTTP)))
	s.handle("/v1/models/", http.MethodGet, s.access.Authenticate(s.metered(d.models.retrieve)))
	for _, e := range passedEndpoints { // passthrough.go
		s.handle("/v1/"+e, http.MethodPost, s.access.Authenticate(s.endpointHandler(e)))
	}
	s.handle("/v1/tools", http.MethodGet, s.access.Authenticate(s.metered(listTools(s.planner, s.log))))
	s.handle("/v1/tools/search", http.MethodGet, s.access.Authenticate(s.metered(searchTools(s.planner, s.log))))
	s.handle("/healthz", http.MethodGet, s.healthz)
	s.handle("/readyz", http.MethodGet, s.readyz)
	view.Register(s.mux) // /admin/
	metricsHandler := promhttp.HandlerFor(o.Registry, promhttp.HandlerOpts{})
	s.handle("/metrics", http.MethodGet, func(w http.ResponseWriter, r *http.Request) { metricsHandler.ServeHTTP(w, r) })
	s.mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeErrorAs(w, s.log, &apiError{Status: http.StatusNotFound, Type: "invalid_request_error", Code: "unknown_url",
			Message: "unknown path " + r.URL.Path + "; the gateway serves /v1/chat/completions, /v1/responses, /v1/messages, /v1/models and " + endpointList()}, envelopeFor(r))
	})
	return s
}

// Planner is the server's tool planner: the wiring sets its profiles (SetProfiles) and
// counts their catalogs' changes through it.
func (s *Server) Planner() *planner.Planner { return s.planner }

// handle registers h for path and answers other methods with a 405 in the envelope.
func (s *Server) handle(path, method string, h http.HandlerFunc) {
	s.mux.HandleFunc(path, func(w http.ResponseWriter, r *http.Request) {
		if r.Method != method && !(method == http.MethodGet && r.Method == http.MethodHead) {
			w.Header().Set("Allow", method)
			writeErrorAs(w, s.log, &apiError{Status: http.StatusMethodNotAllowed, Type: "invalid_request_error",
				Message: r.Method + " is not allowed on " + path + "; use " + method}, envelopeFor(r))
			return
		}
		h(w, r)
	})
}

// Stop ends every request in flight, for use once http.Server.Shutdown's grace period
// has passed: a stream gets a server_shutting_down error event and its proper end (the
// HTTP response completes), a request not yet answered a 503 server_shutting_down; and
// so does any request that arrives later. The upstream requests are cancelled.
func (s *Server) Stop() {
	s.stop(ErrShuttingDown)
	s.sockets.CloseAll("server shutting down")
	s.CloseEvents()
}

// CloseEvents ends every admin event stream and refuses new ones: for the start of a
// graceful shutdown (http.Server.RegisterOnShutdown), since a stream that never ends
// would hold the shutdown for its whole grace period. Stop does it too.
func (s *Server) CloseEvents() { s.ops.CloseEvents() }
