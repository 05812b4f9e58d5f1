package gateway

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/maskgate/maskgate/backends"
	"github.com/maskgate/maskgate/backends/oai"
	"github.com/maskgate/maskgate/gateway/observe"
)

// The OpenAI endpoints besides chat completions that engines answer themselves: an
// application whose OpenAI base URL is the gateway calls them too (embeddings for
// retrieval, legacy completions for fill-in-the-middle code completion, rerank and
// score). The gateway routes each by its body's model, behind the same keys, limits,
// backend queues and accounting as a chat request, and passes it to a backend that
// serves the endpoint (backends.EndpointPasser) as the client sent it: no tools are
// managed, the bytes are not re-encoded. Only a model name an alias maps is rewritten,
// and a stream that does not ask for its usage is asked for it (and its client gets
// none), as on Chat Completions.

// passedEndpoints are the endpoints served this way, each at POST /v1/{name}.
var passedEndpoints = []string{backends.EndpointEmbeddings, backends.EndpointCompletions, backends.EndpointRerank, backends.EndpointScore}

// endpointHandler serves POST /v1/{endpoint}.
func (s *Server) endpointHandler(endpoint string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		s.admitted(w, r, endpoint, writeError, func(r *http.Request, x *exchange) error { return s.passEndpoint(w, r, x, endpoint) })
	}
}

// endpointHead is what the gateway reads of a passed endpoint's body.
type endpointHead struct {
	model        string
	stream       bool // only a completions request streams
	includeUsage bool // stream_options.include_usage
	obj          *oai.Object
}

// readEndpointHead reads model, stream and stream_options.include_usage from body, a
// client's request to endpoint; anything else in it is the engine's to judge.
func readEndpointHead(endpoint string, body []byte) (*endpointHead, error) {
	if len(body) == 0 {
		return nil, &oai.RequestError{Message: "request body is empty; send a JSON " + endpoint + " request"}
	}
	obj, err := oai.ParseObject(body)
	if err != nil {
		var se *oai.SyntaxError
		if errors.As(err, &se) {
			return nil, &oai.RequestError{Message: "request body is not valid JSON: " + se.Error()}
		}
		return nil, &oai.RequestError{Message: "request body must be a JSON object"}
	}
	h := &endpointHead{obj: obj}
	raw, ok := obj.Get("model")
	if !ok || string(raw) == "null" {
		return nil, &oai.RequestError{Message: "you must provide a model parameter", Param: "model"}
	}
	if json.Unmarshal(raw, &h.model) != nil {
		return nil, &oai.RequestError{Message: "model must be a string, got " + clip(raw), Param: "model"}
	}
	if h.model == "" {
		return nil, &oai.RequestError{Message: "you must provide a model parameter", Param: "model"}
	}
	if endpoint != backends.EndpointCompletions {
		return h, nil // the engine refuses a stream it cannot give
	}
	if raw, ok := obj.Get("stream"); ok && string(raw) != "null" {
		if json.Unmarshal(raw, &h.stream) != nil {
			return nil, &oai.RequestError{Message: "stream must be a boolean, got " + clip(raw), Param: "stream"}
		}
	}
	if raw, ok := obj.Get("stream_options"); ok && string(raw) != "null" {
		so, err := oai.ParseObject(raw)
		if err != nil {
			return nil, &oai.RequestError{Message: "stream_options must be an object, got " + clip(raw), Param: "stream_options"}
		}
		if iu, ok := so.Get("include_usage"); ok && string(iu) != "null" {
			if json.Unmarshal(iu, &h.includeUsage) != nil {
				return nil, &oai.RequestError{Message: "stream_options.include_usage must be a boolean, got " + clip(iu), Param: "stream_options.include_usage"}
			}
		}
	}
	return h, nil
}

// clip is a JSON value short enough to quote in an error.
func clip(raw []byte) string {
	if len(raw) > 40 {
		return string(raw[:40]) + "..."
	}
	return string(raw)
}

