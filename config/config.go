package config

import (
	"time"
)

// Config is the whole file. The zero value of each field is its default, applied by Load.
type Config struct {
	// Listen is the address to serve on. Default 127.0.0.1:4000.
	Listen string `yaml:"listen"`
	// MaxRequestBytes caps a request body; larger ones get 413. Default 16 MiB. Accepts a
	// number of bytes or a size such as "16MiB".
	MaxRequestBytes ByteSize `yaml:"max_request_bytes"`
	// Backends are the engines and APIs to route to, tried in order for wildcard models.
	Backends []Backend `yaml:"backends"`
	// Tools configures the default profile's tool catalog.
	Tools Tools `yaml:"tools"`
	// Profiles are named tool setups: where a profile's tools come from, how they are
	// searched and managed. A request runs under its key's profile, else the one its
	// X-Maskgate-Profile header names (where its key may choose), else the one whose
	// alias its model is, else "default": the top-level tools, search, strategy and
	// filters. Each profile's search starts from the top-level search.
	Profiles []Profile `yaml:"profiles"`
	// MCPServers are the MCP servers whose tools profiles may take.
	MCPServers []MCPServer `yaml:"mcp_servers"`
	// State is where threads, stored responses and shared limits live: memory (the
	// default), files (data_dir) or Redis.
	State State `yaml:"state"`
	// Search configures tool search and loaded-set state.
	Search Search `yaml:"search"`
	// Strategy is how tools reach the model: auto (default), eager, mask, allowed_tools,
	// remove or validate.
	Strategy string `yaml:"strategy"`
	// Filters are deny rules over the request and the tool, applied in the phases they
	// name (toolsearch/policy owns their meaning; cmd/gateway compiles them). None: every
	// tool of the catalog may be found, loaded and called.
	Filters []Filter `yaml:"filters"`
	// AdminKeyEnv names the environment variable holding the key for /admin/. Empty: the
	// admin API is off.
	AdminKeyEnv string `yaml:"admin_key_env"`
	// Admin sizes the operator's view behind that key: the request log and the live
	// statistics' stream.
	Admin Admin `yaml:"admin"`
	// Server holds the HTTP server's limits on clients and its shutdown grace.
	Server Server `yaml:"server"`
	// Doors configures the Responses and Messages APIs the gateway serves beside Chat
	// Completions.
	Doors Doors `yaml:"doors"`
	// Auth is how clients are told apart. Empty (the default): by Keys when the file lists
	// any; with none, every client is one anonymous identity and the gateway refuses to
	// listen anywhere but on loopback. "none": no keys, on any address, on purpose.
	Auth string `yaml:"auth"`
	// Keys are the client keys. Each is an identity: its name keys its threads, loaded
	// tools and limits. None: see Auth.
	Keys []Key `yaml:"keys"`
	// ThreadSaltEnv names the environment variable holding the secret that thread ids
	// (X-Maskgate-Thread) and cache salts are derived with. Empty: a random secret per
	// process, so ids change at each restart.
	ThreadSaltEnv string `yaml:"thread_salt_env"`

	lines map[string]int // key path → line in the file, for validation messages
}

