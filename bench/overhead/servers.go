package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/maskgate/maskgate/backends/openaicompat"
	"github.com/maskgate/maskgate/bench/overhead/workload"
	"github.com/maskgate/maskgate/gateway"
)

// Path names, in the order the report lists them.
const (
	pathDirect  = "direct"
	pathProxy   = "ReverseProxy"
	pathGateway = "gateway"
)

// target is one path under test: where requests go and the client that sends them.
type target struct {
	name   string
	url    string // of /v1/chat/completions
	client *http.Client
}

// servers are the in-process listeners of one measurement.
type servers struct {
	targets  []*target // direct, proxy, gateway
	upstream string    // the upstream's base URL
	gateway  string    // "in-process" or the running gateway's URL
	closers  []func()
}

// startServers starts the upstream, the reverse proxy and, unless c.Gateway names a
// running one, the gateway, each on its own loopback listener.
func startServers(c Config) (*servers, error) {
	s := &servers{}
	up, err := s.serve(c.UpstreamAddr, workload.Upstream())
	if err != nil {
		return nil, fmt.Errorf("upstream: listen on %s: %w", c.UpstreamAddr, err)
	}
	s.upstream = up
	upURL, err := url.Parse(up)
	if err != nil {
		s.close()
		return nil, err
	}
	rp := &httputil.ReverseProxy{
		Rewrite:   func(pr *httputil.ProxyRequest) { pr.SetURL(upURL) },
		Transport: upstreamTransport(),
		ErrorLog:  log.New(os.Stderr, "overhead: ReverseProxy: ", 0), // failures also reach the client, and are counted
	}
	// Full duplex lets the proxy stream its answer while its transport may still be
	// finishing the request body; without it the HTTP/1 server closes that body at the
	// first flush and, under load, a few streams are cut short (golang/go#40747).
	proxy, err := s.serve("127.0.0.1:0", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_ = http.NewResponseController(w).EnableFullDuplex()
		rp.ServeHTTP(w, r)
	}))
	if err != nil {
		s.close()
		return nil, fmt.Errorf("proxy: %w", err)
	}
	gw := strings.TrimRight(c.Gateway, "/")
	s.gateway = gw
	if gw == "" {
		be, err := openaicompat.New(openaicompat.Options{Name: "bench", BaseURL: up + "/v1",
			Transport: upstreamTransport(), ReportsCache: true})
		if err != nil {
			s.close()
			return nil, err
		}
		h := gateway.New(gateway.Options{Upstreams: []gateway.Upstream{
			{Name: "bench", Kind: "vllm", Models: []string{workload.Model}, Backend: be},
		}})
		if gw, err = s.serve("127.0.0.1:0", h); err != nil {
			s.close()
			return nil, fmt.Errorf("gateway: %w", err)
		}
		s.gateway = "in-process"
	}
	for _, t := range []struct{ name, base string }{{pathDirect, up}, {pathProxy, proxy}, {pathGateway, gw}} {
		tr := clientTransport(c.MaxInFlight)
		s.closers = append(s.closers, tr.CloseIdleConnections)
		s.targets = append(s.targets, &target{name: t.name, url: t.base + "/v1/chat/completions", client: &http.Client{Transport: tr}})
	}
	return s, nil
}

// serve serves h on addr and returns its base URL.
func (s *servers) serve(addr string, h http.Handler) (string, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return "", err
	}
	hs := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, ErrorLog: log.New(io.Discard, "", 0)}
	go func() {
		if err := hs.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Printf("overhead: serve %s: %v", ln.Addr(), err)
		}
	}()
	s.closers = append(s.closers, func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = hs.Shutdown(ctx)
	})
	return "http://" + ln.Addr().String(), nil
}

// close stops the clients first, then the servers.
func (s *servers) close() {
	for i := len(s.closers) - 1; i >= 0; i-- {
		s.closers[i]()
	}
}

// upstreamTransport is cmd/gateway's upstream transport, which the proxy gets too.
func upstreamTransport() *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConns = 256
	t.MaxIdleConnsPerHost = 64
	return t
}

// clientTransport keeps up to n connections alive, so that after the warm-up a request
// does not pay for a dial.
func clientTransport(n int) *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.DisableCompression = true
	t.MaxIdleConns = n
	t.MaxIdleConnsPerHost = n
	return t
}