// passEndpoint is the pipeline of a passed endpoint: route by model, the key's and the
// profile's admission, the backend's queue, one call, the answer relayed.
func (s *Server) passEndpoint(w http.ResponseWriter, r *http.Request, x *exchange, endpoint string) error {
	raw, held, err := s.readRequest(w, r)
	if err != nil {
		return err
	}
	if held != nil {
		x.held = held
		ctx, bw := backends.TrackBody(r.Context())
		x.bodyWrites, r = bw, r.WithContext(ctx)
	}
	head, err := readEndpointHead(endpoint, raw)
	if err != nil {
		return err
	}
	x.ops.Model = head.model
	prof, upstream, err := s.planner.ProfileFor(r.Header, x.caller.key, head.model)
	if err != nil {
		return err
	}
	x.prof = prof
	releaseProfile, err := admitProfile(r, prof, s.budgets, s.metrics.rejected, s.now)
	if err != nil {
		return err
	}
	defer releaseProfile()
	model, body := head.model, raw
	if upstream != "" { // an alias: the backend knows the model by this name
		model = upstream
		if body, err = oai.Set(body, "model", []byte(quote(upstream))); err != nil {
			return err
		}
		if head.obj, err = oai.ParseObject(body); err != nil {
			return err
		}
	}
	rt, ok := s.router.lookup(model)
	if !ok {
		return &apiError{Status: http.StatusNotFound, Type: "invalid_request_error", Param: "model", Code: "model_not_found",
			Message: fmt.Sprintf("the model %q is not served by this gateway; GET /v1/models lists the models it routes", model)}
	}
	if err := s.access.Allow(x.caller.key, model, rt.up.Name, rt.up.Backend); err != nil {
		return err
	}
	x.backend, x.model, x.stream = rt.up.Name, rt.label, head.stream
	p, ok := rt.up.Backend.(backends.EndpointPasser)
	if !ok || !p.PassesEndpoint(endpoint) {
		return &apiError{Status: http.StatusNotFound, Type: "invalid_request_error", Param: "model", Code: "unsupported_endpoint",
			Message: fmt.Sprintf("the model %q is served by backend %q%s, which does not serve POST /v1/%s; route it to an engine that does",
				model, rt.up.Name, kindOf(rt.up), endpoint)}
	}
	release, err := s.access.AdmitBackend(r.Context(), x.caller.key, rt.up.Name, rt.up.QueueTimeout)
	if err != nil {
		return err
	}
	defer release()
	if k := x.caller.key; k != nil && k.IsolateCache {
		x.cacheSalt = s.threads.CacheSalt(k.Name)
	}
	if x.hint = s.hintFor(rt.up); x.hint.named() && rt.up.HintValue == HintCaller { // no thread: one request, no conversation
		x.hint.value = s.threads.Caller(threadIdentity(x.caller.name(), prof.Name))
	} else {
		x.hint = routingHint{}
	}
	// The gateway counts a stream's tokens from its usage; a client that did not ask for
	// it gets the stream without it.
	dropUsage := head.stream && !head.includeUsage
	if dropUsage {
		body = requestUsage(head.obj)
	}

	uctx := s.ops.RoundBegun(r.Context(), &x.ops, observe.Round{N: -1, Backend: x.backend, Stream: x.stream})
	t := s.now()
	resp, err := p.PassEndpoint(x.hinted(uctx), endpoint, &backends.Request{Body: body, Model: model, Stream: head.stream, CacheSalt: x.cacheSalt})
	x.upstream += s.now().Sub(t)
	if err != nil {
		return err
	}
	copyHeaders(w.Header(), resp.Header)
	if resp.Stream != nil {
		stop := s.startKeepAlive(w, x, chatDoor{}, true) // a pause between the engine's chunks
		defer stop()
		return s.relay(w, r, x, resp, dropUsage)
	}
	var parsed struct {
		Usage *oai.Usage `json:"usage"`
	}
	if err := json.Unmarshal(resp.Body, &parsed); err != nil {
		return &apiError{Status: http.StatusBadGateway, Type: "upstream_error", Code: "upstream_invalid_response",
			Message: fmt.Sprintf("backend %q returned a response that is not JSON", x.backend), Err: err}
	}
	if u := parsed.Usage; u != nil && u.PromptTokens == 0 && u.TotalTokens > u.CompletionTokens {
		u.PromptTokens = u.TotalTokens - u.CompletionTokens // vLLM's rerank counts total_tokens alone
	}
	x.usage = parsed.Usage
	x.cache = cacheSource(resp.Cache, parsed.Usage)
	writeWhole(w, x, http.StatusOK, resp.Body)
	return nil
}

// kindOf is ` (kind K)` for an upstream whose kind is known.
func kindOf(up *Upstream) string {
	if up.Kind == "" {
		return ""
	}
	return " (kind " + up.Kind + ")"
}

// endpointList names the passed endpoints' paths, for the unknown-path error.
func endpointList() string {
	paths := make([]string, len(passedEndpoints))
	for i, e := range passedEndpoints {
		paths[i] = "/v1/" + e
	}
	return strings.Join(paths, ", ")
}
