package gateway

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/maskgate/maskgate/backends"
	"github.com/maskgate/maskgate/backends/oai"
	"github.com/maskgate/maskgate/kvcache"
)

// Response headers every chat answer carries.
const (
	HeaderStrategy = "X-Maskgate-Strategy"
	HeaderCache    = "X-Maskgate-Cache"
	// The request's cache accounting: headers on a whole answer, HTTP trailers after a
	// stream (its usage is known only at the end). Computed is prompt less cached: what
	// the engine had to prefill. Absent when the backend reported no usage.
	HeaderPromptTokens   = "X-Maskgate-Prompt-Tokens"
	HeaderCachedTokens   = "X-Maskgate-Cached-Tokens"
	HeaderComputedTokens = "X-Maskgate-Computed-Tokens"
)

// exchange is the bookkeeping of one chat request, turned into metrics when it ends.
type exchange struct {
	start     time.Time
	backend   string
	model     string // metric label
	strategy  string
	status    int
	committed bool // response headers are out: errors can only go into the stream
	stream    bool

	upstream time.Duration // time blocked on the backend
	client   time.Duration // time blocked writing to the client
	ttft     time.Duration

	usage *oai.Usage
	cache backends.CacheSource
	plan  *toolPlan // nil when tools are not managed

	caller    caller
	cacheSalt string // sent to the backend when the caller's key isolates its cache
}

func (s *Server) chatCompletions(w http.ResponseWriter, r *http.Request) {
	x := &exchange{start: s.now(), backend: "none", model: "none", strategy: "none", status: http.StatusOK,
		caller: callerOf(r.Context())}
	release, err := s.admitKey(x.caller)
	if err == nil {
		defer release()
		err = s.chat(w, r, x)
		s.charge(x.caller, x.usage)
	}
	if err != nil {
		if x.committed {
			// Already reported inside the stream; keep the failure in logs and metrics.
			ae := toAPIError(err)
			x.status = ae.Status
			s.log.Warn("stream failed", "backend", x.backend, "status", ae.Status, "error", err)
		} else {
			x.status = writeError(w, s.log, err).Status
		}
	}
	if x.committed && x.stream {
		setAccounting(w.Header(), http.TrailerPrefix, x.usage, x.cache)
	}
	s.observe(x)
	s.record(x)
}

// setAccounting writes the request's prompt, cached and computed tokens under prefix
// ("" for headers, http.TrailerPrefix for trailers).
func setAccounting(h http.Header, prefix string, u *oai.Usage, source backends.CacheSource) {
	if u == nil {
		return
	}
	a := accounting(u, source)
	h.Set(prefix+HeaderPromptTokens, strconv.Itoa(a.Prompt))
	h.Set(prefix+HeaderCachedTokens, strconv.Itoa(a.Cached))
	h.Set(prefix+HeaderComputedTokens, strconv.Itoa(a.Computed))
}

// accounting reads a usage as kvcache does: the cached count is the engine's report or,
// where the backend said so, its estimate, clamped to the prompt so that computed is
// never negative.
func accounting(u *oai.Usage, source backends.CacheSource) kvcache.Usage {
	reported, estimated := kvcache.NotKnown, kvcache.NotKnown
	if d := u.PromptTokensDetails; d != nil {
		if source == backends.CacheEstimated {
			estimated = max(d.CachedTokens, 0)
		} else {
			reported = max(d.CachedTokens, 0)
		}
	}
	return kvcache.Account(u.PromptTokens, reported, estimated)
}

func (s *Server) chat(w http.ResponseWriter, r *http.Request, x *exchange) error {
	body, err := readBody(w, r, s.opt.MaxRequestBytes)
	if err != nil {
		if r.Context().Err() != nil {
			return r.Context().Err()
		}
		return err
	}
	env, err := oai.ParseEnvelope(body)
	if err != nil {
		return err
	}
	rt, ok := s.router.lookup(env.Model)
	if !ok {
		return &apiError{Status: http.StatusNotFound, Type: "invalid_request_error", Param: "model", Code: "model_not_found",
			Message: fmt.Sprintf("the model %q is not served by this gateway; GET /v1/models lists the models it routes", env.Model)}
	}
	if err := s.allow(x.caller, env.Model, rt); err != nil {
		return err
	}
	x.backend, x.model, x.stream = rt.up.Name, rt.label, env.Stream
	x.strategy = "eager" // every tool the client sent reaches the model unchanged
	release, err := s.admitBackend(r.Context(), rt.up, x.caller)
	if err != nil {
		return err
	}
	defer release()
	if k := x.caller.key; k != nil && k.IsolateCache {
		x.cacheSalt = s.threads.CacheSalt(k.Name)
	}

	plan, err := s.planTools(r, env, body, rt.up.Name, rt.up.Backend)
	if err != nil {
		return err
	}
	obj := env.Object
	x.plan = plan
	if plan != nil {
		tools := s.toolsArray(plan)
		if err := s.checkBudget(rt.up, env.Object, tools, plan.messages); err != nil {
			return err
		}
		x.strategy = plan.strategy
		if plan.thread != "" {
			w.Header().Set(HeaderThread, plan.thread)
		}
		if s.opt.ToolMode != ModeClient {
			return s.serverLoop(w, r, x, rt.up.Backend, env, plan)
		}
		if body, err = s.upstreamBody(env.Object, plan, env.Stream); err != nil {
			return err
		}
		if obj, err = oai.ParseObject(body); err != nil {
			return err
		}
	}

	if plan == nil {
		msgs := make([][]byte, len(env.Messages))
		for i, m := range env.Messages {
			msgs[i] = m
		}
		if err := s.checkBudget(rt.up, env.Object, env.Tools, msgs); err != nil {
			return err
		}
	}

	// The gateway needs usage on every stream for its accounting; a client that did not
	// ask for it gets the stream without it.
	dropUsage := false
	if env.Stream && !env.IncludeUsage {
		body = requestUsage(obj)
		dropUsage = true
	}

	t := s.now()
	req := s.backendRequest(x, plan, body, env.Model, env.Stream)
	resp, err := rt.up.Backend.ChatCompletion(r.Context(), req)
	x.upstream += s.now().Sub(t)
	if err != nil {
		return err
	}
	x.strategy = backendLabel(plan, x.strategy, resp.Strategy)
	copyHeaders(w.Header(), resp.Header)
	if resp.Stream != nil {
		return s.relay(w, r, x, resp, dropUsage)
	}
	return s.whole(w, x, resp)
}

