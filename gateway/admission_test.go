package gateway_test

import (
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/maskgate/maskgate/backends/openaicompat"
	"github.com/maskgate/maskgate/gateway"
	"github.com/maskgate/maskgate/tenant"
)

// manualClock is the gateway's clock in these tests: limits refill only when the test
// says time has passed.
type manualClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *manualClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *manualClock) advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

func withClock(c *manualClock) func(*gateway.Options, *openaicompat.Options) {
	return func(o *gateway.Options, _ *openaicompat.Options) { o.Now = c.now }
}

func limited(name string, l tenant.Limits) func(*tenant.Key) {
	return func(k *tenant.Key) {
		if k.Name == name {
			k.Limits = l
		}
	}
}

func TestLimits_RequestsPerMinuteIs429WithRetryAfterPerKey(t *testing.T) {
	clock := &manualClock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	up := newUpstream(t, replyJSON(200, completionJSON))
	gw := gatewayFor(t, up, withKeys(testKeys(limited("alice", tenant.Limits{RequestsPerMinute: 2}))), withClock(clock))
	post := func(key string) (int, http.Header, []byte) {
		return send(t, "POST", gw.URL+"/v1/chat/completions", bearer(key), hello)
	}
	for i := range 2 {
		if status, _, body := post(aliceKey); status != 200 {
			t.Fatalf("alice's request %d: %d %s", i, status, body)
		}
	}
	status, h, body := post(aliceKey)
	if status != 429 {
		t.Fatalf("alice's 3rd request in a minute: %d, want 429", status)
	}
	if typ, code, msg := envelopeOf(t, body); typ != "rate_limit_error" || code != "rate_limit_exceeded" || !strings.Contains(msg, "2 requests per minute") {
		t.Errorf("envelope %s/%s %q", typ, code, msg)
	}
	if got := h.Get("Retry-After"); got != "30" { // one request refills every 30 s
		t.Errorf("Retry-After %q, want 30", got)
	}
	if status, _, _ := post(bobKey); status != 200 {
		t.Errorf("bob refused for alice's traffic: %d", status)
	}
	clock.advance(30 * time.Second)
	if status, _, body := post(aliceKey); status != 200 {
		t.Errorf("alice after Retry-After: %d %s", status, body)
	}
	if len(up.bodies) != 4 {
		t.Errorf("upstream got %d requests, want 4: the refused one must not reach it", len(up.bodies))
	}
	if got := metricValue(t, gw, "maskgate_rejected_requests_total", map[string]string{"key": "alice", "reason": "requests_per_minute"}); got != 1 {
		t.Errorf("rejected{alice,requests_per_minute} = %v", got)
	}
	if got := metricValue(t, gw, "maskgate_requests_total", map[string]string{"backend": "none", "model": "none", "status": "429", "door": "chat_completions"}); got != 1 {
		t.Errorf("requests_total{429} = %v", got)
	}
}

func TestLimits_TokensPerMinuteAreChargedFromTheAnswersUsage(t *testing.T) {
	clock := &manualClock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	up := newUpstream(t, replyJSON(200, completionJSON)) // usage: 10 prompt + 2 completion
	gw := gatewayFor(t, up, withKeys(testKeys(limited("alice", tenant.Limits{TokensPerMinute: 15}))), withClock(clock))
	post := func() (int, http.Header, []byte) {
		return send(t, "POST", gw.URL+"/v1/chat/completions", bearer(aliceKey), hello)
	}
	if status, _, _ := post(); status != 200 { // 15 → 3
		t.Fatalf("1st: %d", status)
	}
	if status, _, _ := post(); status != 200 { // 3 is not debt; 3 → -9
		t.Fatalf("2nd: %d", status)
	}
	status, h, body := post()
	if status != 429 {
		t.Fatalf("3rd, 9 tokens in debt: %d, want 429", status)
	}
	if _, _, msg := envelopeOf(t, body); !strings.Contains(msg, "15 tokens per minute") {
		t.Errorf("message %q", msg)
	}
	if got := h.Get("Retry-After"); got != "36" { // 9 tokens at 15 per minute
		t.Errorf("Retry-After %q, want 36", got)
	}
	clock.advance(36 * time.Second)
	if status, _, _ := post(); status != 200 {
		t.Errorf("after the debt was paid back: %d", status)
	}
	if got := metricValue(t, gw, "maskgate_key_tokens_total", map[string]string{"key": "alice"}); got != 36 {
		t.Errorf("key_tokens_total{alice} = %v, want 36", got)
	}
}

// blockingUpstream answers each request only when the test releases one, and says when
// one has arrived.
type blockingUpstream struct {
	*upstream
	arrived chan struct{}
	release chan struct{}
	stop    func() // releases every request, now and later; tests defer it, so that it runs before the gateway's Close waits for its handlers
}

func newBlockingUpstream(t *testing.T) *blockingUpstream {
	b := &blockingUpstream{arrived: make(chan struct{}, 4096), release: make(chan struct{})}
	b.upstream = newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		b.arrived <- struct{}{}
		select {
		case <-b.release:
		case <-r.Context().Done():
			return
		}
		replyJSON(200, completionJSON)(w, r)
	})
	b.stop = sync.OnceFunc(func() { close(b.release) })
	t.Cleanup(b.stop)
	return b
}

