package gateway_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/maskgate/maskgate/backends/openaicompat"
	"github.com/maskgate/maskgate/gateway"
	"github.com/maskgate/maskgate/gateway/observe"
	"github.com/maskgate/maskgate/kvcache"
	"github.com/maskgate/maskgate/toolsearch/state"
)

// eventStream reads GET /admin/events into snapshots until its context ends.
type eventStream struct {
	snaps  chan observe.LiveSnapshot
	done   chan error
	cancel context.CancelFunc
}

func openEvents(t testing.TB, base string) *eventStream {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+"/admin/events", nil)
	req.Header.Set("Authorization", "Bearer "+testAdminKey)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
		cancel()
		resp.Body.Close()
		t.Fatalf("GET /admin/events: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	es := &eventStream{snaps: make(chan observe.LiveSnapshot, 1024), done: make(chan error, 1), cancel: cancel}
	go func() {
		defer resp.Body.Close()
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			data, ok := strings.CutPrefix(sc.Text(), "data: ")
			if !ok {
				continue
			}
			var snap observe.LiveSnapshot
			if err := json.Unmarshal([]byte(data), &snap); err != nil {
				es.done <- fmt.Errorf("event %q: %w", data, err)
				return
			}
			select {
			case es.snaps <- snap:
			default: // the test reads only the latest
			}
		}
		es.done <- sc.Err()
	}()
	t.Cleanup(cancel)
	return es
}

// until returns the first snapshot ok accepts, failing after limit.
func (es *eventStream) until(t testing.TB, limit time.Duration, what string, ok func(observe.LiveSnapshot) bool) observe.LiveSnapshot {
	t.Helper()
	deadline := time.After(limit)
	var last observe.LiveSnapshot
	for {
		select {
		case s := <-es.snaps:
			if ok(s) {
				return s
			}
			last = s
		case err := <-es.done:
			t.Fatalf("the event stream ended (%v) before %s", err, what)
		case <-deadline:
			b, _ := json.Marshal(last)
			t.Fatalf("no event with %s within %s; the last: %s", what, limit, b)
		}
	}
}

func row(s observe.LiveSnapshot, backend, profile, strategy string) *observe.LiveRow {
	for i := range s.Rows {
		if r := &s.Rows[i]; r.Backend == backend && r.Profile == profile && r.Strategy == strategy {
			return r
		}
	}
	return nil
}

// TestAdminEvents_CountsMatchTheRequests: the snapshots the event stream delivers count
// what was sent — requests per backend × profile × strategy, tokens as the request log
// and /metrics have them, TTFT samples of the streams, threads — and the first event
// carries the per-second history.
func TestAdminEvents_CountsMatchTheRequests(t *testing.T) {
	e := newFakeEngine(t, fakeReply{call: "load_tool", args: `{"toolName":"slack_send_message"}`}, fakeReply{text: "loaded it for you"})
	g := newOpsGateway(t, e, func(o *gateway.Options, _ *openaicompat.Options) { o.EventInterval = 50 * time.Millisecond })
	for i, c := range []struct {
		body, thread string
	}{
		{opsChat("m1", false, "hello"), "t1"},
		{opsChat("m1", false, "hello", "ok", "more"), "t1"},
		{opsChat("m1", true, "hi there"), "t2"},
		{opsChat("m1", true, "hi there", "ok", "and"), "t2"},
		{opsChat("m1", false, "no thread"), ""},
	} {
		if code, out := g.chat(t, c.body, c.thread); code != 200 {
			t.Fatalf("request %d: %d %s", i, code, out)
		}
	}
	if code, _ := g.chat(t, `{"model":"nope","messages":[{"role":"user","content":"x"}]}`, ""); code != 404 {
		t.Fatalf("unknown model: %d", code)
	}

	es := openEvents(t, g.URL)
	first := es.until(t, 5*time.Second, "6 requests", func(s observe.LiveSnapshot) bool { return s.Totals.Requests == 6 })
	if n := func() (n int64) {
		for _, p := range first.History {
			n += p.Requests
		}
		return n
	}(); n != 6 {
		t.Errorf("history counts %d requests, want 6: %+v", n, first.History)
	}
	r := row(first, "vllm-a", "default", "remove")
	if r == nil || r.Requests != 5 || r.Errors != 0 {
		t.Fatalf("the managed row: %+v in %+v", r, first.Rows)
	}
	if refused := row(first, "none", "default", "none"); refused == nil || refused.Requests != 1 || refused.Errors != 1 {
		t.Errorf("the refused request's row: %+v", refused)
	}
	var prompt, cached, computed int64
	for _, rec := range g.requestLog(t, 100) {
		if rec.PromptTokens != nil {
			prompt += int64(*rec.PromptTokens)
			cached += int64(*rec.CachedTokens)
			computed += int64(*rec.ComputedTokens)
		}
	}
	if r.PromptTokens != prompt || r.CachedTokens != cached || r.ComputedTokens != computed || first.Totals.PromptTokens != prompt {
		t.Errorf("tokens %d/%d/%d, the log says %d/%d/%d", r.PromptTokens, r.CachedTokens, r.ComputedTokens, prompt, cached, computed)
	}
	if m := metricSum(t, g.reg, "maskgate_prompt_tokens_total"); m != float64(prompt) {
		t.Errorf("/metrics has %v prompt tokens, the stream %d", m, prompt)
	}
	if m := metricSum(t, g.reg, "maskgate_cached_tokens_total"); m != float64(cached) || cached == 0 {
		t.Errorf("/metrics has %v cached tokens, the stream %d", m, cached)
	}
	if want := float64(cached) / float64(prompt); r.HitRate == nil || math.Abs(*r.HitRate-want) > 1e-9 {
		t.Errorf("hit rate %v, want %v", r.HitRate, want)
	}
	if r.TTFTMS.N != 2 || r.TTFTMS.P50 == nil || *r.TTFTMS.P50 <= 0 || r.TPOTMS.N == 0 {
		t.Errorf("TTFT %+v TPOT %+v, want the 2 streams", r.TTFTMS, r.TPOTMS)
	}
	if first.Threads == nil || first.Threads.Count != 1 || first.Threads.OldestAccess == nil { // t1 loaded a tool
		t.Errorf("threads %+v", first.Threads)
	}
	if first.Subscribers != 1 || first.IntervalMS != 50 {
		t.Errorf("subscribers %d, interval %d ms", first.Subscribers, first.IntervalMS)
	}
	// Within a second or two the requests are in the rate window.
	later := es.until(t, 5*time.Second, "the rate of 6 requests", func(s observe.LiveSnapshot) bool {
		return math.Abs(s.Totals.RequestsPerS*10-6) < 1e-9
	})
	if later.History != nil || later.Point == nil {
		t.Errorf("a later event: history %v point %v", later.History, later.Point)
	}

	// New requests show up in the next snapshots.
	if code, out := g.chat(t, opsChat("m1", false, "hello", "ok", "more", "ok", "again"), "t1"); code != 200 {
		t.Fatalf("%d %s", code, out)
	}
	es.until(t, 5*time.Second, "7 requests", func(s observe.LiveSnapshot) bool { return s.Totals.Requests == 7 })
}

