package access_test

import (
	"context"
	"errors"
	"net/http"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/maskgate/maskgate/backends"
	"github.com/maskgate/maskgate/gateway/access"
	"github.com/maskgate/maskgate/tenant"
)

// A backend whose one slot is taken and whose queue holds none refuses the next request
// at once with the 503 that says so and when to retry, counts it against the caller,
// and takes requests again once the slot is released.
func TestGuard_AFullGateIs503WithRetryAfterAndCounted(t *testing.T) {
	rejected := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "rejected"}, []string{"key", "reason"})
	inFlight := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "in_flight"}, []string{"upstream"})
	g := &access.Guard{Gates: map[string]*tenant.Gate{"gpu": tenant.NewGate(1, 0)},
		Metrics: access.Metrics{Rejected: rejected, InFlight: inFlight}}
	ctx := context.Background()
	release, err := g.AdmitBackend(ctx, nil, "gpu", 0)
	if err != nil {
		t.Fatalf("the first request: %v", err)
	}
	if got := testutil.ToFloat64(inFlight.WithLabelValues("gpu")); got != 1 {
		t.Errorf("in flight = %v, want 1", got)
	}
	_, err = g.AdmitBackend(ctx, nil, "gpu", 0)
	var be *backends.Error
	if !errors.As(err, &be) || be.Status != http.StatusServiceUnavailable || be.Code != "backend_busy" || be.RetryAfter != "1" {
		t.Fatalf("the second request: %v, want a 503 backend_busy with Retry-After 1", err)
	}
	if got := testutil.ToFloat64(rejected.WithLabelValues(access.Anonymous, tenant.ReasonQueueFull)); got != 1 {
		t.Errorf("rejected{anonymous,%s} = %v, want 1", tenant.ReasonQueueFull, got)
	}
	release()
	if got := testutil.ToFloat64(inFlight.WithLabelValues("gpu")); got != 0 {
		t.Errorf("in flight after release = %v, want 0", got)
	}
	release2, err := g.AdmitBackend(ctx, nil, "gpu", 0)
	if err != nil {
		t.Fatalf("after the release: %v", err)
	}
	release2()
	if _, err := g.AdmitBackend(ctx, nil, "cpu", 0); err != nil {
		t.Errorf("a backend without a gate refused: %v", err)
	}
}

// A key may use only its models and backends; a key that isolates its cache only a
// backend that can keep it apart. Each refusal is a 403 naming the model.
func TestGuard_AllowRefusesWhatTheKeyMayNotUse(t *testing.T) {
	g := &access.Guard{}
	k := &tenant.Key{Name: "alice", Models: []string{"m1"}}
	if err := g.Allow(nil, "any", "gpu", nil); err != nil {
		t.Errorf("the anonymous caller refused: %v", err)
	}
	if err := g.Allow(k, "m1", "gpu", nil); err != nil {
		t.Errorf("alice refused her model: %v", err)
	}
	for _, tc := range []struct {
		key  *tenant.Key
		code string
	}{{k, "model_not_allowed"}, {&tenant.Key{Name: "bob", IsolateCache: true}, "cache_isolation_unavailable"}} {
		err := g.Allow(tc.key, "m2", "gpu", nil)
		var be *backends.Error
		if !errors.As(err, &be) || be.Status != http.StatusForbidden || be.Code != tc.code || be.Param != "model" {
			t.Errorf("%s on m2: %v, want a 403 %s", tc.key.Name, err, tc.code)
		}
	}
}
