package access

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"strings"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/maskgate/maskgate/backends"
	"github.com/maskgate/maskgate/tenant"
)

// Anonymous labels, in metrics and logs, the one identity of a gateway without keys.
const Anonymous = "anonymous"

// Guard is the edge of every /v1/ request: authentication, per-key limits and the
// per-backend admission gate.
type Guard struct {
	// Keys are the client keys requests must present (401 without one). If nil, every
	// request is the anonymous caller, and what a web page would send is refused
	// (browser.go): a Host that is not a loopback name (unless AnyHost), a cross-site
	// Origin or Sec-Fetch-Site, a POST body that is not JSON.
	Keys *tenant.Keyring
	// AnyHost, without Keys, accepts any Host: the operator serves without keys beyond
	// loopback on purpose (auth: none). The other browser checks still hold.
	AnyHost bool
	// Budgets enforces each key's limits. If nil, nothing is limited.
	Budgets tenant.Budgets
	// Gates are the backends' admission gates, by upstream name. A backend without one
	// takes every request.
	Gates map[string]*tenant.Gate
	// Metrics count what the guard refused, admitted and charged. A nil vector counts
	// nothing.
	Metrics Metrics
	// Log receives what the guard cannot tell the client (tokens it could not charge).
	// If nil, it is discarded.
	Log *slog.Logger
	// Refuse writes err (a *backends.Error) before anything else was written, in the
	// envelope of r's door. If nil, a plain-text status.
	Refuse func(w http.ResponseWriter, r *http.Request, err error)
}

// Metrics are the vectors a Guard counts into; each labelled as the gateway documents
// them (key and reason; upstream).
type Metrics struct {
	Rejected  *prometheus.CounterVec // by key and reason
	KeyTokens *prometheus.CounterVec // by key
	InFlight  *prometheus.GaugeVec   // by upstream
	Queued    *prometheus.GaugeVec   // by upstream
}

type keyCtx struct{}

// KeyOf is the key Authenticate put in ctx; nil for the anonymous caller.
func KeyOf(ctx context.Context) *tenant.Key {
	k, _ := ctx.Value(keyCtx{}).(*tenant.Key)
	return k
}

// WithKey is ctx carrying k as its caller's key, as Authenticate leaves it.
func WithKey(ctx context.Context, k *tenant.Key) context.Context {
	return context.WithValue(ctx, keyCtx{}, k)
}

// Label is the identity of k as metrics and logs label it.
func Label(k *tenant.Key) string {
	if k == nil {
		return Anonymous
	}
	return k.Name
}

// Authenticate admits requests that present a configured key, as
// "Authorization: Bearer KEY" (OpenAI clients) or "x-api-key: KEY" (Anthropic
// clients), and answers others 401. Without keys every request is the anonymous caller
// (the process refuses to listen beyond loopback then, unless told auth: none), and a
// request a web page would send is refused with 403 (keylessBrowser).
func (g *Guard) Authenticate(h http.HandlerFunc) http.HandlerFunc {
	if g.Keys == nil {
		return g.keylessBrowser(h)
	}
	return func(w http.ResponseWriter, r *http.Request) {
		presented, problem := PresentedKey(r.Header)
		var key *tenant.Key
		if presented != "" {
			key = g.Keys.Lookup(presented)
		}
		if key == nil {
			switch {
			case problem != "":
			case presented == "":
				problem = "missing API key: send it as Authorization: Bearer KEY (or x-api-key: KEY)"
			default:
				problem = "invalid API key: it is not one of this gateway's client keys"
			}
			g.reject("none", "unauthenticated")
			w.Header().Set("WWW-Authenticate", `Bearer realm="maskgate"`)
			g.refuse(w, r, &backends.Error{Status: http.StatusUnauthorized, Type: "authentication_error", Code: "invalid_api_key", Message: problem})
			return
		}
		h(w, r.WithContext(WithKey(r.Context(), key)))
	}
}

func (g *Guard) refuse(w http.ResponseWriter, r *http.Request, err *backends.Error) {
	if g.Refuse != nil {
		g.Refuse(w, r, err)
		return
	}
	http.Error(w, err.Message, err.Status)
}

func (g *Guard) log() *slog.Logger {
	if g.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return g.Log
}

// reject counts a refusal of key's request for reason.
func (g *Guard) reject(key, reason string) {
	if g.Metrics.Rejected != nil {
		g.Metrics.Rejected.WithLabelValues(key, reason).Inc()
	}
}

// PresentedKey reads the client key from Authorization (Bearer, case-insensitive
// scheme) or x-api-key. problem explains, for the client, a header it cannot use: a
// scheme other than Bearer, or two headers with two different keys.
func PresentedKey(h http.Header) (key, problem string) {
	bearer := ""
	if auth := h.Get("Authorization"); auth != "" {
		scheme, cred, _ := strings.Cut(auth, " ")
		if !strings.EqualFold(scheme, "Bearer") || strings.TrimSpace(cred) == "" {
			return "", "malformed Authorization header: send Authorization: Bearer KEY"
		}
		bearer = strings.TrimSpace(cred)
	}
	apiKey := strings.TrimSpace(h.Get("x-api-key"))
	switch {
	case bearer != "" && apiKey != "" && bearer != apiKey:
		return "", "Authorization and x-api-key carry two different keys: send one"
	case bearer != "":
		return bearer, ""
	}
	return apiKey, ""
}

// Allow refuses a route the caller's key may not use: a model it does not list, or a
// backend (upstream, served by be) outside its own. 403, not 404: the key is valid and
// the model exists, and the operator who reads the answer should see which of the two
// to change.
func (g *Guard) Allow(k *tenant.Key, model, upstream string, be backends.Backend) error {
	if k == nil {
		return nil
	}
	if k.IsolateCache {
		// Config refuses this; a gateway built otherwise must not send an isolated
		// caller's prompt where it would share the cache.
		if ci, ok := be.(backends.CacheIsolator); !ok || !ci.IsolatesCache() {
			g.reject(k.Name, "forbidden")
			return &backends.Error{Status: http.StatusForbidden, Type: "permission_error", Param: "model", Code: "cache_isolation_unavailable",
				Message: "this API key's prompts must not share the engine's cache, and the backend serving " + quote(model) + " cannot keep them apart"}
		}
	}
	if k.AllowsModel(model) && k.AllowsBackend(upstream) {
		return nil
	}
	g.reject(k.Name, "forbidden")
	return &backends.Error{Status: http.StatusForbidden, Type: "permission_error", Param: "model", Code: "model_not_allowed",
		Message: "this API key may not use the model " + quote(model) + "; GET /v1/models lists the models it may use"}
}

// quote is s as a JSON string, for messages that name what the client sent.
func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