// Backend is one upstream.
type Backend struct {
	// Name identifies the backend in logs, metrics and errors. Required, unique.
	Name string `yaml:"name"`
	// Kind is the upstream's API: llamacpp, vllm, sglang, ollama, openai, anthropic or
	// embedded. Required.
	Kind string `yaml:"kind"`
	// URL is written as that engine's own clients write it: the server root for llamacpp
	// and ollama; the OpenAI SDK base URL, with /v1, for openai, vllm and sglang.
	// Required except for embedded, unless URLs is set instead.
	URL string `yaml:"url"`
	// URLs, instead of URL, are identical replicas of one engine (same weights, same
	// models), each written as URL would be. Each request goes to the replica most likely
	// to hold its prompt prefix in its KV cache (the catalog every session of a profile
	// shares, then the replica that served its thread), unless that one is far busier
	// than the least loaded; before the first byte of an answer it fails over to the
	// others; and a background check pings every replica each HealthInterval. Exactly one
	// of url and urls; not for embedded.
	URLs []string `yaml:"urls"`
	// APIKeyEnv names the environment variable that holds the upstream's key. The key
	// itself never appears in the file or in logs.
	APIKeyEnv string `yaml:"api_key_env"`
	// Models are the model names routed here; "*" routes any name no other backend lists.
	Models []string `yaml:"models"`
	// Format is the tool-call wire format (hermes, llama3, mistral, harmony, deepseek);
	// detected when empty.
	Format string `yaml:"format"`
	// Timeout bounds the wait for the upstream's response headers and the first byte of
	// its answer (for an engine that sends its headers with a whole answer, the whole
	// generation). Default 10m.
	Timeout Duration `yaml:"timeout"`
	// IdleTimeout bounds each pause of an answer once it has begun: between the bytes of
	// a whole answer, between the events of a stream (a keep-alive comment counts as
	// bytes). An upstream silent longer is cut: 504 upstream_timeout, or an error event
	// once a stream has begun. Default 60s.
	IdleTimeout Duration `yaml:"idle_timeout"`
	// MaxResponseBytes caps a whole (non-streaming) answer and what the gateway holds of
	// one streamed round of a tool loop; above it the client gets 502
	// upstream_response_too_large. Default 64MiB.
	MaxResponseBytes ByteSize `yaml:"max_response_bytes"`
	// MaxEventBytes caps one event of a stream, its lines together (an event split over
	// many data: lines is capped as a whole): 502 upstream_response_too_large, or an error
	// event once the stream has begun. Default 8MiB.
	MaxEventBytes ByteSize `yaml:"max_event_bytes"`
	// HealthInterval is how often each of URLs is pinged to mark it up or down. Default
	// 5s; only with urls.
	HealthInterval Duration `yaml:"health_interval"`
	// Model is the GGUF file for kind embedded.
	Model string `yaml:"model"`
	// Threads is the number of CPU threads the embedded engine decodes with (llama.cpp's
	// --threads). Zero: one per core. Kind embedded only.
	Threads int `yaml:"threads"`
	// ReasoningField is the member under which the engine reads an assistant message's
	// reasoning in the history: reasoning (vLLM 0.11 and later; 0.13 dropped the old
	// name) or reasoning_content (llama-server, SGLang, older vLLM). Answers are read
	// under either. Empty: the name the engine's own answers last used, and before any
	// did, reasoning for kind vllm and reasoning_content for the rest.
	ReasoningField string `yaml:"reasoning_field"`
	// ContextWindow is the model's context length in tokens; requests that cannot fit
	// get a 400 before they reach the engine. Zero: unknown, nothing is refused.
	ContextWindow int `yaml:"context_window"`
	// MaxInFlight caps the requests sent to this backend at once. Default 256.
	MaxInFlight int `yaml:"max_in_flight"`
	// MaxQueue is how many requests may wait for a slot past MaxInFlight; more are
	// answered 503 at once. Default 1024.
	MaxQueue int `yaml:"max_queue"`
	// QueueTimeout bounds a request's wait in the queue; past it, 503. Default 30s.
	QueueTimeout Duration `yaml:"queue_timeout"`
	// Routing is the hint sent upstream for a session-affinity router between the
	// gateway and the engines. Zero: none.
	Routing Routing `yaml:"routing"`
}