func TestLimits_MaxConcurrentIs429WhileTheKeysRequestsAreInFlight(t *testing.T) {
	up := newBlockingUpstream(t)
	defer up.stop()
	gw := gatewayFor(t, up.upstream, withKeys(testKeys(limited("alice", tenant.Limits{MaxConcurrent: 1}))))
	first := make(chan int)
	go func() {
		status, _, _ := send(t, "POST", gw.URL+"/v1/chat/completions", bearer(aliceKey), hello)
		first <- status
	}()
	<-up.arrived
	status, h, body := send(t, "POST", gw.URL+"/v1/chat/completions", bearer(aliceKey), hello)
	if status != 429 || h.Get("Retry-After") == "" {
		t.Fatalf("2nd concurrent: %d (Retry-After %q): %s", status, h.Get("Retry-After"), body)
	}
	if _, _, msg := envelopeOf(t, body); !strings.Contains(msg, "1 requests in flight") {
		t.Errorf("message %q", msg)
	}
	up.release <- struct{}{}
	if s := <-first; s != 200 {
		t.Fatalf("1st: %d", s)
	}
	go func() { up.release <- struct{}{} }()
	if status, _, body := send(t, "POST", gw.URL+"/v1/chat/completions", bearer(aliceKey), hello); status != 200 {
		t.Errorf("after the first ended: %d %s", status, body)
	}
}

func withGate(maxInFlight, maxQueue int, wait time.Duration) func(*gateway.Options, *openaicompat.Options) {
	return func(o *gateway.Options, _ *openaicompat.Options) {
		o.Upstreams = []gateway.Upstream{{MaxInFlight: maxInFlight, MaxQueue: maxQueue, QueueTimeout: wait}}
	}
}

func TestAdmission_AFullBackendIs503WithRetryAfter(t *testing.T) {
	up := newBlockingUpstream(t)
	defer up.stop()
	gw := gatewayFor(t, up.upstream, withGate(1, 1, time.Hour))
	results := make(chan int, 2)
	for range 2 { // one in flight, one queued
		go func() {
			status, _, _ := gw.postStatus(t, hello)
			results <- status
		}()
	}
	<-up.arrived
	waitFor(t, "a request in the queue", func() bool {
		return metricValue(t, gw, "maskgate_backend_queued_requests", map[string]string{"backend": "up"}) == 1
	})
	status, h, body := gw.postStatus(t, hello)
	if status != 503 || h.Get("Retry-After") != "1" {
		t.Fatalf("3rd with the slot and queue taken: %d, Retry-After %q: %s", status, h.Get("Retry-After"), body)
	}
	if typ, code, msg := envelopeOf(t, body); typ != "server_error" || code != "backend_busy" || !strings.Contains(msg, "queue are full") {
		t.Errorf("envelope %s/%s %q", typ, code, msg)
	}
	if got := metricValue(t, gw, "maskgate_backend_in_flight_requests", map[string]string{"backend": "up"}); got != 1 {
		t.Errorf("in flight %v, want 1", got)
	}
	up.release <- struct{}{}
	<-up.arrived // the queued one got the slot
	up.release <- struct{}{}
	for range 2 {
		if s := <-results; s != 200 {
			t.Errorf("admitted request: %d", s)
		}
	}
	if got := metricValue(t, gw, "maskgate_rejected_requests_total", map[string]string{"key": "anonymous", "reason": "backend_queue_full"}); got != 1 {
		t.Errorf("rejected{anonymous,backend_queue_full} = %v", got)
	}
	problems, err := testutil.GatherAndLint(gw.reg)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("metric %s: %s", p.Metric, p.Text)
	}
}

func TestAdmission_AWaitPastTheQueueDeadlineIs503(t *testing.T) {
	up := newBlockingUpstream(t)
	defer up.stop()
	// The deadline is short so that the test ends soon; what it asserts does not depend
	// on it: the slot is held until the test lets go, so the wait always runs out.
	gw := gatewayFor(t, up.upstream, withGate(1, 8, time.Millisecond))
	first := make(chan int)
	go func() {
		status, _, _ := gw.postStatus(t, hello)
		first <- status
	}()
	<-up.arrived
	status, _, body := gw.postStatus(t, hello)
	if status != 503 {
		t.Fatalf("queued past the deadline: %d %s", status, body)
	}
	if _, _, msg := envelopeOf(t, body); !strings.Contains(msg, "no slot freed within 1ms") {
		t.Errorf("message %q", msg)
	}
	up.release <- struct{}{}
	if s := <-first; s != 200 {
		t.Errorf("1st: %d", s)
	}
	if got := metricValue(t, gw, "maskgate_rejected_requests_total", map[string]string{"key": "anonymous", "reason": "backend_queue_timeout"}); got != 1 {
		t.Errorf("rejected{anonymous,backend_queue_timeout} = %v", got)
	}
}
