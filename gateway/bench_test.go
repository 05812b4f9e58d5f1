package gateway_test

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"testing"

	"github.com/maskgate/maskgate/backends/openaicompat"
	"github.com/maskgate/maskgate/bench/overhead/workload"
	"github.com/maskgate/maskgate/gateway"
	"github.com/maskgate/maskgate/toolsearch/state"
)

// The overhead benchmarks time one request at a time over real loopback HTTP with
// keep-alive clients, on three paths to the same canned upstream:
//
//	path=proxy    a bare httputil.ReverseProxy, the floor for any HTTP proxy
//	path=gateway  the gateway, with the pass-through backend
//	path=direct   the upstream itself
//
// Allocations are the whole process's: client, proxy or gateway, and upstream. What the
// gateway adds over a proxy is the difference between its row and the proxy's; compare
// them with
//
//	go test -run '^$' -bench Overhead -benchmem -count 10 ./gateway > new.txt
//	benchstat -col /path new.txt
//
// (proxy runs first, so benchstat shows the others relative to it). Overhead_Handler
// calls the handlers directly, without the client's HTTP hop, to isolate what they cost.

func BenchmarkOverhead_Whole(b *testing.B)  { benchNetwork(b, false) }
func BenchmarkOverhead_Stream(b *testing.B) { benchNetwork(b, true) }

