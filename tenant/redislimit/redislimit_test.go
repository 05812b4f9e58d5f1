package redislimit

import (
	"context"
	"errors"
	"math"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/maskgate/maskgate/internal/redistest"
	"github.com/maskgate/maskgate/tenant"
	"github.com/redis/go-redis/v9"
)

var bg = context.Background()

// callLimit is the Timeout gateway gives a Limiter unless the test sets its own: no
// passing call reaches it (a call to a local server takes milliseconds, under a second
// even under -race at a load of 18; the default, 500ms, is not that far). failFast is
// the most a call may take to fail where what ends it is immediate (a refused dial, a
// reset connection, a timeout of milliseconds): a bound on a hang, under callLimit so
// that a call that waited out callLimit instead fails it too.
const (
	callLimit = 30 * time.Second
	failFast  = 10 * time.Second
)

// gateway is one gateway's Limiter on url, with a client of its own.
func gateway(t testing.TB, url string, o Options) *Limiter {
	t.Helper()
	o.URL = url
	if o.Timeout == 0 {
		o.Timeout = callLimit
	}
	l, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return l
}

// inspect is a plain client for looking at what the limiters wrote.
func inspect(t testing.TB, url string) *redis.Client {
	t.Helper()
	opt, err := redis.ParseURL(url)
	if err != nil {
		t.Fatal(err)
	}
	c := redis.NewClient(opt)
	t.Cleanup(func() { c.Close() })
	return c
}

func admitted(t testing.TB, l *Limiter, k *tenant.Key) func() {
	t.Helper()
	rel, r, err := l.Admit(bg, k)
	if err != nil || r != nil {
		t.Fatalf("refusal %v, err %v; want admitted", r, err)
	}
	return rel
}

func refused(t testing.TB, l *Limiter, k *tenant.Key, reason string) *tenant.Refusal {
	t.Helper()
	rel, r, err := l.Admit(bg, k)
	if err != nil {
		t.Fatal(err)
	}
	if r == nil {
		rel()
		t.Fatalf("admitted; want refused for %s", reason)
	}
	if r.Reason != reason {
		t.Fatalf("refused for %s (%v); want %s", r.Reason, r, reason)
	}
	return r
}

func TestTwoGatewaysShareRequestsPerMinute(t *testing.T) {
	s := redistest.Start(t, false)
	a, b := gateway(t, s.URL, Options{}), gateway(t, s.URL, Options{})
	k := &tenant.Key{Name: "alice", Limits: tenant.Limits{RequestsPerMinute: 10}}

	n := 0
	var last *tenant.Refusal
	for i := range 20 {
		l := a
		if i%2 == 1 {
			l = b
		}
		rel, r, err := l.Admit(bg, k)
		if err != nil {
			t.Fatal(err)
		}
		if r == nil {
			n++
			rel()
			continue
		}
		if r.Reason != tenant.ReasonRequests || r.Limit != 10 {
			t.Fatalf("refusal %+v; want requests_per_minute 10", r)
		}
		last = r
	}
	if n != 10 {
		t.Fatalf("%d of 20 admitted across two gateways; want 10", n)
	}
	// One request refills every 6s; the bucket was emptied a moment ago.
	if last.RetryAfter <= 5*time.Second || last.RetryAfter > 6*time.Second {
		t.Errorf("RetryAfter %v; want just under 6s", last.RetryAfter)
	}
}

func TestTwoGatewaysShareRequestsConcurrently(t *testing.T) {
	s := redistest.Start(t, false)
	gws := []*Limiter{gateway(t, s.URL, Options{}), gateway(t, s.URL, Options{})}
	const limit = 50
	k := &tenant.Key{Name: "alice", Limits: tenant.Limits{RequestsPerMinute: limit}}
	var n atomic.Int64
	var wg sync.WaitGroup
	start := time.Now()
	for g := range 8 {
		wg.Go(func() {
			for range 25 {
				rel, r, err := gws[g%2].Admit(bg, k)
				if err != nil {
					t.Error(err)
					return
				}
				if r == nil {
					n.Add(1)
					rel()
				}
			}
		})
	}
	wg.Wait()
	// The refill may add a request while the test runs.
	extra := int64(math.Ceil(time.Since(start).Minutes() * limit))
	if got := n.Load(); got < limit || got > limit+extra {
		t.Fatalf("%d of 200 admitted; want %d (+%d refilled meanwhile at most)", got, limit, extra)
	}
}

