package tenant

import (
	"context"
	"testing"
	"time"
)

func TestLocal_AdaptsTheLimiter(t *testing.T) {
	c := newClock()
	b := Local(NewLimiter(c.now))
	ctx := context.Background()

	// nil and zero-limit keys are unlimited.
	for _, k := range []*Key{nil, {Name: "free"}} {
		rel, r, err := b.Admit(ctx, k)
		if rel == nil || r != nil || err != nil {
			t.Fatalf("key %v: release %v, refusal %v, err %v; want admitted", k, rel != nil, r, err)
		}
		rel()
	}

	k := &Key{Name: "k", Limits: Limits{RequestsPerMinute: 60, TokensPerMinute: 600, MaxConcurrent: 1}}
	rel, r, err := b.Admit(ctx, k)
	if r != nil || err != nil {
		t.Fatalf("first request: refusal %v, err %v", r, err)
	}
	if _, r, err := b.Admit(ctx, k); err != nil || r == nil || r.Reason != ReasonConcurrency {
		t.Fatalf("second request in flight: refusal %+v, err %v; want max_concurrent", r, err)
	}
	rel()
	rel() // twice does nothing
	if err := b.Charge(ctx, k, 1200); err != nil {
		t.Fatal(err)
	}
	_, r, err = b.Admit(ctx, k)
	if err != nil || r == nil || r.Reason != ReasonTokens || r.Limit != 600 || r.RetryAfter != time.Minute {
		t.Fatalf("in debt: refusal %+v, err %v; want tokens_per_minute, retry after 1m", r, err)
	}
}