// Key is one client key. The key itself is never in the file: KeyHash is its SHA-256
// (gateway -hash-key prints it), or KeyEnv names a variable that holds it. Exactly one.
type Key struct {
	// Name is the identity the key stands for: it keys the caller's state and labels
	// metrics and logs. Required, unique.
	Name string `yaml:"name"`
	// KeyHash is "sha256:" and the hex SHA-256 of the key.
	KeyHash string `yaml:"key_hash"`
	// KeyEnv names an environment variable holding the key.
	KeyEnv string `yaml:"key_env"`
	// Profile names the tool profile the key uses. Empty: the default profile.
	Profile string `yaml:"profile"`
	// Profiles are the profiles the key may choose per request with the
	// X-Maskgate-Profile header; a header naming another is 403. None: the header is
	// refused (403) unless it names the key's own profile.
	Profiles []string `yaml:"profiles"`
	// Models are the model names the key may ask for; others are 403. None: any.
	Models []string `yaml:"models"`
	// Backends are the backends the key's requests may reach; a model routed elsewhere
	// is 403. None: any.
	Backends []string `yaml:"backends"`
	// IsolateCache sends a cache salt of the key's own with its requests (vLLM's
	// cache_salt), so the engine never reuses another identity's cached prefix for it nor
	// its for another. Every backend the key may reach must be of kind vllm.
	IsolateCache bool `yaml:"isolate_cache"`
	// Limits bound the key's traffic. None: unlimited.
	Limits KeyLimits `yaml:"limits"`
	// MCPTokenEnv names a variable holding the token MCP servers with forward_auth get
	// as this key's bearer on its calls (the key itself is never forwarded). None: such
	// calls carry no token.
	MCPTokenEnv string `yaml:"mcp_token_env"`
}

// KeyLimits bound one key's traffic; 429 past them. Zero: no limit.
type KeyLimits struct {
	// RequestsPerMinute: a token bucket holding a minute's requests, refilled evenly.
	RequestsPerMinute int `yaml:"requests_per_minute"`
	// TokensPerMinute: prompt plus completion tokens, charged when each answer ends; a
	// key that overdrew waits until the bucket refills above zero.
	TokensPerMinute int `yaml:"tokens_per_minute"`
	// MaxConcurrent caps the key's requests in flight, streamed or whole.
	MaxConcurrent int `yaml:"max_concurrent"`
}

// Server is the HTTP server's defence against slow, idle and oversized clients, and
// its shutdown.
type Server struct {
	// ReadHeaderTimeout bounds the reading of a request's headers. Default 10s.
	ReadHeaderTimeout Duration `yaml:"read_header_timeout"`
	// BodyTimeout and MinBodyRate bound the reading of a request's body: it must be in
	// within BodyTimeout plus its size divided by MinBodyRate (bytes per second), so a
	// client sending a byte at a time is cut after about BodyTimeout while a large body
	// on a slow link still gets in. Defaults 10s and 64KiB.
	BodyTimeout Duration `yaml:"body_timeout"`
	MinBodyRate ByteSize `yaml:"min_body_rate"`
	// WriteTimeout bounds each write to a client, of a stream's event or a whole answer
	// (16KiB at most at a time): a client that takes no bytes for that long is cut, its
	// upstream request cancelled (an engine's slot freed) and the connection closed.
	// Keep it under the backends' idle_timeout. Default 30s; at least 1s.
	WriteTimeout Duration `yaml:"write_timeout"`
	// KeepAliveTimeout closes a keep-alive connection idle that long between requests.
	// Default 75s.
	KeepAliveTimeout Duration `yaml:"keepalive_timeout"`
	// MaxHeaderBytes caps a request's headers; larger ones get 431. Default 64KiB.
	MaxHeaderBytes ByteSize `yaml:"max_header_bytes"`
	// MaxConnections caps the client connections open at once; more wait to be accepted
	// until one closes. Keep it under the process's open-file limit (ulimit -n), which
	// upstream connections share. Default 4096.
	MaxConnections int `yaml:"max_connections"`
	// TrustedProxies are the addresses (IPs or CIDR prefixes) of TLS-terminating
	// proxies in front of the gateway: their X-Forwarded-Proto: https marks the
	// dashboard's session cookie Secure. Empty: only the gateway's own TLS does.
	TrustedProxies []string `yaml:"trusted_proxies"`
	// ShutdownGrace is how long requests in flight may run on after SIGTERM or SIGINT,
	// while no new connection is accepted; then each open stream ends with a
	// server_shutting_down error event and each unanswered request gets 503. Keep it
	// under the time your supervisor waits before SIGKILL (docker stop: 10s unless
	// --stop-timeout; Kubernetes: terminationGracePeriodSeconds, 30s). Default 25s.
	ShutdownGrace Duration `yaml:"shutdown_grace"`
	// KeepaliveInterval is how long a begun stream may stay silent before the gateway
	// sends a keep-alive (Anthropic's ping event on Messages, an SSE comment line on
	// Chat Completions and Responses), so that proxies and clients with read timeouts
	// do not cut a stream during a long prefill or the gateway's own tool rounds.
	// Default 15s; at least 1s; "off" sends none.
	KeepaliveInterval Duration `yaml:"keepalive_interval"`
	// EarlyEvents says whether a streamed Responses or Messages request gets its opening
	// events (response.created and response.in_progress; message_start and a ping) as
	// soon as it is admitted, before the upstream answers. Then an error before the
	// model's first output goes out as the door's in-stream error event, not as an HTTP
	// status. "on" (the default) or "off" (the stream begins at the first output).
	EarlyEvents string `yaml:"early_events"`
}

