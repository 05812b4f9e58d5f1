package redisconn_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/maskgate/maskgate/internal/redisconn"
	"github.com/maskgate/maskgate/internal/redistest"
	"github.com/maskgate/maskgate/tenant"
	"github.com/maskgate/maskgate/tenant/redislimit"
	"github.com/maskgate/maskgate/toolsearch/state/redisstore"
)

// TestRediss_StateAndLimitsOverTLS: the one client the gateway shares (as
// cmd/gateway builds it from state.redis.url) reaches a TLS-only redis-server over
// rediss://, and the thread store and the shared limits work through it. The server's
// certificate is verified: without the test's CA (the system's roots, as in production)
// the connection fails, and redis:// to the TLS port gets no answer.
func TestRediss_StateAndLimitsOverTLS(t *testing.T) {
	ctx := context.Background()
	srv := redistest.StartTLS(t)
	// The calls below must succeed: 30 s bounds them, where the defaults (500ms to dial
	// and shake hands, 1 s a reply) are not far from what a TLS handshake takes under
	// -race on a loaded machine.
	rdb, err := redisconn.New(redisconn.Options{URL: srv.URL, TLSConfig: srv.TLS, DialTimeout: 30 * time.Second, ReadTimeout: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rdb.Close() })

	threads, err := redisstore.New(redisstore.Options{Client: rdb, Prefix: "mg:thread:"})
	if err != nil {
		t.Fatal(err)
	}
	const th = "0123456789abcdef0123456789abcdef"
	if _, err := threads.Load(ctx, th, "git.commit", "fs.read"); err != nil {
		t.Fatalf("load over rediss://: %v", err)
	}
	snap, ok, err := threads.Get(ctx, th)
	if err != nil || !ok || !slices.Equal(snap.Loaded, []string{"git.commit", "fs.read"}) {
		t.Fatalf("get over rediss://: %v %v %v", snap.Loaded, ok, err)
	}

	limits, err := redislimit.New(redislimit.Options{Client: rdb, Prefix: "mg:limit:", Timeout: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	k := &tenant.Key{Name: "alice", Limits: tenant.Limits{RequestsPerMinute: 2}}
	admitted := 0
	for range 3 {
		rel, refusal, err := limits.Admit(ctx, k)
		if err != nil {
			t.Fatalf("admit over rediss://: %v", err)
		}
		if refusal == nil {
			admitted++
			rel()
		}
	}
	if admitted != 2 {
		t.Errorf("%d of 3 admitted under requests_per_minute 2", admitted)
	}

	for _, c := range []struct {
		name string
		o    redisconn.Options
		want string
	}{
		{"rediss:// with the system's roots", redisconn.Options{URL: srv.URL}, "certificate"},
		{"redis:// to the TLS port", redisconn.Options{URL: strings.Replace(srv.URL, "rediss://", "redis://", 1)}, ""},
	} {
		other, err := redisconn.New(c.o)
		if err != nil {
			t.Fatal(err)
		}
		pctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		err = other.Ping(pctx).Err()
		cancel()
		other.Close()
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: ping %v, want a failure naming %q", c.name, err, c.want)
		}
	}
}