// subscribersSeen reads the event stream as a client that keeps up with anything: it
// decodes no snapshot, only the subscriber count each one reports.
func subscribersSeen(t *testing.T, base string) <-chan int {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+"/admin/events", nil)
	req.Header.Set("Authorization", "Bearer "+testAdminKey)
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("GET /admin/events: %v %v", err, resp)
	}
	out := make(chan int, 1)
	go func() {
		defer resp.Body.Close()
		defer close(out)
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			line := sc.Bytes()
			i := bytes.Index(line, []byte(`"subscribers":`))
			if i < 0 {
				continue
			}
			n := 0
			for _, c := range line[i+len(`"subscribers":`):] {
				if c < '0' || c > '9' {
					break
				}
				n = 10*n + int(c-'0')
			}
			select {
			case out <- n:
			case <-out: // keep the latest
				out <- n
			}
		}
	}()
	return out
}

func waitSubscribers(t *testing.T, seen <-chan int, want int, limit time.Duration) {
	t.Helper()
	deadline := time.After(limit)
	for {
		select {
		case n, ok := <-seen:
			if !ok {
				t.Fatalf("the watching client's stream ended before %d subscribers", want)
			}
			if n == want {
				return
			}
		case <-deadline:
			t.Fatalf("not %d subscribers within %s", want, limit)
		}
	}
}