// Admin sizes what the gateway keeps and sends for the operator (/admin/requests,
// /admin/events and the dashboard on them). Neither takes effect on reload.
type Admin struct {
	// RequestLog is how many of the latest requests GET /admin/requests keeps. The ring
	// is allocated at start, so it is bounded (MaxRequestLog). Default 1000.
	RequestLog int `yaml:"request_log"`
	// EventInterval is how often GET /admin/events sends each open stream a snapshot
	// (the dashboard's refresh). Shorter costs the gateway a snapshot per interval while
	// a stream is open, nothing when none is. Between 10ms and 1m; default 1s.
	EventInterval Duration `yaml:"event_interval"`
}

// Doors configures the Responses (/v1/responses, and its WebSocket mode) and Messages
// (/v1/messages) APIs.
type Doors struct {
	// HostedTools is what happens to hosted tools the gateway cannot run (web_search,
	// code_execution, file_search, ...): drop (the default; the answer's
	// X-Maskgate-Dropped-Tools header names them) or refuse (400).
	HostedTools string `yaml:"hosted_tools"`
	// StoreBytes bounds the memory of stored responses (store: true, the Responses
	// default, kept for previous_response_id and GET /v1/responses/{id}); the oldest go
	// first. Default 64MiB.
	StoreBytes ByteSize `yaml:"store_bytes"`
	// StoreTTL is how long a stored response is kept. Default 1h.
	StoreTTL Duration `yaml:"store_ttl"`
	// HistoryBytes bounds the conversation one chain of responses may hold
	// (previous_response_id's history, or a WebSocket's last response, with the new
	// input): past it a request, a warm-up (generate: false) included, is refused with a
	// 400 history_too_large. Default 32MiB.
	HistoryBytes ByteSize `yaml:"history_bytes"`
	// BetaFlags are the OpenAI-Beta and Anthropic-Beta flags a request passed to an
	// upstream that speaks its door (a Responses request to an openai backend, a
	// Messages request to an anthropic one) may carry; others are left out with an
	// X-Maskgate-Warning header, or refused (400) under hosted_tools: refuse. Unset: the
	// gateway's list of flags that reach nothing on the operator's account
	// (gateway.DefaultBetaFlags); [] passes none.
	BetaFlags []string `yaml:"beta_flags"`
	// WebSocket bounds the Responses API's WebSocket mode.
	WebSocket WebSocket `yaml:"websocket"`
}

// WebSocket bounds each socket of the Responses API's WebSocket mode.
type WebSocket struct {
	// MaxMessageBytes caps one client message (close 1009 above it). Default 16MiB.
	MaxMessageBytes ByteSize `yaml:"max_message_bytes"`
	// SendQueueBytes caps the events queued for a client that reads slower than the
	// engine writes; past it the socket is closed (1008, "slow reader"). Default 8MiB.
	SendQueueBytes ByteSize `yaml:"send_queue_bytes"`
	// PingInterval is how often the gateway pings; a client silent for twice as long is
	// dropped. Default 20s.
	PingInterval Duration `yaml:"ping_interval"`
	// IdleTimeout closes a socket with no message and no response running that long.
	// Default 10m.
	IdleTimeout Duration `yaml:"idle_timeout"`
	// MaxPerKey is how many sockets one key may hold open at once (a 429 past it).
	// Default 32.
	MaxPerKey int `yaml:"max_per_key"`
}

