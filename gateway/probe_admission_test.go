package gateway_test

import (
	"context"
	"io"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/maskgate/maskgate/tenant"
)

// waitFor polls cond until it holds, failing the test if it does not within a generous
// bound: the test waits for a state, it times nothing.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// Probe: 2,000 concurrent requests on a slow upstream were all admitted (5,160
// goroutines), with no 429 and no 503. Now a key past its concurrency gets 429, a
// backend past its slots and queue gets 503, both at once, with Retry-After; the
// upstream never sees more than the backend's slots; and what the refused requests
// held is freed, so the goroutines left are bounded by what is admitted, not by what
// arrived.
func TestProbe_TwoThousandConcurrentRequestsAreAdmittedUpToTheLimits(t *testing.T) {
	const (
		clients     = 2000
		maxInFlight = 50
		maxQueue    = 100
		aliceMax    = 20
	)
	up := newBlockingUpstream(t)
	defer up.stop()
	gw := gatewayFor(t, up.upstream, withGate(maxInFlight, maxQueue, time.Hour),
		withKeys(testKeys(limited("alice", tenant.Limits{MaxConcurrent: aliceMax}))))
	tr := &http.Transport{DisableKeepAlives: true, MaxIdleConns: -1}
	defer tr.CloseIdleConnections()

	runtime.GC()
	base := runtime.NumGoroutine()
	type result struct {
		key    string
		status int
		retry  string
	}
	results := make(chan result, clients)
	var wg sync.WaitGroup
	for i := range clients {
		key := []string{aliceKey, bobKey}[i%2]
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			req, _ := http.NewRequestWithContext(ctx, http.MethodPost, gw.URL+"/v1/chat/completions", strings.NewReader(hello))
			req.Header.Set("Authorization", "Bearer "+key)
			resp, err := tr.RoundTrip(req)
			if err != nil {
				results <- result{key: key}
				return
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			results <- result{key, resp.StatusCode, resp.Header.Get("Retry-After")}
		}()
	}

	// With the upstream stalled, every request past the slots, the queue and alice's
	// concurrency is refused at once.
	byStatus := map[int]int{}
	var got []result
	for len(got) < clients-maxInFlight-maxQueue {
		r := <-results
		got = append(got, r)
		byStatus[r.status]++
		if r.status != 429 && r.status != 503 {
			t.Fatalf("a %s request ended with %d while the upstream was stalled", r.key, r.status)
		}
		if r.retry == "" {
			t.Fatalf("%d without Retry-After", r.status)
		}
		if r.status == 429 && r.key != aliceKey {
			t.Fatalf("bob, who has no limits, got 429")
		}
	}
	if byStatus[429] == 0 || byStatus[503] == 0 {
		t.Errorf("refusals: %d × 429, %d × 503; want both", byStatus[429], byStatus[503])
	}
	waitFor(t, "the slots to fill", func() bool { return len(up.arrived) == maxInFlight })
	waitFor(t, "the queue to fill", func() bool {
		return metricValue(t, gw, "maskgate_backend_queued_requests", map[string]string{"backend": "up"}) == maxQueue
	})
	// What is left: per admitted request a client goroutine, its connection's two, the
	// gateway's connection goroutine and, for those in flight, the upstream side's.
	bound := base + 8*(maxInFlight+maxQueue) + 50
	var settled int
	waitFor(t, "the refused requests' goroutines to end", func() bool {
		settled = runtime.NumGoroutine()
		return settled <= bound
	})
	t.Logf("refused %d × 429 and %d × 503 at once; %d goroutines with %d requests held (bound %d, %d before)",
		byStatus[429], byStatus[503], settled, maxInFlight+maxQueue, bound, base)
	if n := len(up.arrived); n != maxInFlight {
		t.Fatalf("the upstream got %d requests at once, want the backend's %d slots", n, maxInFlight)
	}

	// Let the upstream go: every admitted request completes.
	for range maxInFlight + maxQueue {
		up.release <- struct{}{}
	}
	wg.Wait()
	close(results)
	for r := range results {
		byStatus[r.status]++
	}
	if byStatus[200] != maxInFlight+maxQueue || byStatus[0] != 0 {
		t.Errorf("statuses %v; want %d × 200 and no transport error", byStatus, maxInFlight+maxQueue)
	}
	if n := len(up.bodies); n != maxInFlight+maxQueue {
		t.Errorf("upstream got %d requests, want %d", n, maxInFlight+maxQueue)
	}
}
