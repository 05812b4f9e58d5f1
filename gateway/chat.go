package gateway

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/maskgate/maskgate/backends"
	"github.com/maskgate/maskgate/backends/oai"
	"github.com/maskgate/maskgate/backends/replicas"
	"github.com/maskgate/maskgate/gateway/observe"
	"github.com/maskgate/maskgate/gateway/planner"
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
	id        string // the request id
	start     time.Time
	now       func() time.Time // the server's clock, for what the request's writes take
	backend   string
	reasoning *reasoningName // the backend's name for reasoning in history; nil before routing
	// historyReasoning: some message the client sent mentions reasoning, so the body may
	// need it renamed for the backend. The gateway's own messages (hidden rounds,
	// spliced exchanges) carry none, and with the whole catalog spliced in, looking
	// for it in the backend's body cost 15 % of a managed mask request.
	historyReasoning bool
	model            string // metric label
	strategy         Strategy
	status           int
	committed        bool // response headers are out: errors can only go into the stream
	stream           bool
	keep             *keepAlive // the stream's keep-alives, nil when none: every write takes its lock

	// effort is the client's reasoning switch where the chat body cannot carry it (a
	// Messages request's thinking: request.effort), for backends.Request.ReasoningEffort.
	effort string

	upstream time.Duration // time blocked on the backend
	client   time.Duration // time blocked writing to the client
	ttft     time.Duration

	usage *oai.Usage
	// promptEstimate, set once the request is about to reach the engine, counts its
	// prompt for a request that ends without a usage (chargeAbandoned).
	promptEstimate func() int
	cache          backends.CacheSource
	plan           *planner.Plan // nil when tools are not managed
	// engine is the engine's own timings of each round that reported them
	// (backends.Timings): what the auto strategy learns the engine's costs from.
	engine []backends.Timings

	maxHeld int64 // what a tool loop may hold of one streamed round (the backend's MaxResponseBytes)

	caller    caller
	replica   string        // the replica that answered, for X-Maskgate-Replica where the loop ran
	lastFrame time.Duration // from the start to the latest frame written to the client
	prof      *Profile      // the request's profile, once run chose it
	cacheSalt string        // sent to the backend when the caller's key isolates its cache
	hint      routingHint   // the header naming the conversation upstream, if the backend has one

	door string  // the API surface the request came through (a metric label)
	held *[]byte // the recycled buffer the request body is in, released when serve ends (bodyReader)
	// bodyWrites counts the upstream writes of a body in held still under way.
	bodyWrites *backends.BodyTracker

	ops observe.Request // the operator's view's notes of the request (observer.go)
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

// requestUsage sets stream_options.include_usage to true, keeping any other options. A
// body without stream_options gets it written at its end, in the spare room its buffer
// keeps (bodyReader's editSlack), so a pass-through stream costs no copy of its body;
// req is spent after it (oai.Object.SetEnd).
func requestUsage(req *oai.Object) []byte {
	return req.SetEnd("stream_options", req.UsageOptions())
}

// whole answers with a complete chat.completion object, byte for byte as the backend
// produced it.
func whole(w http.ResponseWriter, x *exchange, resp *backends.Response) error {
	var parsed struct {
		Usage *oai.Usage `json:"usage"`
	}
	if err := json.Unmarshal(resp.Body, &parsed); err != nil {
		return &apiError{Status: http.StatusBadGateway, Type: "upstream_error", Code: "upstream_invalid_response",
			Message: fmt.Sprintf("backend %q returned a response that is not JSON", x.backend), Err: err}
	}
	x.usage = parsed.Usage
	x.cache = cacheSource(resp.Cache, parsed.Usage)
	writeWhole(w, x, http.StatusOK, resp.Body)
	return nil
}

// writeWhole sends a whole answer, whatever its door, with the gateway's headers:
// strategy, cache source and the accounting of x.usage. A failed write is the client
// gone (499 in logs and metrics).
func writeWhole(w http.ResponseWriter, x *exchange, status int, body []byte) {
	if x.cache == "" {
		x.cache = backends.CacheUnknown
	}
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(body)))
	h.Set(HeaderStrategy, string(x.strategy))
	h.Set(HeaderCache, string(x.cache))
	setReplica(h, x)
	setAccounting(h, "", x.usage, x.cache)
	x.committed = true
	w.WriteHeader(status)
	t := x.now()
	_, err := w.Write(body)
	x.client += x.now().Sub(t)
	if err != nil {
		x.status = StatusClientClosed
	}
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

// setReplica names the replica that answered a request the loop ran (a relayed answer
// carries the backend's own header).
func setReplica(h http.Header, x *exchange) {
	if x.replica != "" && h.Get(replicas.HeaderReplica) == "" {
		h.Set(replicas.HeaderReplica, x.replica)
	}
}

// copyHeaders passes the backend's headers on; its request id, since X-Request-Id is
// the gateway's own, as X-Upstream-Request-Id.
func copyHeaders(dst, src http.Header) {
	for k, vs := range src {
		if k == HeaderRequestID {
			k = HeaderUpstreamRequestID
		}
		for _, v := range vs {
			dst.Add(k, v)
		}
	}
}

// record turns the exchange into metrics and a log line.
func (s *Server) record(x *exchange) {
	total := s.now().Sub(x.start)
	defer s.ops.RequestEnded(&x.ops, ended(x, total)) // the request log, live statistics and spans, after the metrics
	m := s.metrics
	m.requests.WithLabelValues(x.backend, x.model, strconv.Itoa(x.status), x.door).Inc()
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
		m.promptTokens.WithLabelValues(x.backend, x.model, string(x.strategy), x.door).Add(float64(u.PromptTokens))
		m.completionToken.WithLabelValues(x.backend, x.model, string(x.strategy), x.door).Add(float64(u.CompletionTokens))
		a := accounting(u, x.cache)
		if u.PromptTokensDetails != nil {
			m.cachedTokens.WithLabelValues(x.backend, x.model, string(x.strategy), string(x.cache), x.door).Add(float64(a.Cached))
		}
		m.computedTokens.WithLabelValues(x.backend, x.model, string(x.strategy), string(x.cache), x.door).Add(float64(a.Computed))
	}
	s.log.Debug("chat", "request_id", x.id, "key", x.caller.label(), "backend", x.backend, "model", x.model, "door", x.door, "status", x.status, "stream", x.stream,
		"duration", total, "upstream", x.upstream)
}