// Tools configures the catalog.
type Tools struct {
	// Files are JSON arrays of OpenAI tool objects, with optional "keywords" and
	// "category" per tool. Relative paths are relative to the config file.
	Files []string `yaml:"files"`
}

// Search configures tool search and loaded-set state.
type Search struct {
	// TopK is how many results search_tools returns. Default 5.
	TopK int `yaml:"top_k"`
	// MinScore, when set, drops results under this relevance (0–1) as well. Unset: the
	// search's own cut, relative to the best match (toolsearch's SearchOptions.MinScore).
	MinScore float64 `yaml:"min_score"`
	// AutoLoad loads search results directly and hides load_tool.
	AutoLoad bool `yaml:"auto_load"`
	// TTL is how long an idle thread's state is kept in memory. Default (or 0) 1h;
	// "never" keeps it until the store's memory bound pushes the least recently used
	// thread out.
	TTL Duration `yaml:"ttl"`
	// Mode is who runs meta-tool calls: server (default), the gateway, which calls the
	// backend again and never shows them to the client; or client, which returns them.
	Mode string `yaml:"mode"`
	// Progressive has the gateway itself load the top results for each new user message,
	// keeping what is loaded.
	Progressive bool `yaml:"progressive"`
	// MaxRounds bounds the meta-tool rounds the gateway runs for one request in server
	// mode. Default 4.
	MaxRounds int `yaml:"max_rounds"`
	// EagerBelow: under strategy auto, a catalog (the profile's tools with the client's)
	// of fewer tools is sent whole, eager: every tool callable, no meta-tools. A strategy
	// other than auto wins over it. Unset (nil): 20. 0: off, no catalog is eager for its
	// size.
	EagerBelow *int `yaml:"eager_below"`
	// ClientTools is how the tools a client sends without deferring them are served:
	// callable (default), its working set, callable from the first turn, with only the
	// profile's catalog and what the client defers behind search_tools/load_tool; or
	// managed, behind them too from eager_below tools on (a Chat Completions client with
	// hundreds of tools). A request may choose with the X-Maskgate-Client-Tools header.
	ClientTools string `yaml:"client_tools"`
	// CatalogFirst, where the gateway renders the prompt (llama-server, the embedded
	// engine) or orders the messages the engine renders (vLLM, SGLang: Hermes only), lays
	// the tools out ahead of the client's system prompt so that sessions whose system
	// prompts differ share the catalog's prefix cache: Hermes/Qwen templates (the system
	// text moves to a turn after the tools) and Llama 3.x (tools_in_user_message false);
	// other formats keep their template's order. Default true; false keeps every
	// template's own order.
	CatalogFirst *bool `yaml:"catalog_first"`
	// Scorer ranks search results: bm25 (default: BM25F with stemming, synonyms and
	// namespace hints) or keyword (name 3, keywords 2, description 1).
	Scorer string `yaml:"scorer"`
	// FingerprintThreads files a request that names no thread (no X-Thread-Id,
	// metadata.thread_id, prompt_cache_key or user) under a hash of its system prompt and
	// first user message, within its identity: conversations of one key that open alike
	// share loaded tools. Off: such requests keep nothing between turns.
	FingerprintThreads bool `yaml:"fingerprint_threads"`
	// Embeddings, when its url is set, makes search hybrid: tool vectors from this
	// OpenAI-compatible /v1/embeddings backend, computed once per catalog, fused with the
	// lexical ranking.
	Embeddings Embeddings `yaml:"embeddings"`
}

// Embeddings names an OpenAI-compatible embeddings backend (llama-server with
// --embeddings, vLLM, Ollama).
type Embeddings struct {
	// URL is the OpenAI SDK base URL, with /v1.
	URL string `yaml:"url"`
	// Model is sent as "model".
	Model string `yaml:"model"`
	// APIKeyEnv names the variable holding its key, if it needs one.
	APIKeyEnv string `yaml:"api_key_env"`
}