// requestUsage sets stream_options.include_usage to true, keeping any other options.
func requestUsage(req *oai.Object) []byte {
	opts := []byte(`{"include_usage":true}`)
	if cur, ok := req.Get("stream_options"); ok {
		if so, err := oai.ParseObject(cur); err == nil {
			opts = so.Set("include_usage", []byte("true"))
		}
	}
	return req.Set("stream_options", opts)
}

// readBody reads the request body up to limit, in one allocation when the client sent
// Content-Length.
func readBody(w http.ResponseWriter, r *http.Request, limit int64) ([]byte, error) {
	rd := http.MaxBytesReader(w, r.Body, limit)
	if n := r.ContentLength; n > 0 && n <= limit {
		buf := make([]byte, n)
		if _, err := io.ReadFull(rd, buf); err != nil {
			return nil, err
		}
		var probe [1]byte
		if _, err := io.ReadFull(rd, probe[:]); err == io.EOF {
			return buf, nil
		} else if err != nil {
			return nil, err
		}
		// More than announced: net/http normally refuses this, but read it all.
		rest, err := io.ReadAll(rd)
		return append(append(buf, probe[0]), rest...), err
	}
	return io.ReadAll(rd)
}

// whole answers with a complete chat.completion object, byte for byte as the backend
// produced it.
func (s *Server) whole(w http.ResponseWriter, x *exchange, resp *backends.Response) error {
	var parsed struct {
		Usage *oai.Usage `json:"usage"`
	}
	if err := json.Unmarshal(resp.Body, &parsed); err != nil {
		return &apiError{Status: http.StatusBadGateway, Type: "upstream_error", Code: "upstream_invalid_response",
			Message: fmt.Sprintf("backend %q returned a response that is not JSON", x.backend), Err: err}
	}
	x.usage = parsed.Usage
	x.cache = cacheSource(resp.Cache, parsed.Usage)
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(resp.Body)))
	h.Set(HeaderStrategy, x.strategy)
	h.Set(HeaderCache, string(x.cache))
	setAccounting(h, "", x.usage, x.cache)
	x.committed = true
	w.WriteHeader(http.StatusOK)
	t := s.now()
	_, err := w.Write(resp.Body)
	x.client += s.now().Sub(t)
	if err != nil {
		x.status = StatusClientClosed
	}
	return nil
}

// cacheSource is the backend's own word, else "reported" when the usage carries the
// engine's cached token count.
func cacheSource(declared backends.CacheSource, u *oai.Usage) backends.CacheSource {
	if declared != "" {
		return declared
	}
	if u != nil && u.PromptTokensDetails != nil {
		return backends.CacheReported
	}
	return backends.CacheUnknown
}

func copyHeaders(dst, src http.Header) {
	for k, vs := range src {
		for _, v := range vs {
			dst.Add(k, v)
		}
	}
}

// record turns the exchange into metrics and a log line.
func (s *Server) record(x *exchange) {
	total := s.now().Sub(x.start)
	m := s.metrics
	m.requests.WithLabelValues(x.backend, x.model, strconv.Itoa(x.status)).Inc()
	if x.backend == "none" {
		return // refused before routing: nothing was sent anywhere
	}
	m.duration.WithLabelValues(x.backend, x.model).Observe(total.Seconds())
	if own := total - x.upstream - x.client; own >= 0 {
		m.overhead.WithLabelValues(x.backend).Observe(own.Seconds())
	}
	if x.stream && x.ttft > 0 {
		m.ttft.WithLabelValues(x.backend, x.model).Observe(x.ttft.Seconds())
	}
	if u := x.usage; u != nil {
		m.promptTokens.WithLabelValues(x.backend, x.model, x.strategy).Add(float64(u.PromptTokens))
		m.completionToken.WithLabelValues(x.backend, x.model, x.strategy).Add(float64(u.CompletionTokens))
		a := accounting(u, x.cache)
		if u.PromptTokensDetails != nil {
			m.cachedTokens.WithLabelValues(x.backend, x.model, x.strategy, string(x.cache)).Add(float64(a.Cached))
		}
		m.computedTokens.WithLabelValues(x.backend, x.model, x.strategy, string(x.cache)).Add(float64(a.Computed))
	}
	s.log.Debug("chat", "key", x.caller.label(), "backend", x.backend, "model", x.model, "status", x.status, "stream", x.stream,
		"duration", total, "upstream", x.upstream)
}
