package planner

import (
	"encoding/json"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/maskgate/maskgate/backends"
	"github.com/maskgate/maskgate/backends/oai"
	"github.com/maskgate/maskgate/toolsearch/policy"
	"github.com/maskgate/maskgate/toolsearch/state"
	"github.com/maskgate/maskgate/toolsearch/tokens"
)

// Config configures a Planner. The zero value of each field is its default.
type Config struct {
	// Store holds each thread's loaded tools, hidden exchanges and strategy pins. If
	// nil, tools are not managed: Plan returns no plan and every request goes as the
	// client sent it.
	Store state.Store
	// Chooser picks the strategy under StrategyAuto. If nil, auto is mask where the
	// backend constrains decoding and remove elsewhere. If it is an Observer, Observe
	// feeds it.
	Chooser Chooser
	// Tokens counts tokens for the budget guard, the catalog's size and /v1/tools. If
	// nil, four bytes a token, and no per-tool counts.
	Tokens *tokens.Counter
	// Policy filters tools by phase, for a profile set that brings none. If nil,
	// nothing is filtered.
	Policy *policy.Policy
	// Threads names conversations (salted ids, fingerprints).
	Threads state.Threads
	// Default is the profile of requests that name none, unless a set of SetProfiles
	// holds one called DefaultProfile. If nil, a profile without tools of its own.
	Default *Profile
	// CatalogChanges counts CatalogChanged by profile and kind. If nil, nothing is
	// counted.
	CatalogChanges *prometheus.CounterVec
	// Now is the clock. If nil, time.Now.
	Now func() time.Time
}

// Planner plans the tools of each request: its profile, its catalog (the profile's
// and the client's), its thread's loaded set and hidden exchanges, the strategy, and
// the tools array the engine sees. It owns the caches planning needs, each bounded.
type Planner struct {
	cfg      Config
	profiles atomic.Pointer[profileSet]
	fallback *Profile

	catalogs  catalogCache // whole-catalog tools arrays and sizes, by version
	tokens    tokenCounts  // /v1/tools's per-tool counts, by version
	toolCache toolCache    // clients' tools arrays parsed and indexed
	known     KnownTools   // tools arrays the envelope scan validated, per caller
}

// New returns a Planner for cfg.
func New(cfg Config) *Planner {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Default == nil {
		cfg.Default = &Profile{Name: DefaultProfile}
	}
	pl := &Planner{cfg: cfg, fallback: cfg.Default}
	pl.fallback.applyDefaults(cfg.Now())
	pl.SetProfiles(nil, nil, nil)
	return pl
}

// Manages says whether any request may be managed (a state store is configured).
func (pl *Planner) Manages() bool { return pl.cfg.Store != nil }

// Known is the memory of tools arrays the envelope scan validated, per caller.
func (pl *Planner) Known() *KnownTools { return &pl.known }

// Input is one request as the planner reads it: the client's Chat Completions body, what
// its door knows of the conversation, who sends it, and the route it takes.
type Input struct {
	// Header is the request's headers: X-Thread-Id, HeaderClientTools, and what
	// policies and profile variants match.
	Header http.Header
	// Env is the request's Chat Completions envelope.
	Env *oai.Envelope
	// Profile is the profile the request runs under (ProfileFor).
	Profile *Profile
	// Caller names the authenticated identity ("" for an anonymous caller): policies
	// match it, and the client's tools are cached within it.
	Caller string
	// Identity is what the request's thread is filed within: the caller, and its
	// profile unless the default. Empty files every caller's threads together.
	Identity string
	// Thread is the door's own conversation identity, if it has one.
	Thread string
	// ClientTools, Hidden and ClientSearch are the door's reading of the client's tools:
	// callable as declared (less Hidden, deferred and not found yet), and whether the
	// client runs tool discovery itself.
	ClientTools  bool
	Hidden       []string
	ClientSearch bool
	// Backend names the route's upstream; Upstream is its backend.
	Backend  string
	Upstream backends.Backend
}

// Thread names the request's conversation (state.Threads.Thread): the X-Thread-Id
// header, else the door's own conversation identity, else the body's
// metadata.thread_id, prompt_cache_key or user, within in.Identity; "" for none.
func (pl *Planner) Thread(in Input) string {
	env := in.Env
	metadata, _ := env.Object.Get("metadata")
	pck, _ := env.Object.Get("prompt_cache_key")
	user, _ := env.Object.Get("user")
	ti := state.ThreadInputOf(metadata, pck, user, env.Messages)
	// The thread is the caller's: its authenticated identity, never a header alone.
	ti.Header = in.Header.Get("X-Thread-Id")
	if ti.Header == "" {
		ti.Header = in.Thread // the door's own conversation identity
	}
	ti.Identity = in.Identity
	return pl.cfg.Threads.Thread(ti)
}

// StateUnavailable is the answer when the state store fails: a 503 that says what the
// gateway could not do, never a silent loss of the thread's loaded tools.
func StateUnavailable(err error) error {
	return &backends.Error{Status: http.StatusServiceUnavailable, Type: "server_error", Code: "state_unavailable", RetryAfter: "1",
		Message: "the gateway's state store is unavailable, so this conversation's loaded tools cannot be read or kept; retry shortly", Err: err}
}

func badRequest(msg, param string) error {
	return &backends.Error{Status: http.StatusBadRequest, Message: msg, Type: "invalid_request_error", Param: param}
}

// quote is s as a JSON string, for messages that name what a client sent.
func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
