package access

import (
	"context"
	"errors"
	"math"
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/maskgate/maskgate/backends"
	"github.com/maskgate/maskgate/backends/oai"
	"github.com/maskgate/maskgate/tenant"
)

// DefaultQueueTimeout is how long a request waits in a backend's queue when its
// upstream says nothing.
const DefaultQueueTimeout = 30 * time.Second

// Admit takes one request from k's limits, or returns the 429 that says which and when
// to retry. release ends the request's hold on its key's concurrency.
func (g *Guard) Admit(ctx context.Context, k *tenant.Key) (release func(), err error) {
	if g.Budgets == nil {
		return func() {}, nil
	}
	release, refused, err := g.Budgets.Admit(ctx, k)
	if err != nil {
		return nil, Unavailable(err)
	}
	if refused == nil {
		return release, nil
	}
	g.reject(Label(k), refused.Reason)
	msg := map[string]string{
		tenant.ReasonRequests:    "this API key has used its " + strconv.Itoa(refused.Limit) + " requests per minute",
		tenant.ReasonTokens:      "this API key has used its " + strconv.Itoa(refused.Limit) + " tokens per minute",
		tenant.ReasonConcurrency: "this API key already has " + strconv.Itoa(refused.Limit) + " requests in flight, its limit",
	}[refused.Reason]
	return nil, &backends.Error{Status: http.StatusTooManyRequests, Type: "rate_limit_error", Code: "rate_limit_exceeded",
		Message: msg + "; retry after the time in Retry-After", RetryAfter: RetryAfter(refused.RetryAfter), Err: refused}
}

// Charge spends the answer's tokens from k's budget, and counts them. A failure to
// charge is only logged: the answer is out, and the next admissions will show it.
func (g *Guard) Charge(ctx context.Context, k *tenant.Key, u *oai.Usage) {
	if u == nil {
		return
	}
	n := u.PromptTokens + u.CompletionTokens
	if g.Budgets != nil {
		if err := g.Budgets.Charge(ctx, k, n); err != nil {
			// The answer is out; the tokens go uncharged. Logged: a store that keeps failing
			// shows in the 503s of the next admissions.
			g.log().Warn("tokens not charged: shared limits unavailable", "key", Label(k), "tokens", n, "error", err)
		}
	}
	if n > 0 && g.Metrics.KeyTokens != nil {
		g.Metrics.KeyTokens.WithLabelValues(Label(k)).Add(float64(n))
	}
}

// Unavailable is the answer when shared limits cannot be read: nothing past them is let
// through unmetered.
func Unavailable(err error) error {
	return &backends.Error{Status: http.StatusServiceUnavailable, Type: "server_error", Code: "limits_unavailable", RetryAfter: "1",
		Message: "the gateway's shared rate limits are unavailable, so the request cannot be admitted; retry shortly", Err: err}
}

// AdmitBackend takes a slot of upstream's gate, waiting at most wait (if zero,
// DefaultQueueTimeout) in its queue, or returns the 503 that says the backend is full.
// Without a gate every request goes through.
func (g *Guard) AdmitBackend(ctx context.Context, k *tenant.Key, upstream string, wait time.Duration) (func(), error) {
	gate := g.Gates[upstream]
	if gate == nil {
		return func() {}, nil
	}
	if wait <= 0 {
		wait = DefaultQueueTimeout
	}
	qctx, cancel := context.WithTimeoutCause(ctx, wait, tenant.ErrQueueTimeout)
	defer cancel()
	g.gauge(g.Metrics.Queued, upstream, 1)
	free, err := gate.Acquire(qctx)
	g.gauge(g.Metrics.Queued, upstream, -1)
	if err == nil {
		g.gauge(g.Metrics.InFlight, upstream, 1)
		return func() {
			free()
			g.gauge(g.Metrics.InFlight, upstream, -1)
		}, nil
	}
	if ctx.Err() != nil {
		return nil, ctx.Err() // the client left while it waited
	}
	reason, msg := tenant.ReasonQueueWait, "no slot freed within "+wait.String()
	if errors.Is(err, tenant.ErrQueueFull) {
		reason, msg = tenant.ReasonQueueFull, "its "+strconv.Itoa(gate.Cap())+" slots and its queue are full"
	}
	g.reject(Label(k), reason)
	return nil, &backends.Error{Status: http.StatusServiceUnavailable, Type: "server_error", Code: "backend_busy",
		Message:    "backend " + quote(upstream) + " is busy: " + msg + "; retry after the time in Retry-After, or raise its max_in_flight",
		RetryAfter: "1", Err: err}
}

// gauge moves upstream's gauge in v by d.
func (g *Guard) gauge(v *prometheus.GaugeVec, upstream string, d float64) {
	if v != nil {
		v.WithLabelValues(upstream).Add(d)
	}
}

// RetryAfter writes d as Retry-After's whole seconds, rounded up, at least 1.
func RetryAfter(d time.Duration) string {
	return strconv.Itoa(max(1, int(math.Ceil(d.Seconds()))))
}