func benchNetwork(b *testing.B, stream bool) {
	for _, tools := range []int{workload.FewTools, workload.ManyTools} {
		body := workload.Request(tools, stream)
		env := newBenchEnv(b)
		for _, p := range []struct{ name, url string }{
			{"proxy", env.proxy.URL},
			{"gateway", env.gateway.URL},
			{"direct", env.upstream.URL},
		} {
			b.Run(fmt.Sprintf("tools=%d/path=%s", tools, p.name), func(b *testing.B) {
				c := &benchClient{url: p.url + "/v1/chat/completions", hc: &http.Client{Transport: benchTransport()}, stream: stream}
				defer c.hc.CloseIdleConnections()
				if err := c.do(body); err != nil { // and leave a warm connection behind
					b.Fatal(err)
				}
				b.ReportAllocs()
				for b.Loop() {
					if err := c.do(body); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

func BenchmarkOverhead_Handler(b *testing.B) {
	for _, stream := range []bool{false, true} {
		for _, tools := range []int{workload.FewTools, workload.ManyTools} {
			body := workload.Request(tools, stream)
			env := newBenchEnv(b)
			for _, p := range []struct {
				name string
				h    http.Handler
			}{
				{"proxy", env.proxyHandler},
				{"gateway", env.gatewayHandler},
				{"gateway-default", env.defaultHandler},
			} {
				mode := "whole"
				if stream {
					mode = "stream"
				}
				b.Run(fmt.Sprintf("mode=%s/tools=%d/path=%s", mode, tools, p.name), func(b *testing.B) {
					w := &discardWriter{h: http.Header{}}
					serve := func() {
						w.reset()
						r, _ := http.NewRequestWithContext(context.Background(), http.MethodPost,
							"http://maskgate.bench/v1/chat/completions", bytes.NewReader(body))
						r.Header.Set("Content-Type", "application/json")
						p.h.ServeHTTP(w, r)
					}
					serve()
					if err := w.check(stream); err != nil {
						b.Fatal(err)
					}
					b.ReportAllocs()
					for b.Loop() {
						serve()
						if w.code != http.StatusOK {
							b.Fatalf("status %d", w.code)
						}
					}
				})
			}
		}
	}
}

// benchEnv is one canned upstream with a reverse proxy and a gateway in front of it,
// each on its own loopback listener. Both front ends get the same upstream transport
// settings as cmd/gateway's.
type benchEnv struct {
	upstream, proxy, gateway     *httptest.Server
	proxyHandler, gatewayHandler http.Handler
	// defaultHandler is the gateway as cmd/gateway runs it with no tools configured:
	// thread state kept, so a client's tools array of eager_below (20) tools or more is
	// managed (searched, loaded), smaller ones passed through.
	defaultHandler http.Handler
}

func newBenchEnv(b *testing.B) *benchEnv {
	b.Helper()
	up := httptest.NewServer(workload.Upstream())
	b.Cleanup(up.Close)
	target, err := url.Parse(up.URL)
	if err != nil {
		b.Fatal(err)
	}
	rp := &httputil.ReverseProxy{
		Rewrite:   func(pr *httputil.ProxyRequest) { pr.SetURL(target) },
		Transport: upstreamTransport(),
	}
	be, err := openaicompat.New(openaicompat.Options{Name: "bench", BaseURL: up.URL + "/v1",
		Transport: upstreamTransport(), ReportsCache: true})
	if err != nil {
		b.Fatal(err)
	}
	gw := gateway.New(gateway.Options{Upstreams: []gateway.Upstream{
		{Name: "bench", Kind: "vllm", Models: []string{workload.Model}, Backend: be},
	}})
	env := &benchEnv{upstream: up, proxyHandler: fullDuplex(rp), gatewayHandler: gw,
		defaultHandler: gateway.New(gateway.Options{Upstreams: []gateway.Upstream{
			{Name: "bench", Kind: "vllm", Models: []string{workload.Model}, Backend: be},
		}, State: state.NewMemory(state.Options{})})}
	env.proxy = httptest.NewServer(env.proxyHandler)
	b.Cleanup(env.proxy.Close)
	env.gateway = httptest.NewServer(gw)
	b.Cleanup(env.gateway.Close)
	return env
}

// fullDuplex lets a streaming proxy answer while its transport may still be finishing the
// request body. Without it the HTTP/1 server closes that body at the first flush and the
// transport, failing to read it, drops the upstream connection mid-stream: under load a
// bare ReverseProxy then cuts a few streams short (golang/go#40747).
func fullDuplex(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_ = http.NewResponseController(w).EnableFullDuplex() // unsupported by a test writer; harmless
		h.ServeHTTP(w, r)
	})
}

// upstreamTransport is cmd/gateway's upstream transport.
func upstreamTransport() *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConns = 256
	t.MaxIdleConnsPerHost = 64
	return t
}

// benchTransport is the client's: keep-alive, no compression, one connection reused.
func benchTransport() *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.DisableCompression = true
	return t
}

// benchClient sends one request and reads the whole answer, checking that it is what
// the upstream sent (a stream must end with [DONE]).
type benchClient struct {
	url    string
	hc     *http.Client
	stream bool
	buf    bytes.Buffer
}

func (c *benchClient) do(body []byte) error {
	req, err := http.NewRequest(http.MethodPost, c.url, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	c.buf.Reset()
	if _, err := c.buf.ReadFrom(resp.Body); err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("status %d: %s", resp.StatusCode, c.buf.Bytes())
	}
	return checkAnswer(c.buf.Bytes(), c.stream)
}

func checkAnswer(got []byte, stream bool) error {
	if stream {
		if !bytes.HasSuffix(got, []byte(workload.DoneFrame)) {
			return fmt.Errorf("stream does not end with [DONE]: %q", got)
		}
		return nil
	}
	if !bytes.Equal(got, workload.Completion()) {
		return fmt.Errorf("answer is not the upstream's: %q", got)
	}
	return nil
}

// discardWriter is a ResponseWriter that can flush, for calling a handler without a
// network: it keeps the status and the bytes, and its header map is reused.
type discardWriter struct {
	h       http.Header
	code    int
	body    bytes.Buffer
	flushes int
}

func (w *discardWriter) Header() http.Header { return w.h }

func (w *discardWriter) WriteHeader(code int) {
	if w.code == 0 {
		w.code = code
	}
}

func (w *discardWriter) Write(p []byte) (int, error) {
	w.WriteHeader(http.StatusOK)
	return w.body.Write(p)
}

func (w *discardWriter) Flush() { w.flushes++ }

func (w *discardWriter) reset() {
	clear(w.h)
	w.code, w.flushes = 0, 0
	w.body.Reset()
}

func (w *discardWriter) check(stream bool) error {
	if w.code != http.StatusOK {
		return fmt.Errorf("status %d: %s", w.code, w.body.Bytes())
	}
	if stream && w.flushes == 0 {
		return fmt.Errorf("a stream of %d bytes was never flushed", w.body.Len())
	}
	return checkAnswer(w.body.Bytes(), stream)
}

var _ http.Flusher = (*discardWriter)(nil)
