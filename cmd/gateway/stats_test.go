package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	collector "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/maskgate/maskgate/gateway/observe"
)

const statsAdminKey = "stats-admin-key-0123456789abcdef"

// cannedUpstream answers every chat request with one whole completion and records the
// traceparent it got.
func cannedUpstream(t *testing.T) (*httptest.Server, func() []string) {
	var mu sync.Mutex
	var seen []string
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.Header.Get("traceparent"))
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"id":"c","object":"chat.completion","created":1,"model":"m1","choices":[{"index":0,"message":{"role":"assistant","content":"hi"},"finish_reason":"stop"}],"usage":{"prompt_tokens":100,"completion_tokens":2,"total_tokens":102,"prompt_tokens_details":{"cached_tokens":75}}}`)
	}))
	t.Cleanup(up.Close)
	return up, func() []string { mu.Lock(); defer mu.Unlock(); return append([]string(nil), seen...) }
}

const statsConfig = `backends:
  - {name: vllm-a, kind: vllm, url: URL, models: ["m1"]}
admin_key_env: ADMIN_KEY
`

func chatOnce(t *testing.T, addr string) {
	t.Helper()
	resp, err := http.Post("http://"+addr+"/v1/chat/completions", "application/json",
		strings.NewReader(`{"model":"m1","messages":[{"role":"user","content":"x"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("chat: %d", resp.StatusCode)
	}
}

// TestStats_PrintsTheLiveTable: `gateway stats` against a running gateway prints, per
// event, a summary and a table whose row counts the requests sent, with their hit rate.
func TestStats_PrintsTheLiveTable(t *testing.T) {
	up, _ := cannedUpstream(t)
	g := startRunEnv(t, statsConfig, up, map[string]string{"ADMIN_KEY": statsAdminKey})
	for i := 0; i < 3; i++ {
		chatOnce(t, g.addr)
	}
	var out, errb bytes.Buffer
	getenv := func(k string) string { return map[string]string{"GW_ADMIN": statsAdminKey}[k] }
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if code := stats(ctx, []string{"-url", "http://" + g.addr, "-admin-key-env", "GW_ADMIN", "-n", "2"}, getenv, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	text := out.String()
	t.Logf("gateway stats printed:\n%s", text)
	if n := strings.Count(text, "BACKEND"); n != 2 {
		t.Errorf("%d tables, want 2", n)
	}
	if !regexp.MustCompile(`(?m)^vllm-a\s+default\s+\S+\s+3\s+[0-9.]+\s+0\s+75\.0%`).MatchString(text) {
		t.Errorf("no row for vllm-a with 3 requests at 75%%")
	}
	if !regexp.MustCompile(`requests 3 \([0-9.]+/s\)  errors 0  hit rate 75\.0%`).MatchString(text) {
		t.Errorf("no summary of 3 requests")
	}
}

// TestStats_SaysWhatIsWrong: a missing variable is a usage error (2); a wrong key or an
// unreachable gateway is 1 with the reason.
func TestStats_SaysWhatIsWrong(t *testing.T) {
	up, _ := cannedUpstream(t)
	g := startRunEnv(t, statsConfig, up, map[string]string{"ADMIN_KEY": statsAdminKey})
	ctx := context.Background()
	for _, c := range []struct {
		args []string
		env  map[string]string
		code int
		want string
	}{
		{[]string{"-url", "http://" + g.addr}, nil, 2, "usage: gateway stats"},
		{[]string{"-url", "http://" + g.addr, "-admin-key-env", "K"}, nil, 2, "K is empty"},
		{[]string{"-url", "http://" + g.addr, "-admin-key-env", "K"}, map[string]string{"K": "wrong"}, 1, "401 Unauthorized: send the admin key"},
		{[]string{"-url", "http://127.0.0.1:1", "-admin-key-env", "K"}, map[string]string{"K": "x"}, 1, "connection refused"},
	} {
		var out, errb bytes.Buffer
		code := stats(ctx, c.args, func(k string) string { return c.env[k] }, &out, &errb)
		if code != c.code || !strings.Contains(errb.String(), c.want) {
			t.Errorf("%v: exit %d (%s), want %d with %q", c.args, code, errb.String(), c.code, c.want)
		}
	}
}

// TestRun_TracesToTheOTLPEndpoint: with OTEL_EXPORTER_OTLP_ENDPOINT set, the gateway
// sends its spans there over OTLP/HTTP (flushed at shutdown) and the upstream gets the
// trace context; with nothing set it sends none and the upstream gets no traceparent.
func TestRun_TracesToTheOTLPEndpoint(t *testing.T) {
	var mu sync.Mutex
	var spans []string
	col := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		var req collector.ExportTraceServiceRequest
		if err := proto.Unmarshal(b, &req); err != nil || r.URL.Path != "/v1/traces" {
			t.Errorf("the collector got %s: %v", r.URL.Path, err)
		}
		mu.Lock()
		for _, rs := range req.ResourceSpans {
			for _, ss := range rs.ScopeSpans {
				for _, s := range ss.Spans {
					spans = append(spans, fmt.Sprintf("%s/%x", s.Name, s.TraceId))
				}
			}
		}
		mu.Unlock()
		w.Header().Set("Content-Type", "application/x-protobuf")
	}))
	defer col.Close()

	up, seen := cannedUpstream(t)
	g := startRunEnv(t, statsConfig, up, map[string]string{"ADMIN_KEY": statsAdminKey, "OTEL_EXPORTER_OTLP_ENDPOINT": col.URL})
	chatOnce(t, g.addr)
	g.cancel()
	if code := <-g.done; code != 0 {
		t.Fatalf("exit %d: %s", code, g.stderr.String())
	}
	g.done <- 0 // for the cleanup's wait
	tp := seen()
	m := regexp.MustCompile(`^00-([0-9a-f]{32})-[0-9a-f]{16}-01$`).FindStringSubmatch(tp[0])
	if len(tp) != 1 || m == nil {
		t.Fatalf("the upstream got traceparents %q", tp)
	}
	mu.Lock()
	got := append([]string(nil), spans...)
	mu.Unlock()
	want := []string{"chat m1/" + m[1], "chat m1/" + m[1]} // the request (server) and its upstream call (client)
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("the collector got spans %q, want %q", got, want)
	}
	if !strings.Contains(g.stderr.String(), "tracing: spans go over OTLP/HTTP") {
		t.Errorf("the log does not say tracing is on:\n%s", g.stderr.String())
	}

	up2, seen2 := cannedUpstream(t)
	g2 := startRunEnv(t, statsConfig, up2, map[string]string{"ADMIN_KEY": statsAdminKey})
	chatOnce(t, g2.addr)
	if tp := seen2(); len(tp) != 1 || tp[0] != "" || strings.Contains(g2.stderr.String(), "tracing") {
		t.Errorf("tracing off: the upstream got %q", tp)
	}
}

