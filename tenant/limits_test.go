package tenant

import (
	"testing"
	"time"
)

// clock is a manual clock for the tests: nothing here waits on real time.
type clock struct{ t time.Time }

func (c *clock) now() time.Time          { return c.t }
func (c *clock) advance(d time.Duration) { c.t = c.t.Add(d) }

func newClock() *clock { return &clock{t: time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)} }

func TestLimiter_RequestsPerMinuteIsATokenBucket(t *testing.T) {
	c := newClock()
	l := NewLimiter(c.now)
	k := &Key{Name: "k", Limits: Limits{RequestsPerMinute: 3}}
	for i := range 3 { // a full minute's allowance at once
		if rel, r := l.Admit(k); r != nil {
			t.Fatalf("request %d refused: %v", i, r)
		} else {
			rel()
		}
	}
	_, r := l.Admit(k)
	if r == nil || r.Reason != ReasonRequests || r.Limit != 3 {
		t.Fatalf("4th request: refusal %+v, want requests_per_minute", r)
	}
	if r.RetryAfter != 20*time.Second { // one request refills every 60/3 s
		t.Errorf("RetryAfter %v, want 20s", r.RetryAfter)
	}
	c.advance(19 * time.Second)
	if _, r := l.Admit(k); r == nil {
		t.Fatal("admitted after 19s: the refill is one per 20s")
	}
	c.advance(time.Second)
	if _, r := l.Admit(k); r != nil {
		t.Fatalf("refused after 20s: %v", r)
	}
}

func TestLimiter_TokensAreChargedAfterTheAnswerAndRefuseWhileInDebt(t *testing.T) {
	c := newClock()
	l := NewLimiter(c.now)
	k := &Key{Name: "k", Limits: Limits{TokensPerMinute: 600}}
	rel, r := l.Admit(k)
	if r != nil {
		t.Fatal(r)
	}
	rel()
	l.Charge(k, 900) // one answer may overdraw: its size was unknown when it was admitted
	_, r = l.Admit(k)
	if r == nil || r.Reason != ReasonTokens {
		t.Fatalf("refusal %+v, want tokens_per_minute", r)
	}
	// 300 tokens of debt at 10 per second: 30 s.
	if r.RetryAfter != 30*time.Second {
		t.Errorf("RetryAfter %v, want 30s", r.RetryAfter)
	}
	c.advance(29 * time.Second)
	if _, r := l.Admit(k); r == nil {
		t.Fatal("admitted while still in debt")
	}
	c.advance(time.Second)
	if _, r := l.Admit(k); r != nil {
		t.Fatalf("refused after the debt was paid back: %v", r)
	}
}

func TestLimiter_MaxConcurrentCountsRequestsInFlight(t *testing.T) {
	l := NewLimiter(newClock().now)
	k := &Key{Name: "k", Limits: Limits{MaxConcurrent: 2}}
	a, _ := l.Admit(k)
	b, _ := l.Admit(k)
	if _, r := l.Admit(k); r == nil || r.Reason != ReasonConcurrency {
		t.Fatalf("3rd concurrent: refusal %+v", r)
	}
	a()
	a() // a second release must not free another request's slot
	c, r := l.Admit(k)
	if r != nil {
		t.Fatalf("refused after a release: %v", r)
	}
	if _, r := l.Admit(k); r == nil {
		t.Fatal("a double release freed two slots")
	}
	b()
	c()
}

func TestLimiter_KeysDoNotShareBudgets(t *testing.T) {
	l := NewLimiter(newClock().now)
	a := &Key{Name: "a", Limits: Limits{RequestsPerMinute: 1}}
	b := &Key{Name: "b", Limits: Limits{RequestsPerMinute: 1}}
	if _, r := l.Admit(a); r != nil {
		t.Fatal(r)
	}
	if _, r := l.Admit(a); r == nil {
		t.Fatal("a's second request admitted")
	}
	if _, r := l.Admit(b); r != nil {
		t.Fatalf("b refused for a's traffic: %v", r)
	}
}

func TestLimiter_NoLimitsNoKey(t *testing.T) {
	l := NewLimiter(newClock().now)
	for range 1000 {
		if _, r := l.Admit(&Key{Name: "free"}); r != nil {
			t.Fatal(r)
		}
		if _, r := l.Admit(nil); r != nil {
			t.Fatal(r)
		}
	}
}
