package planner

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"sync/atomic"
	"time"

	"github.com/maskgate/maskgate/backends"
	"github.com/maskgate/maskgate/tenant"
	"github.com/maskgate/maskgate/toolsearch"
	"github.com/maskgate/maskgate/toolsearch/policy"
	"github.com/maskgate/maskgate/toolsearch/profile"
)

// HeaderProfile names the profile a request asks for, where its key may choose.
const HeaderProfile = "X-Maskgate-Profile"

// DefaultProfile is the profile of requests that name none.
const DefaultProfile = "default"

// Profile is one named tool setup: where its tools come from (a live catalog), how they
// are searched and managed, the tools the gateway runs itself, and the traffic limits
// every key shares under it.
type Profile struct {
	// Name labels it in errors and metrics, and filters match it.
	Name string
	// Catalog is the profile's catalog. Nil: no tools of its own, only clients'.
	Catalog *profile.Catalog
	// Hybrid, if set, fuses vector ranks into searches of Catalog's index while that
	// index is the one Hybrid was built on (a catalog that changed, or a variant, is
	// searched lexically).
	Hybrid *toolsearch.Hybrid
	// SearchTopK: results per search when the caller does not say. Zero: 5.
	SearchTopK int
	// SearchMinScore, when positive, also drops results under it (0–1); zero leaves the
	// search's own relative cut.
	SearchMinScore float64
	// Strategy, EagerBelow (zero: 20; negative: never eager by size), ToolMode (zero:
	// server), MaxRounds (zero: 4), AutoLoad, Progressive, ClientTools (zero: callable)
	// and TemplateOrder are as in gateway.Options.
	Strategy      Strategy
	EagerBelow    int
	ToolMode      string
	MaxRounds     int
	AutoLoad      bool
	Progressive   bool
	ClientTools   string
	TemplateOrder bool
	// Runner runs the calls to tools the gateway executes itself (MCP servers with
	// execute: gateway). Nil: none.
	Runner ToolRunner
	// Limits bound the traffic of the profile, every key together.
	Limits tenant.Limits

	limitKey *tenant.Key
	lastUse  atomic.Int64 // unix nanoseconds of the latest request
}

// LimitKey is the key the profile's limits are kept under; nil when it has none.
func (p *Profile) LimitKey() *tenant.Key { return p.limitKey }

// MarkUsed records that a request under the profile began at now (IdleFor).
func (p *Profile) MarkUsed(now time.Time) { p.lastUse.Store(now.UnixNano()) }

// IdleFor is how long since the profile's latest request began (since the process
// started, if none has).
func (p *Profile) IdleFor(now time.Time) time.Duration {
	return now.Sub(time.Unix(0, p.lastUse.Load()))
}

// ToolRunner runs tools on the gateway's side of the loop.
type ToolRunner interface {
	// Runs says whether the gateway runs calls to tool.
	Runs(tool string) bool
	// Run runs one call. Every failure is a result the model reads (isError), never an
	// error of the request. bearer is the caller's own token, for runners told to pass it.
	Run(ctx context.Context, tool string, args json.RawMessage, bearer string) (content string, isError bool)
}

// Alias maps a model name clients send to a profile and the backend model it stands for.
type Alias struct {
	Profile string
	Model   string
}

type profileSet struct {
	byName  map[string]*Profile
	aliases map[string]Alias
	rules   *policy.Policy
}

func (p *Profile) applyDefaults(now time.Time) {
	if p.lastUse.Load() == 0 {
		p.lastUse.Store(now.UnixNano())
	}
	if p.SearchTopK == 0 {
		p.SearchTopK = 5
	}
	if p.EagerBelow == 0 {
		p.EagerBelow = DefaultEagerBelow
	}
	if p.MaxRounds == 0 {
		p.MaxRounds = 4
	}
	if p.ToolMode == "" {
		p.ToolMode = ModeServer
	}
	if p.ClientTools == "" {
		p.ClientTools = ClientToolsCallable
	}
	if p.Limits != (tenant.Limits{}) {
		p.limitKey = &tenant.Key{Name: "profile " + p.Name, Limits: p.Limits}
	}
}

// DefaultEagerBelow is Profile.EagerBelow when zero.
const DefaultEagerBelow = 20

// eagerBySize says whether a catalog of n tools is sent eager for its size alone: under
// strategy auto, fewer than EagerBelow. A strategy the profile names wins, and a
// negative EagerBelow never holds.
func (p *Profile) eagerBySize(n int) bool {
	return (p.Strategy == StrategyAuto || p.Strategy == "") && n < p.EagerBelow
}