// TestStats_AdminBlockSizesTheLogAndPacesTheStream: the file's admin block reaches the
// gateway: request_log: 2 keeps the latest two of three requests, and the event stream
// says it sends a snapshot every event_interval (50ms).
func TestStats_AdminBlockSizesTheLogAndPacesTheStream(t *testing.T) {
	up, _ := cannedUpstream(t)
	g := startRunEnv(t, statsConfig+"admin:\n  request_log: 2\n  event_interval: 50ms\n", up, map[string]string{"ADMIN_KEY": statsAdminKey})
	for i := 0; i < 3; i++ {
		chatOnce(t, g.addr)
	}
	get := func(path string) *http.Response {
		t.Helper()
		req, _ := http.NewRequest(http.MethodGet, "http://"+g.addr+path, nil)
		req.Header.Set("Authorization", "Bearer "+statsAdminKey)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { resp.Body.Close() })
		return resp
	}
	var log struct {
		Capacity int               `json:"capacity"`
		Data     []json.RawMessage `json:"data"`
	}
	// The log may lag the answers by a moment: a request is recorded after its last byte.
	deadline := time.Now().Add(5 * time.Second)
	for {
		if err := json.NewDecoder(get("/admin/requests?limit=100").Body).Decode(&log); err != nil {
			t.Fatal(err)
		}
		if len(log.Data) >= 2 || time.Now().After(deadline) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if log.Capacity != 2 || len(log.Data) != 2 {
		t.Errorf("the request log holds %d requests of capacity %d, want 2 of 2", len(log.Data), log.Capacity)
	}
	events := bufio.NewReader(get("/admin/events").Body)
	for {
		line, err := events.ReadString('\n')
		if err != nil {
			t.Fatalf("the event stream ended before its first snapshot: %v", err)
		}
		if data, ok := strings.CutPrefix(line, "data: "); ok {
			var snap struct {
				IntervalMS int64 `json:"interval_ms"`
			}
			if err := json.Unmarshal([]byte(data), &snap); err != nil || snap.IntervalMS != 50 {
				t.Errorf("the first snapshot says interval_ms %d (%v), want 50", snap.IntervalMS, err)
			}
			break
		}
	}
}

// A row whose profile is on auto gets a line under the table with auto's latest choice,
// why, and its estimate per strategy.
func TestStats_PrintsAutosEstimates(t *testing.T) {
	snap := &observe.LiveSnapshot{Time: time.Unix(0, 0), Rows: []observe.LiveRow{
		{Backend: "gpu0", Profile: "agents", Strategy: "remove", AutoChoice: "remove", Requests: 4,
			Auto: &observe.LiveAuto{Strategy: "remove", Reason: "remove is cheapest at 0.604s per session",
				Estimates: []observe.LiveEstimate{{Strategy: "mask", SecondsPerSession: 1.4124}, {Strategy: "remove", SecondsPerSession: 0.6039}}}},
		{Backend: "gpu0", Profile: "plain", Strategy: "eager", Requests: 2},
	}}
	var out bytes.Buffer
	printSnapshot(&out, snap)
	want := "auto gpu0/agents: remove (remove is cheapest at 0.604s per session); per session: mask 1.41s remove 0.604s\n"
	if !strings.Contains(out.String(), want) {
		t.Errorf("printed:\n%s\nwant a line %q", out.String(), want)
	}
	if strings.Count(out.String(), "auto ") != 1 {
		t.Errorf("auto lines for rows not on auto:\n%s", out.String())
	}
}

// Index's estimate is printed as any other, and the strategies left out because their
// sessions outgrow the context window are named after them.
func TestStats_PrintsIndexAndTheUnfit(t *testing.T) {
	snap := &observe.LiveSnapshot{Time: time.Unix(0, 0), Rows: []observe.LiveRow{
		{Backend: "gpu0", Profile: "big", Strategy: "index", AutoChoice: "index", Requests: 4,
			Auto: &observe.LiveAuto{Strategy: "index", Reason: "index is cheapest",
				Estimates: []observe.LiveEstimate{{Strategy: "remove", SecondsPerSession: 18.04}, {Strategy: "index", SecondsPerSession: 11.89}},
				Unfit:     []string{"mask", "validate"}}},
	}}
	var out bytes.Buffer
	printSnapshot(&out, snap)
	want := "auto gpu0/big: index (index is cheapest); per session: remove 18s index 11.9s; outgrow the context: mask, validate\n"
	if !strings.Contains(out.String(), want) {
		t.Errorf("printed:\n%s\nwant a line %q", out.String(), want)
	}
}