// Filter is one deny rule, written as toolsearch/policy.Rule reads it. Lists in one field
// are alternatives; fields set together must all hold.
type Filter struct {
	// Name labels the rule in messages and logs.
	Name string `yaml:"name"`
	// Phases: search (hide from results), load (refuse load_tool), active (not callable in
	// this request). Required.
	Phases []string `yaml:"phases"`
	// Profiles are globs over the request's profile name; none: any profile.
	Profiles []string `yaml:"profiles"`
	// Headers must all be present, each with a value matching its glob.
	Headers []FilterMatch `yaml:"headers"`
	// Metadata keys of the request must all be present, each with a matching value.
	Metadata []FilterMatch `yaml:"metadata"`
	// Tools are globs over tool names; Namespaces over tool namespaces. Neither: all tools.
	Tools      []string `yaml:"tools"`
	Namespaces []string `yaml:"namespaces"`
	// When is a condition over the request (key, profile, headers, metadata) that must
	// also hold; none: always. See Cond. "Deny unless the plan is pro" is
	// when: {not: {field: metadata.plan, equals: pro}}, which also denies a request with
	// no plan.
	When *Cond `yaml:"when"`
}

// FilterMatch is a header or metadata condition: Name present, its value matching the
// glob Value (empty: any value).
type FilterMatch struct {
	Name  string `yaml:"name"`
	Value string `yaml:"value"`
}

// Duration is a time.Duration written as "90s", "10m", "1h".
type Duration time.Duration

// NoExpiry is search.ttl: never.
const NoExpiry Duration = -1

// Off is server.keepalive_interval: none sent.
const Off Duration = -1

// RawJSON is a YAML value kept as JSON bytes, its keys in the file's order: inline tool
// definitions reach the model as the file wrote them.
type RawJSON []byte

// ByteSize is a number of bytes written as 1048576, "512KiB", "16MiB" or "1GB".
type ByteSize int64

// Defaults.
const (
	DefaultListen          = "127.0.0.1:4000"
	DefaultMaxRequestBytes = 16 << 20
	DefaultTimeout         = 10 * time.Minute
	DefaultIdleTimeout     = 60 * time.Second
	DefaultMaxResponse     = 64 << 20
	DefaultMaxEvent        = 8 << 20
	DefaultHealthInterval  = 5 * time.Second
	DefaultTopK            = 5
	DefaultTTL             = time.Hour
	DefaultMaxRounds       = 4
	DefaultEagerBelow      = 20

	DefaultReadHeaderTimeout = 10 * time.Second
	DefaultBodyTimeout       = 10 * time.Second
	DefaultMinBodyRate       = 64 << 10
	DefaultWriteTimeout      = 30 * time.Second
	MinWriteTimeout          = time.Second
	DefaultKeepaliveInterval = 15 * time.Second
	MinKeepaliveInterval     = time.Second
	DefaultKeepAliveTimeout  = 75 * time.Second
	DefaultMaxHeaderBytes    = 64 << 10
	DefaultMaxConnections    = 4096
	DefaultShutdownGrace     = 25 * time.Second

	DefaultRequestLog    = 1000
	MaxRequestLog        = 1_000_000
	DefaultEventInterval = time.Second
	MinEventInterval     = 10 * time.Millisecond
	MaxEventInterval     = time.Minute

	DefaultMaxInFlight  = 256
	DefaultMaxQueue     = 1024
	DefaultQueueTimeout = 30 * time.Second
)

// Auth modes a config may name.
const (
	AuthNone = "none"
	AuthKeys = "keys"
)

// SearchModes a config may name.
var SearchModes = []string{"server", "client"}

// ClientToolModes a config may name for search.client_tools.
var ClientToolModes = []string{"callable", "managed"}

// FilterPhases a filter may name.
var FilterPhases = []string{"search", "load", "active"}

// Kinds of backend.
var Kinds = []string{"llamacpp", "vllm", "sglang", "ollama", "openai", "anthropic", "embedded"}

// Strategies a config may name.
var Strategies = []string{"auto", "eager", "mask", "allowed_tools", "remove", "validate", "index"}

// Formats a backend may name.
var Formats = []string{"hermes", "llama3", "mistral", "harmony", "deepseek"}
