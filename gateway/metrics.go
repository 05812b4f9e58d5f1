package gateway

import (
	"slices"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/maskgate/maskgate/backends"
)

// countFailure counts an upstream failure whose code is one the gateway diagnoses;
// other codes (an upstream's own, which it may spell as it likes) are not labels.
func (m *metrics) countFailure(backend, code string) {
	if slices.Contains(upstreamFailureCodes, code) {
		m.upstreamFails.WithLabelValues(backend, code).Inc()
	}
}

// metrics are the gateway's request metrics. Labels take bounded values only: configured
// backend names, configured model names (or "other"), strategies, status codes.
type metrics struct {
	requests        *prometheus.CounterVec
	duration        *prometheus.HistogramVec
	ttft            *prometheus.HistogramVec
	overhead        *prometheus.HistogramVec
	promptTokens    *prometheus.CounterVec
	cachedTokens    *prometheus.CounterVec
	completionToken *prometheus.CounterVec
	computedTokens  *prometheus.CounterVec
	disabledCalls   *prometheus.CounterVec
	upstreamFails   *prometheus.CounterVec
	panics          prometheus.Counter
	clientAborts    *prometheus.CounterVec // by reason: abortSlowReader only

	// Identities and admission. key is a configured key's name ("anonymous" without
	// keys, "none" before authentication): bounded by the configuration.
	rejected  *prometheus.CounterVec
	keyTokens *prometheus.CounterVec
	inFlight  *prometheus.GaugeVec
	queued    *prometheus.GaugeVec

	// Profiles: tools the gateway runs, and changes of their catalogs.
	toolRuns       *prometheus.HistogramVec
	catalogChanges *prometheus.CounterVec
}

// upstreamFailureCodes are the failures the gateway diagnoses in an upstream's answer,
// the values of maskgate_upstream_failures_total's code label.
var upstreamFailureCodes = []string{backends.CodeUnreachable, backends.CodeTimeout, backends.CodeTruncated,
	backends.CodeDisconnected, backends.CodeTooLarge}

// Outcomes of a call to a tool outside the allowed set (maskgate_disabled_tool_calls_total).
const (
	// outcomeRetried: the call was answered to the model as an error and the model
	// asked again, inside the request.
	outcomeRetried = "retried"
	// outcomeRefused: the model still made such calls when the rounds ran out; the
	// client got tool_rounds_exceeded instead of them.
	outcomeRefused = "refused"
)

const namespace = "maskgate"

func newMetrics(reg prometheus.Registerer) *metrics {
	m := &metrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: namespace, Name: "requests_total",
			Help: "Requests by backend, model, HTTP status (499: client went away) and door (chat_completions, responses, messages; embeddings, completions, rerank, score passed through).",
		}, []string{"backend", "model", "status", "door"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: namespace, Name: "request_duration_seconds",
			Help:    "Time from request arrival to the last byte of the answer.",
			Buckets: prometheus.ExponentialBuckets(0.005, 2.5, 12),
		}, []string{"backend", "model"}),
		ttft: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: namespace, Name: "time_to_first_token_seconds",
			Help:    "Time from request arrival to the first streamed chunk sent to the client.",
			Buckets: prometheus.ExponentialBuckets(0.005, 2.5, 12),
		}, []string{"backend", "model"}),
		overhead: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: namespace, Name: "gateway_overhead_seconds",
			Help:    "Time spent in the gateway itself: the request's duration less the time waiting on the backend and on the client.",
			Buckets: prometheus.ExponentialBuckets(0.000005, 2.5, 12),
		}, []string{"backend"}),
		promptTokens: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: namespace, Name: "prompt_tokens_total",
			Help: "Prompt tokens, as the backend reported them.",
		}, []string{"backend", "model", "strategy", "door"}),
		cachedTokens: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: namespace, Name: "cached_tokens_total",
			Help: "Prompt tokens served from the engine's prefix cache; the hit rate over any window is rate(cached)/rate(prompt). source is reported or estimated.",
		}, []string{"backend", "model", "strategy", "source", "door"}),
		completionToken: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: namespace, Name: "completion_tokens_total",
			Help: "Completion tokens, as the backend reported them.",
		}, []string{"backend", "model", "strategy", "door"}),
		computedTokens: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: namespace, Name: "computed_prompt_tokens_total",
			Help: "Prompt tokens the engine had to prefill: prompt less cached. source is reported or estimated.",
		}, []string{"backend", "model", "strategy", "source", "door"}),
		upstreamFails: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: namespace, Name: "upstream_failures_total",
			Help: "Requests an upstream failed, by backend and what went wrong: upstream_unreachable, upstream_timeout (no answer in time, or a stall past idle_timeout), upstream_truncated, upstream_disconnected, upstream_response_too_large.",
		}, []string{"backend", "code"}),
		panics: prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: namespace, Name: "panics_total",
			Help: "Requests whose handler panicked; each was answered 500 (or an error event) with its request id, and logged with the stack.",
		}),
		clientAborts: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: namespace, Name: "client_aborts_total",
			Help: "Requests the gateway cut because of their client, by reason: slow_reader (it took no bytes for server.write_timeout; its upstream request was cancelled and the connection closed).",
		}, []string{"reason"}),
		disabledCalls: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: namespace, Name: "disabled_tool_calls_total",
			Help: "Calls the model made to a tool outside the allowed set; none reaches the client. outcome is retried (answered to the model) or refused (rounds ran out).",
		}, []string{"backend", "strategy", "outcome"}),
		rejected: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: namespace, Name: "rejected_requests_total",
			Help: "Requests refused before they reached a backend, by key and reason: unauthenticated (401), forbidden (403), requests_per_minute, tokens_per_minute, max_concurrent (429), backend_queue_full, backend_queue_timeout (503).",
		}, []string{"key", "reason"}),
		keyTokens: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: namespace, Name: "key_tokens_total",
			Help: "Prompt and completion tokens charged to each key's tokens_per_minute.",
		}, []string{"key"}),
		inFlight: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Namespace: namespace, Name: "backend_in_flight_requests",
			Help: "Requests holding one of a backend's max_in_flight slots.",
		}, []string{"backend"}),
		queued: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Namespace: namespace, Name: "backend_queued_requests",
			Help: "Requests waiting in a backend's queue for a slot.",
		}, []string{"backend"}),
		toolRuns: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: namespace, Name: "tool_run_seconds",
			Help:    "Calls the gateway ran itself (MCP tools with execute: gateway), by profile and outcome (ok, or error: the tool failed, timed out or its server was down; the model got the error as the result).",
			Buckets: prometheus.ExponentialBuckets(0.005, 4, 8),
		}, []string{"profile", "outcome"}),
		catalogChanges: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: namespace, Name: "catalog_changes_total",
			Help: "Changes of a profile's catalog while serving (an MCP server's list_changed, a reload), by kind: append (new tools after the old; cached prefixes kept), mask (tools gone, kept masked; prefixes kept), break (a tool changed in place or masked ones were dropped: the prefix moved).",
		}, []string{"profile", "kind"}),
	}
	if reg != nil {
		reg.MustRegister(m.requests, m.duration, m.ttft, m.overhead, m.promptTokens, m.cachedTokens, m.completionToken,
			m.computedTokens, m.disabledCalls, m.upstreamFails, m.panics, m.clientAborts, m.rejected, m.keyTokens, m.inFlight, m.queued,
			m.toolRuns, m.catalogChanges)
	}
	m.clientAborts.WithLabelValues(abortSlowReader) // shown at 0 before the first
	return m
}