func TestTokensChargedOnOneGatewayRefuseOnTheOther(t *testing.T) {
	s := redistest.Start(t, false)
	a, b := gateway(t, s.URL, Options{}), gateway(t, s.URL, Options{})
	k := &tenant.Key{Name: "bob", Limits: tenant.Limits{TokensPerMinute: 600}}

	admitted(t, b, k)()
	if err := a.Charge(bg, k, 900); err != nil { // one answer may overdraw
		t.Fatal(err)
	}
	for _, l := range []*Limiter{a, b} {
		r := refused(t, l, k, tenant.ReasonTokens)
		// 300 tokens of debt at 10 per second: 30s.
		if r.Limit != 600 || r.RetryAfter <= 29*time.Second || r.RetryAfter > 30*time.Second {
			t.Errorf("refusal %+v; want limit 600, retry after just under 30s", r)
		}
	}
	// A debt outlives the minute: the bucket expires only once it would be full again.
	ttl, err := inspect(t, s.URL).PTTL(bg, DefaultPrefix+"{bob}:tokens").Result()
	if err != nil {
		t.Fatal(err)
	}
	if ttl < 89*time.Second || ttl > 91*time.Second {
		t.Errorf("tokens bucket expires in %v; want 90s (debt paid at 30s, then a minute to fill, +1s)", ttl)
	}
}

func TestTwoGatewaysShareMaxConcurrent(t *testing.T) {
	s := redistest.Start(t, false)
	a, b := gateway(t, s.URL, Options{}), gateway(t, s.URL, Options{})
	k := &tenant.Key{Name: "carol", Limits: tenant.Limits{MaxConcurrent: 2}}

	relA := admitted(t, a, k)
	relB := admitted(t, b, k)
	for _, l := range []*Limiter{a, b} {
		r := refused(t, l, k, tenant.ReasonConcurrency)
		if r.Limit != 2 || r.RetryAfter != time.Second {
			t.Errorf("refusal %+v; want limit 2, retry after 1s", r)
		}
	}
	relA()
	relA() // twice does nothing: it must not free a second slot
	relC := admitted(t, b, k)
	refused(t, a, k, tenant.ReasonConcurrency)
	relB()
	relC()
	if n, err := inspect(t, s.URL).ZCard(bg, DefaultPrefix+"{carol}:leases").Result(); err != nil || n != 0 {
		t.Fatalf("%d leases left after every release (err %v); want 0", n, err)
	}
	admitted(t, a, k)()
}

func TestLeaseOfAGatewayThatNeverReleasesExpires(t *testing.T) {
	s := redistest.Start(t, false)
	// The lease must outlive the refusal below (far longer than a loaded machine takes)
	// and be gone after the sleep.
	const ttl = 3 * time.Second
	crashed := gateway(t, s.URL, Options{LeaseTTL: ttl})
	live := gateway(t, s.URL, Options{})
	k := &tenant.Key{Name: "dave", Limits: tenant.Limits{MaxConcurrent: 1}}

	stale := admitted(t, crashed, k)
	refused(t, live, k, tenant.ReasonConcurrency)
	time.Sleep(ttl + time.Second)
	rel := admitted(t, live, k)
	stale() // a late release removes its own lease only
	refused(t, live, k, tenant.ReasonConcurrency)
	rel()
	admitted(t, live, k)()
}