// TestAdminEvents_SlowReaderIsDropped: a client that opens the stream and never reads
// fills its queue and is dropped (its connection aborted), while requests keep their
// pace and a client that reads keeps its stream.
func TestAdminEvents_SlowReaderIsDropped(t *testing.T) {
	e := newFakeEngine(t)
	g := newOpsGateway(t, e, func(o *gateway.Options, _ *openaicompat.Options) {
		o.EventInterval = 10 * time.Millisecond
		for i := 0; i < 40; i++ {
			o.Profiles = append(o.Profiles, &gateway.Profile{Name: fmt.Sprintf("p%02d", i)})
		}
	})
	// Rows enough to make each snapshot some 30 KB, so the socket's buffers fill.
	for i := 0; i < 40; i++ {
		req, _ := http.NewRequest(http.MethodPost, g.URL+"/v1/chat/completions", strings.NewReader(opsChat("m2", false, "hi")))
		req.Header.Set(gateway.HeaderProfile, fmt.Sprintf("p%02d", i))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	good := subscribersSeen(t, g.URL)
	waitSubscribers(t, good, 1, 5*time.Second)

	u, _ := url.Parse(g.URL)
	conn, err := net.Dial("tcp", u.Host)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "GET /admin/events HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\n\r\n", u.Host, testAdminKey)
	waitSubscribers(t, good, 2, 5*time.Second)

	var mu sync.Mutex
	var worst time.Duration
	requests := 0
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() { // requests go on while the slow reader stalls
		defer close(done)
		for {
			select {
			case <-stop:
				return
			default:
			}
			start := time.Now()
			resp, err := http.Post(g.URL+"/v1/chat/completions", "application/json", strings.NewReader(opsChat("m2", false, "hi")))
			if err != nil {
				t.Errorf("a request while a stream stalls: %v", err)
				return
			}
			out, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 200 {
				t.Errorf("a request while a stream stalls: %d %s", resp.StatusCode, out)
				return
			}
			mu.Lock()
			worst = max(worst, time.Since(start))
			requests++
			mu.Unlock()
			time.Sleep(5 * time.Millisecond)
		}
	}()
	stopRequests := sync.OnceFunc(func() { close(stop); <-done })
	defer stopRequests()
	start := time.Now()
	waitSubscribers(t, good, 1, 60*time.Second)
	stopRequests()
	t.Logf("the slow reader was dropped after %s; %d requests meanwhile, the slowest %s", time.Since(start).Round(time.Millisecond), requests, worst)
	if worst > 2*time.Second {
		t.Errorf("a request took %s while a stream stalled", worst)
	}
	// The dropped client's connection is closed: it reads what was sent, then the end.
	conn.SetReadDeadline(time.Now().Add(30 * time.Second))
	n, err := io.Copy(io.Discard, conn)
	if ne, ok := err.(net.Error); ok && ne.Timeout() {
		t.Errorf("the dropped stream's connection is still open after %d bytes", n)
	}
}

// TestAdminEvents_EndOnShutdown: CloseEvents (the start of a graceful shutdown) ends
// every stream and refuses new ones; so does Stop.
func TestAdminEvents_EndOnShutdown(t *testing.T) {
	for _, how := range []string{"CloseEvents", "Stop"} {
		t.Run(how, func(t *testing.T) {
			e := newFakeEngine(t)
			g := newOpsGateway(t, e, func(o *gateway.Options, _ *openaicompat.Options) { o.EventInterval = 20 * time.Millisecond })
			es := openEvents(t, g.URL)
			es.until(t, 5*time.Second, "a first event", func(observe.LiveSnapshot) bool { return true })
			if how == "Stop" {
				g.gw.Stop()
			} else {
				g.gw.CloseEvents()
			}
			select {
			case <-es.done:
			case <-time.After(5 * time.Second):
				t.Fatal("the stream did not end")
			}
			if code := g.admin(t, "/admin/events", nil); code != 503 {
				t.Errorf("a new stream after %s: %d", how, code)
			}
		})
	}
}

// A row whose profile is on auto carries the chooser's latest decision for that profile:
// the strategy it gave, why, and its estimate per strategy open to the backend, the same
// decision the cost model holds.
func TestAdminEvents_AutoRowsCarryTheirEstimates(t *testing.T) {
	sc := &scripted{replies: []string{stopReply, stopReply}}
	cm := kvcache.NewCostModel(kvcache.Options{Engines: map[string]kvcache.Engine{"up": {Capabilities: kvcache.Capabilities{CachesPrefixes: true}}}})
	gw := scriptedGateway(t, sc, func(o *gateway.Options) {
		o.AdminKey = testAdminKey
		o.State = state.NewMemory(state.Options{})
		o.Strategy = gateway.StrategyAuto
		o.Tools = bigCatalog(t)
		o.Chooser = &gateway.CostChooser{Model: cm}
	})
	for i := range 2 {
		resp, body := postWithThread(t, gw, `{"model":"m1","messages":[{"role":"user","content":"hi"}]}`, fmt.Sprint("t", i))
		if resp.StatusCode != 200 {
			t.Fatalf("%d %s", resp.StatusCode, body)
		}
	}
	es := openEvents(t, gw.URL)
	snap := es.until(t, 10*time.Second, "an auto row", func(s observe.LiveSnapshot) bool {
		return len(s.Rows) == 1 && s.Rows[0].Auto != nil
	})
	r := snap.Rows[0]
	want, _ := cm.Last(gateway.DefaultProfile, "up")
	if r.AutoChoice != string(want.Strategy) || r.Auto.Strategy != string(want.Strategy) || r.Auto.Reason != want.Reason || r.Strategy != string(want.Strategy) {
		t.Errorf("row %s/%s: auto_choice %q, auto %+v; the model's decision %s (%s)", r.Profile, r.Strategy, r.AutoChoice, r.Auto, want.Strategy, want.Reason)
	}
	if len(r.Auto.Estimates) != len(want.Estimates) || len(want.Estimates) < 2 {
		t.Fatalf("estimates %+v, the model's %+v", r.Auto.Estimates, want.Estimates)
	}
	for i, e := range want.Estimates {
		if g := r.Auto.Estimates[i]; g.Strategy != string(e.Strategy) || g.SecondsPerSession != e.Seconds {
			t.Errorf("estimate %d: %+v, the model's %+v", i, g, e)
		}
	}
}
