package gateway

import (
	"context"
	"net/http"
	"strings"

	"github.com/maskgate/maskgate/backends"
	"github.com/maskgate/maskgate/tenant"
)

// anonymous labels, in metrics and logs, the one identity of a gateway without keys.
const anonymous = "anonymous"

// caller is who sent a request: the key it presented, or nil without keys configured.
type caller struct{ key *tenant.Key }

// name is the identity: the key's name, "" for the anonymous caller.
func (c caller) name() string {
	if c.key == nil {
		return ""
	}
	return c.key.Name
}

// label is the identity as metrics label it.
func (c caller) label() string {
	if c.key == nil {
		return anonymous
	}
	return c.key.Name
}

type callerKey struct{}

// callerOf is the caller authenticate put in ctx; anonymous if none.
func callerOf(ctx context.Context) caller {
	c, _ := ctx.Value(callerKey{}).(caller)
	return c
}

// authenticate admits requests that present a configured key, as
// "Authorization: Bearer KEY" (OpenAI clients) or "x-api-key: KEY" (Anthropic
// clients), and answers others 401. Without keys every request is the anonymous caller
// (the process refuses to listen beyond loopback then, unless told auth: none).
func (s *Server) authenticate(h http.HandlerFunc) http.HandlerFunc {
	if s.opt.Keys == nil {
		return h
	}
	return func(w http.ResponseWriter, r *http.Request) {
		presented, problem := presentedKey(r.Header)
		var key *tenant.Key
		if presented != "" {
			key = s.opt.Keys.Lookup(presented)
		}
		if key == nil {
			switch {
			case problem != "":
			case presented == "":
				problem = "missing API key: send it as Authorization: Bearer KEY (or x-api-key: KEY)"
			default:
				problem = "invalid API key: it is not one of this gateway's client keys"
			}
			s.metrics.rejected.WithLabelValues("none", "unauthenticated").Inc()
			w.Header().Set("WWW-Authenticate", `Bearer realm="maskgate"`)
			writeErrorAs(w, s.log, &apiError{Status: http.StatusUnauthorized, Type: "authentication_error", Code: "invalid_api_key", Message: problem}, envelopeFor(r))
			return
		}
		h(w, r.WithContext(context.WithValue(r.Context(), callerKey{}, caller{key: key})))
	}
}

// presentedKey reads the client key from Authorization (Bearer, case-insensitive
// scheme) or x-api-key. problem explains, for the client, a header it cannot use: a
// scheme other than Bearer, or two headers with two different keys.
func presentedKey(h http.Header) (key, problem string) {
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

// allow refuses a route the caller's key may not use: a model it does not list, or a
// backend outside its own. 403, not 404: the key is valid and the model exists, and
// the operator who reads the answer should see which of the two to change.
func (s *Server) allow(c caller, model string, rt route) error {
	if c.key == nil {
		return nil
	}
	if c.key.IsolateCache {
		// Config refuses this; a gateway built otherwise must not send an isolated
		// caller's prompt where it would share the cache.
		if ci, ok := rt.up.Backend.(backends.CacheIsolator); !ok || !ci.IsolatesCache() {
			s.metrics.rejected.WithLabelValues(c.label(), "forbidden").Inc()
			return &apiError{Status: http.StatusForbidden, Type: "permission_error", Param: "model", Code: "cache_isolation_unavailable",
				Message: "this API key's prompts must not share the engine's cache, and the backend serving " + quote(model) + " cannot keep them apart"}
		}
	}
	if c.key.AllowsModel(model) && c.key.AllowsBackend(rt.up.Name) {
		return nil
	}
	s.metrics.rejected.WithLabelValues(c.label(), "forbidden").Inc()
	return &apiError{Status: http.StatusForbidden, Type: "permission_error", Param: "model", Code: "model_not_allowed",
		Message: "this API key may not use the model " + quote(model) + "; GET /v1/models lists the models it may use"}
}

func quote(s string) string { return `"` + jsonEscape(s) + `"` }
