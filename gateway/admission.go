package gateway

import (
	"context"
	"errors"
	"math"
	"net/http"
	"strconv"
	"time"

	"github.com/maskgate/maskgate/backends/oai"
	"github.com/maskgate/maskgate/tenant"
)

// admitKey takes one request from the caller's limits, or returns the 429 that says
// which and when to retry. release ends the request's hold on its key's concurrency.
func (s *Server) admitKey(ctx context.Context, c caller) (release func(), err error) {
	release, refused, err := s.budgets.Admit(ctx, c.key)
	if err != nil {
		return nil, limitsUnavailable(err)
	}
	if refused == nil {
		return release, nil
	}
	s.metrics.rejected.WithLabelValues(c.label(), refused.Reason).Inc()
	msg := map[string]string{
		tenant.ReasonRequests:    "this API key has used its " + strconv.Itoa(refused.Limit) + " requests per minute",
		tenant.ReasonTokens:      "this API key has used its " + strconv.Itoa(refused.Limit) + " tokens per minute",
		tenant.ReasonConcurrency: "this API key already has " + strconv.Itoa(refused.Limit) + " requests in flight, its limit",
	}[refused.Reason]
	return nil, &apiError{Status: http.StatusTooManyRequests, Type: "rate_limit_error", Code: "rate_limit_exceeded",
		Message: msg + "; retry after the time in Retry-After", RetryAfter: retryAfter(refused.RetryAfter), Err: refused}
}

// charge spends the answer's tokens from the caller's budget, and counts them.
func (s *Server) charge(ctx context.Context, c caller, u *oai.Usage) {
	if u == nil {
		return
	}
	n := u.PromptTokens + u.CompletionTokens
	if err := s.budgets.Charge(ctx, c.key, n); err != nil {
		// The answer is out; the tokens go uncharged. Logged: a store that keeps failing
		// shows in the 503s of the next admissions.
		s.log.Warn("tokens not charged: shared limits unavailable", "key", c.label(), "tokens", n, "error", err)
	}
	if n > 0 {
		s.metrics.keyTokens.WithLabelValues(c.label()).Add(float64(n))
	}
}

// limitsUnavailable is the answer when shared limits cannot be read: nothing past them
// is let through unmetered.
func limitsUnavailable(err error) error {
	return &apiError{Status: http.StatusServiceUnavailable, Type: "server_error", Code: "limits_unavailable", RetryAfter: "1",
		Message: "the gateway's shared rate limits are unavailable, so the request cannot be admitted; retry shortly", Err: err}
}

// admitBackend takes a slot of up's gate, waiting at most its QueueTimeout in its
// queue, or returns the 503 that says the backend is full. Without a gate (MaxInFlight
// zero) every request goes through.
func (s *Server) admitBackend(ctx context.Context, up *Upstream, c caller) (func(), error) {
	g := s.gates[up.Name]
	if g == nil {
		return func() {}, nil
	}
	wait := up.QueueTimeout
	if wait <= 0 {
		wait = DefaultQueueTimeout
	}
	qctx, cancel := context.WithTimeoutCause(ctx, wait, tenant.ErrQueueTimeout)
	defer cancel()
	s.metrics.queued.WithLabelValues(up.Name).Inc()
	free, err := g.Acquire(qctx)
	s.metrics.queued.WithLabelValues(up.Name).Dec()
	if err == nil {
		s.metrics.inFlight.WithLabelValues(up.Name).Inc()
		return func() {
			free()
			s.metrics.inFlight.WithLabelValues(up.Name).Dec()
		}, nil
	}
	if ctx.Err() != nil {
		return nil, ctx.Err() // the client left while it waited
	}
	reason, msg := tenant.ReasonQueueWait, "no slot freed within "+wait.String()
	if errors.Is(err, tenant.ErrQueueFull) {
		reason, msg = tenant.ReasonQueueFull, "its "+strconv.Itoa(g.Cap())+" slots and its queue are full"
	}
	s.metrics.rejected.WithLabelValues(c.label(), reason).Inc()
	return nil, &apiError{Status: http.StatusServiceUnavailable, Type: "server_error", Code: "backend_busy",
		Message:    "backend " + quote(up.Name) + " is busy: " + msg + "; retry after the time in Retry-After, or raise its max_in_flight",
		RetryAfter: "1", Err: err}
}

// DefaultQueueTimeout is an Upstream's QueueTimeout when it has none.
const DefaultQueueTimeout = 30 * time.Second

// retryAfter writes d as Retry-After's whole seconds, rounded up, at least 1.
func retryAfter(d time.Duration) string {
	return strconv.Itoa(max(1, int(math.Ceil(d.Seconds()))))
}