func TestBucketsRefillOverTime(t *testing.T) {
	s := redistest.Start(t, false)
	a, b := gateway(t, s.URL, Options{}), gateway(t, s.URL, Options{})
	k := &tenant.Key{Name: "erin", Limits: tenant.Limits{RequestsPerMinute: 600}} // 10 per second
	gws := []*Limiter{a, b}

	// drain admits until refused and returns how many, and when the refusing call began.
	drain := func() (n int, refusedAt time.Time) {
		for i := 0; ; i++ {
			at := time.Now()
			rel, r, err := gws[i%2].Admit(bg, k)
			if err != nil {
				t.Fatal(err)
			}
			if r != nil {
				return n, at
			}
			n++
			rel()
		}
	}
	n, t0 := drain()
	if n < 600 {
		t.Fatalf("%d admitted from a full bucket of 600", n)
	}
	time.Sleep(300 * time.Millisecond)
	// At t0 under one request was left; 300ms later at least 3 more.
	got, t1 := drain()
	most := int(t1.Sub(t0).Seconds()*10) + 1
	if got < 3 || got > most {
		t.Fatalf("%d admitted after %v; want 3..%d at 10 per second", got, t1.Sub(t0), most)
	}
	ttl, err := inspect(t, s.URL).PTTL(bg, DefaultPrefix+"{erin}:requests").Result()
	if err != nil {
		t.Fatal(err)
	}
	if ttl < 59*time.Second || ttl > 61*time.Second {
		t.Errorf("an emptied bucket expires in %v; want a little over a minute", ttl)
	}
}

func TestUnlimitedKeysTouchNoRedis(t *testing.T) {
	// Nothing listens at this address: any call to Redis would fail.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	l := gateway(t, "redis://"+addr+"/0", Options{})
	for _, k := range []*tenant.Key{nil, {Name: "free"}, {Name: "odd", Limits: tenant.Limits{RequestsPerMinute: -1}}} {
		rel, r, err := l.Admit(bg, k)
		if rel == nil || r != nil || err != nil {
			t.Fatalf("key %+v: release %v, refusal %v, err %v; want admitted", k, rel != nil, r, err)
		}
		rel()
		rel()
	}
	for _, c := range []struct {
		k *tenant.Key
		n int
	}{{nil, 10}, {&tenant.Key{Name: "x", Limits: tenant.Limits{RequestsPerMinute: 5}}, 10}, {&tenant.Key{Name: "y", Limits: tenant.Limits{TokensPerMinute: 5}}, 0}} {
		if err := l.Charge(bg, c.k, c.n); err != nil {
			t.Fatalf("Charge(%+v, %d): %v", c.k, c.n, err)
		}
	}
}

func TestRedisDownIsUnavailableThenRecovers(t *testing.T) {
	s := redistest.Start(t, false)
	var releaseErrs []error
	var mu sync.Mutex
	l := gateway(t, s.URL, Options{OnReleaseError: func(err error) {
		mu.Lock()
		releaseErrs = append(releaseErrs, err)
		mu.Unlock()
	}})
	k := &tenant.Key{Name: "frank", Limits: tenant.Limits{RequestsPerMinute: 100, TokensPerMinute: 1000, MaxConcurrent: 1}}
	held := admitted(t, l, k)

	s.Kill()
	for range 3 {
		start := time.Now()
		rel, r, err := l.Admit(bg, k)
		if !errors.Is(err, ErrUnavailable) || rel != nil || r != nil {
			t.Fatalf("Admit with Redis down: release %v, refusal %v, err %v; want ErrUnavailable", rel != nil, r, err)
		}
		if d := time.Since(start); d > failFast {
			t.Fatalf("Admit took %v to fail", d)
		}
	}
	start := time.Now()
	if err := l.Charge(bg, k, 10); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("Charge with Redis down: %v; want ErrUnavailable", err)
	}
	held()
	held()
	if d := time.Since(start); d > failFast {
		t.Fatalf("Charge and release took %v to fail", d)
	}
	mu.Lock()
	if len(releaseErrs) != 1 || !errors.Is(releaseErrs[0], ErrUnavailable) {
		t.Fatalf("OnReleaseError got %v; want one ErrUnavailable", releaseErrs)
	}
	mu.Unlock()

	s.Restart() // without persistence: the key starts afresh
	deadline := time.Now().Add(10 * time.Second)
	for {
		rel, _, err := l.Admit(bg, k)
		if err == nil {
			rel()
			break
		}
		if !errors.Is(err, ErrUnavailable) || time.Now().After(deadline) {
			t.Fatalf("after restart: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	rel := admitted(t, l, k)
	refused(t, l, k, tenant.ReasonConcurrency)
	rel()
	if err := l.Charge(bg, k, 2000); err != nil {
		t.Fatal(err)
	}
	refused(t, l, k, tenant.ReasonTokens)
}

func TestHungRedisTimesOut(t *testing.T) {
	// A server that accepts connections and never answers.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var conns []net.Conn
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
	})
	// The timeout under test must fire: only it ends these calls (the dial, to a
	// listening socket, succeeds). failFast bounds a hang; the default (500ms) would pass
	// it too, so the limiter is checked to have taken the one set here.
	const timeout = 200 * time.Millisecond
	l := gateway(t, "redis://"+ln.Addr().String()+"/0", Options{Timeout: timeout})
	if l.timeout != timeout {
		t.Fatalf("timeout %v, want %v", l.timeout, timeout)
	}
	k := &tenant.Key{Name: "gina", Limits: tenant.Limits{RequestsPerMinute: 1, TokensPerMinute: 1}}
	start := time.Now()
	if _, _, err := l.Admit(bg, k); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("Admit: %v; want ErrUnavailable", err)
	}
	if err := l.Charge(bg, k, 1); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("Charge: %v; want ErrUnavailable", err)
	}
	if d := time.Since(start); d > failFast {
		t.Fatalf("two calls took %v against a %v timeout", d, timeout)
	}
}

