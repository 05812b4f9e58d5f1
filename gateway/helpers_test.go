package gateway_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/maskgate/maskgate/backends/openaicompat"
	"github.com/maskgate/maskgate/gateway"
	"github.com/maskgate/maskgate/toolsearch/state"
)

// upstream is a scripted OpenAI-compatible server that records what it received.
type upstream struct {
	*httptest.Server
	mu     sync.Mutex
	bodies [][]byte
	reply  http.HandlerFunc
}

func newUpstream(t testing.TB, reply http.HandlerFunc) *upstream {
	u := &upstream{reply: reply}
	u.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		u.mu.Lock()
		u.bodies = append(u.bodies, body)
		u.mu.Unlock()
		r.Body = io.NopCloser(bytes.NewReader(body))
		u.reply(w, r)
	}))
	t.Cleanup(u.Close)
	return u
}

func (u *upstream) lastBody() []byte {
	u.mu.Lock()
	defer u.mu.Unlock()
	if len(u.bodies) == 0 {
		return nil
	}
	return u.bodies[len(u.bodies)-1]
}

// gatewayFor starts a gateway whose only backend is up, serving every model.
type testGateway struct {
	*httptest.Server
	reg *prometheus.Registry
}

func gatewayFor(t testing.TB, up *upstream, opt ...func(*gateway.Options, *openaicompat.Options)) *testGateway {
	bo := openaicompat.Options{Name: "up", BaseURL: up.URL + "/v1", ReportsCache: true}
	o := gateway.Options{}
	for _, f := range opt {
		f(&o, &bo)
	}
	be, err := openaicompat.New(bo)
	if err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	o.Registry = reg
	// An option may set one Upstream without a Backend: its admission fields and context
	// window are kept.
	u := gateway.Upstream{Name: "up", Kind: "vllm", Models: []string{"m1", "*"}, Backend: be}
	if len(o.Upstreams) == 1 && o.Upstreams[0].Backend == nil {
		tmpl := o.Upstreams[0]
		u.MaxInFlight, u.MaxQueue, u.QueueTimeout, u.ContextWindow = tmpl.MaxInFlight, tmpl.MaxQueue, tmpl.QueueTimeout, tmpl.ContextWindow
	}
	o.Upstreams = []gateway.Upstream{u}
	srv := httptest.NewServer(gateway.New(o))
	t.Cleanup(srv.Close)
	return &testGateway{Server: srv, reg: reg}
}

func (g *testGateway) post(t testing.TB, body string) (*http.Response, []byte) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, g.URL+"/v1/chat/completions", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("read response: %v", err)
	}
	return resp, out
}

const completionJSON = `{"id":"chatcmpl-1","object":"chat.completion","created":1,"model":"m1","choices":[{"index":0,"message":{"role":"assistant","content":"hello"},"finish_reason":"stop"}],"usage":{"prompt_tokens":10,"completion_tokens":2,"total_tokens":12,"prompt_tokens_details":{"cached_tokens":8}}}`

func replyJSON(status int, body string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		io.WriteString(w, body)
	}
}

// replySSE writes each event as "data: e\n\n", then [DONE] unless done is false.
func replySSE(events []string, done bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		for _, e := range events {
			io.WriteString(w, "data: "+e+"\n\n")
			w.(http.Flusher).Flush()
		}
		if done {
			io.WriteString(w, "data: [DONE]\n\n")
		}
	}
}

// sseEvents splits an SSE body into its data payloads.
func sseEvents(body []byte) []string {
	var out []string
	for _, block := range strings.Split(string(body), "\n\n") {
		if strings.HasPrefix(block, "data: ") {
			out = append(out, strings.TrimPrefix(block, "data: "))
		}
	}
	return out
}

type httptestServer = httptest.Server

func newHTTPTest(h http.Handler) *httptest.Server { return httptest.NewServer(h) }

// testThreadSecret is the thread secret of gateways whose threads a test fills itself,
// through testThreads.
var testThreadSecret = []byte("test thread secret")

var testThreads = state.Threads{Secret: testThreadSecret}