// Index is the profile's catalog index without variants, or nil.
func (p *Profile) Index() *toolsearch.Index {
	if p.Catalog == nil {
		return nil
	}
	return p.Catalog.Index()
}

// HybridFor is Hybrid when ix is the index it was built on.
func (p *Profile) HybridFor(ix *toolsearch.Index) *toolsearch.Hybrid {
	if p.Hybrid != nil && p.Hybrid.Index() == ix {
		return p.Hybrid
	}
	return nil
}

// SetProfiles replaces the profiles, aliases and filters at once (a configuration
// reload): a request already running keeps what it started with. A set without
// "default" keeps the Config's default profile; a nil rules, Config's Policy.
func (pl *Planner) SetProfiles(ps []*Profile, aliases map[string]Alias, rules *policy.Policy) {
	if rules == nil {
		rules = pl.cfg.Policy
	}
	set := &profileSet{byName: map[string]*Profile{}, aliases: aliases, rules: rules}
	set.byName[DefaultProfile] = pl.fallback
	for _, p := range ps {
		p.applyDefaults(pl.cfg.Now())
		set.byName[p.Name] = p
	}
	pl.profiles.Store(set)
}

// Profile returns the profile called name, for the wiring that updates catalogs.
func (pl *Planner) Profile(name string) (*Profile, bool) {
	p, ok := pl.profiles.Load().byName[name]
	return p, ok
}

// Profiles returns every profile of the current set, the default included, in no
// particular order.
func (pl *Planner) Profiles() []*Profile {
	set := pl.profiles.Load()
	out := make([]*Profile, 0, len(set.byName))
	for _, p := range set.byName {
		out = append(out, p)
	}
	return out
}

// ProfileFor picks a request's profile: the one its header names where its key may
// choose, else its key's, else the one whose alias its model is, else the default. It
// returns the model to send upstream when the model was an alias ("" otherwise). key is
// the caller's, nil for an anonymous caller.
func (pl *Planner) ProfileFor(h http.Header, key *tenant.Key, model string) (*Profile, string, error) {
	set := pl.profiles.Load()
	chosen := ""
	if name := h.Get(HeaderProfile); name != "" {
		if key != nil && name != orDefault(key.Profile) && !slices.Contains(key.Profiles, name) {
			return nil, "", &backends.Error{Status: http.StatusForbidden, Type: "permission_error", Code: "profile_not_allowed",
				Message: "this API key may not choose the profile " + quote(name) + " with " + HeaderProfile + "; its key's profiles lists those it may"}
		}
		chosen = name
	} else if key != nil && key.Profile != "" {
		chosen = key.Profile
	}
	upstream := ""
	if a, ok := set.aliases[model]; ok {
		if chosen != "" && chosen != a.Profile {
			return nil, "", &backends.Error{Status: http.StatusForbidden, Type: "permission_error", Param: "model", Code: "profile_not_allowed",
				Message: "the model " + quote(model) + " is an alias of the profile " + quote(a.Profile) + ", but this request runs under " + quote(chosen)}
		}
		// A key that lists the profiles it may choose reaches no other through an
		// alias, and a key's models allowlist holds for the name it sent as well as
		// for the backend model the alias stands for (checked after routing).
		if key != nil && len(key.Profiles) > 0 && a.Profile != DefaultProfile && !slices.Contains(key.Profiles, a.Profile) {
			return nil, "", &backends.Error{Status: http.StatusForbidden, Type: "permission_error", Param: "model", Code: "profile_not_allowed",
				Message: "the model " + quote(model) + " is an alias of the profile " + quote(a.Profile) + ", which this API key may not use; its key's profiles lists those it may"}
		}
		if key != nil && !key.AllowsModel(model) {
			return nil, "", &backends.Error{Status: http.StatusForbidden, Type: "permission_error", Param: "model", Code: "model_not_allowed",
				Message: "this API key may not use the model " + quote(model) + "; GET /v1/models lists the models it may use"}
		}
		chosen, upstream = a.Profile, a.Model
	}
	p, ok := set.byName[orDefault(chosen)]
	if !ok {
		return nil, "", &backends.Error{Status: http.StatusNotFound, Type: "invalid_request_error", Code: "profile_not_found",
			Message: "no profile is called " + quote(chosen) + "; the gateway's configuration lists its profiles"}
	}
	return p, upstream, nil
}

// CatalogChanged counts a change of a profile's catalog, for the wiring that applies it:
// kind is "append", "mask" or "break".
func (pl *Planner) CatalogChanged(profile, kind string) {
	if pl.cfg.CatalogChanges != nil {
		pl.cfg.CatalogChanges.WithLabelValues(profile, kind).Inc()
	}
}

func orDefault(name string) string {
	if name == "" {
		return DefaultProfile
	}
	return name
}