func TestCallerContextEndedIsNoOutage(t *testing.T) {
	s := redistest.Start(t, false)
	l := gateway(t, s.URL, Options{})
	k := &tenant.Key{Name: "hank", Limits: tenant.Limits{RequestsPerMinute: 1, TokensPerMinute: 1}}
	ctx, cancel := context.WithCancel(bg)
	cancel()
	if _, _, err := l.Admit(ctx, k); !errors.Is(err, context.Canceled) || errors.Is(err, ErrUnavailable) {
		t.Fatalf("Admit: %v; want context.Canceled, not ErrUnavailable", err)
	}
	if err := l.Charge(ctx, k, 1); !errors.Is(err, context.Canceled) || errors.Is(err, ErrUnavailable) {
		t.Fatalf("Charge: %v; want context.Canceled, not ErrUnavailable", err)
	}
}

func TestClientAndPrefixOptions(t *testing.T) {
	s := redistest.Start(t, false)
	c := inspect(t, s.URL)
	l, err := New(Options{Client: c, Prefix: "other:"})
	if err != nil {
		t.Fatal(err)
	}
	k := &tenant.Key{Name: "ivy", Limits: tenant.Limits{RequestsPerMinute: 5}}
	admitted(t, l, k)()
	if n, err := c.Exists(bg, "other:{ivy}:requests").Result(); err != nil || n != 1 {
		t.Fatalf("other:{ivy}:requests exists %d (err %v); want 1", n, err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if err := c.Ping(bg).Err(); err != nil {
		t.Fatalf("Close closed the client it was given: %v", err)
	}
}

func TestNewRejectsBadOptions(t *testing.T) {
	c := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"})
	defer c.Close()
	for name, o := range map[string]Options{
		"neither":  {},
		"both":     {Client: c, URL: "redis://127.0.0.1:1/0"},
		"bad URL":  {URL: "http://example.com"},
		"negative": {URL: "redis://127.0.0.1:1/0", LeaseTTL: -time.Second},
	} {
		if l, err := New(o); err == nil {
			l.Close()
			t.Errorf("%s: no error", name)
		}
	}
}

// BenchmarkAdmitReleaseCharge is one request's work: admit, release, charge.
func BenchmarkAdmitReleaseCharge(b *testing.B) {
	k := &tenant.Key{Name: "bench", Limits: tenant.Limits{RequestsPerMinute: 1 << 30, TokensPerMinute: 1 << 30, MaxConcurrent: 1 << 20}}
	run := func(b *testing.B, bud tenant.Budgets) {
		for b.Loop() {
			rel, r, err := bud.Admit(bg, k)
			if err != nil || r != nil {
				b.Fatal(r, err)
			}
			rel()
			if err := bud.Charge(bg, k, 100); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.Run("local", func(b *testing.B) { run(b, tenant.Local(tenant.NewLimiter(nil))) })
	b.Run("redis", func(b *testing.B) {
		s := redistest.Start(b, false)
		run(b, gateway(b, s.URL, Options{}))
	})
}
