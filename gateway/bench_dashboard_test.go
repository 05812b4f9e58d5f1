package gateway_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/maskgate/maskgate/backends/openaicompat"
	"github.com/maskgate/maskgate/bench/overhead/workload"
	"github.com/maskgate/maskgate/gateway"
	"github.com/maskgate/maskgate/toolsearch/state"
)

// BenchmarkOverhead_Dashboard times one request at a time through the gateway (over
// loopback, the canned upstream, 4 tools, whole and streamed answers) while a dashboard
// event stream is open and while none is, alternating every 100 requests within one run
// so both halves share the machine's state. It reports each half's time per request and
// their ratio (open/closed): what watching the gateway costs the requests it serves.
// interval=1s is the default; interval=10ms publishes a hundred snapshots a second.
func BenchmarkOverhead_Dashboard(b *testing.B) {
	for _, stream := range []bool{false, true} {
		for _, interval := range []time.Duration{time.Second, 10 * time.Millisecond} {
			b.Run(fmt.Sprintf("stream=%v/interval=%s", stream, interval), func(b *testing.B) {
				benchDashboard(b, stream, interval)
			})
		}
	}
}

func benchDashboard(b *testing.B, stream bool, interval time.Duration) {
	up := httptest.NewServer(workload.Upstream())
	b.Cleanup(up.Close)
	be, err := openaicompat.New(openaicompat.Options{Name: "bench", BaseURL: up.URL + "/v1", Transport: upstreamTransport(), ReportsCache: true})
	if err != nil {
		b.Fatal(err)
	}
	gw := httptest.NewServer(gateway.New(gateway.Options{
		Upstreams: []gateway.Upstream{{Name: "bench", Kind: "vllm", Models: []string{workload.Model}, Backend: be}},
		State:     state.NewMemory(state.Options{}), AdminKey: testAdminKey, EventInterval: interval,
	}))
	b.Cleanup(gw.Close)
	body := workload.Request(workload.FewTools, stream)
	c := &benchClient{url: gw.URL + "/v1/chat/completions", hc: &http.Client{Transport: benchTransport()}, stream: stream}
	defer c.hc.CloseIdleConnections()
	if err := c.do(body); err != nil {
		b.Fatal(err)
	}

	// watch opens an event stream that reads and discards every snapshot; the returned
	// func closes it and waits for its reader.
	watch := func() func() {
		ctx, cancel := context.WithCancel(context.Background())
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, gw.URL+"/admin/events", nil)
		req.Header.Set("Authorization", "Bearer "+testAdminKey)
		resp, err := http.DefaultClient.Do(req)
		if err != nil || resp.StatusCode != 200 {
			b.Fatalf("events: %v %v", err, resp)
		}
		first := make([]byte, 1)
		if _, err := io.ReadFull(resp.Body, first); err != nil { // subscribed
			b.Fatal(err)
		}
		done := make(chan struct{})
		go func() {
			io.Copy(io.Discard, resp.Body)
			close(done)
		}()
		return func() {
			cancel()
			resp.Body.Close()
			<-done
		}
	}

	const block = 100
	var took [2]time.Duration // closed, open
	var n [2]int
	open := 0
	var unwatch func()
	i := 0
	b.ReportAllocs()
	for b.Loop() {
		if i%block == 0 && i > 0 {
			if open == 1 {
				unwatch()
			} else {
				unwatch = watch()
			}
			open = 1 - open
		}
		i++
		t := time.Now()
		if err := c.do(body); err != nil {
			b.Fatal(err)
		}
		took[open] += time.Since(t)
		n[open]++
	}
	if open == 1 {
		unwatch()
	}
	if n[0] == 0 || n[1] == 0 {
		return // too few iterations to compare (the first round of b.Loop)
	}
	closed, opened := float64(took[0].Nanoseconds())/float64(n[0]), float64(took[1].Nanoseconds())/float64(n[1])
	b.ReportMetric(closed/1000, "closed-µs/req")
	b.ReportMetric(opened/1000, "open-µs/req")
	b.ReportMetric(opened/closed, "open/closed")
}
