package gateway_test

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"testing"

	"github.com/maskgate/maskgate/backends/oai"
	"github.com/maskgate/maskgate/backends/openaicompat"
	"github.com/maskgate/maskgate/backends/vllm"
	"github.com/maskgate/maskgate/bench/overhead/workload"
	"github.com/maskgate/maskgate/gateway"
	"github.com/maskgate/maskgate/toolsearch"
	"github.com/maskgate/maskgate/toolsearch/state"
)

// BenchmarkOverhead_Managed is the gateway managing a 500-tool profile catalog (~300 KB,
// ~75k tokens) against a bare httputil.ReverseProxy forwarding a client's request that
// carries the same 500 tools itself — what the client would send without the gateway.
// Each gateway request runs a search (progressive loading: the top results for the user
// message are loaded), resolves the thread, and builds the engine's body:
//
//	strategy=mask    vLLM's backend: the whole catalog plus a structural tag for the
//	                 meta-tools and the loaded tools
//	strategy=remove  the meta-tools and the loaded tools only
//	strategy=index   the meta-tools carrying the catalog's index, the loaded tools'
//	                 definitions in the progressive load's result and the structural tag
//
// Handlers are called in process (no client hop); the upstream is the canned one over
// loopback. Compare with
//
//	go test -run '^$' -bench Overhead_Managed -benchmem -count 6 ./gateway
func BenchmarkOverhead_Managed(b *testing.B) {
	env := newBenchEnv(b)
	full := workload.Request(workload.ManyTools, false)
	fo, err := oai.ParseObject(full)
	if err != nil {
		b.Fatal(err)
	}
	toolsJSON, _ := fo.Get("tools")
	tools, err := toolsearch.ParseTools(toolsJSON, "bench")
	if err != nil {
		b.Fatal(err)
	}
	cat, err := toolsearch.New(tools)
	if err != nil {
		b.Fatal(err)
	}
	ix := toolsearch.NewIndex(cat, toolsearch.Options{})
	client, err := oai.Delete(full, "tools")
	if err != nil {
		b.Fatal(err)
	}
	if client, err = oai.Delete(client, "tool_choice"); err != nil {
		b.Fatal(err)
	}

	managed := func(strategy gateway.Strategy) http.Handler {
		be, err := vllm.New(openaicompat.Options{Name: "bench", BaseURL: env.upstream.URL + "/v1",
			Transport: upstreamTransport()})
		if err != nil {
			b.Fatal(err)
		}
		return gateway.New(gateway.Options{
			Upstreams:   []gateway.Upstream{{Name: "bench", Kind: "vllm", Models: []string{workload.Model}, Backend: be}},
			Tools:       ix,
			State:       state.NewMemory(state.Options{}),
			Strategy:    strategy,
			Progressive: true,
		})
	}
	for _, p := range []struct {
		name string
		h    http.Handler
		body []byte
	}{
		{"proxy", env.proxyHandler, full},
		{"gateway/strategy=mask", managed(gateway.StrategyMask), client},
		{"gateway/strategy=remove", managed(gateway.StrategyRemove), client},
		{"gateway/strategy=index", managed(gateway.StrategyIndex), client},
	} {
		b.Run(fmt.Sprintf("tools=%d/path=%s", workload.ManyTools, p.name), func(b *testing.B) {
			w := &discardWriter{h: http.Header{}}
			serve := func() {
				w.reset()
				r, _ := http.NewRequestWithContext(context.Background(), http.MethodPost,
					"http://127.0.0.1/v1/chat/completions", bytes.NewReader(p.body)) // a loopback Host: the gateway has no keys
				r.Header.Set("Content-Type", "application/json")
				r.Header.Set("X-Thread-Id", "bench")
				p.h.ServeHTTP(w, r)
			}
			serve()
			if w.code != http.StatusOK {
				b.Fatalf("status %d", w.code)
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
