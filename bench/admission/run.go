package main

import (
	"bufio"
	"bytes"
	"context"
	cryptorand "crypto/rand"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net"
	"net/http"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/maskgate/maskgate/backends/openaicompat"
	"github.com/maskgate/maskgate/bench/overhead/workload"
	"github.com/maskgate/maskgate/gateway"
	"github.com/maskgate/maskgate/tenant"
)

// Config is one run. Zero fields take the defaults of withDefaults.
type Config struct {
	Duration   time.Duration // how long arrivals are sent; default 30s
	Rate       float64       // arrivals per second, per key; default 200
	Clients    int           // workers per key; default 64
	ChunkDelay time.Duration // upstream pause before each event; default 2ms
	GreedyRPM  int           // greedy's requests_per_minute; default 60 × Rate / 4
	Sample     time.Duration // memory sampling period; default 250ms
	// MaxRetained is the most heap a request may leave live behind it, in bytes,
	// measured after a GC between the run's two halves and at its end; default 1024.
	MaxRetained int
}

func (c Config) withDefaults() Config {
	if c.Duration == 0 {
		c.Duration = 30 * time.Second
	}
	if c.Rate == 0 {
		c.Rate = 200
	}
	if c.Clients == 0 {
		c.Clients = 64
	}
	if c.ChunkDelay == 0 {
		c.ChunkDelay = 2 * time.Millisecond
	}
	if c.GreedyRPM == 0 {
		c.GreedyRPM = max(1, int(60*c.Rate/4))
	}
	if c.Sample == 0 {
		c.Sample = 250 * time.Millisecond
	}
	if c.MaxRetained == 0 {
		c.MaxRetained = 1024
	}
	return c
}

func (c Config) validate() error {
	switch {
	case c.Duration <= 0 || c.Rate <= 0 || c.Clients <= 0 || c.ChunkDelay < 0 || c.GreedyRPM <= 0 || c.Sample <= 0:
		return errors.New("-duration, -rate, -clients, -greedy-rpm and -sample must be positive")
	case float64(c.GreedyRPM) >= 60*c.Rate:
		return fmt.Errorf("-greedy-rpm %d is not below the %g requests a minute greedy offers: it would see no 429", c.GreedyRPM, 60*c.Rate)
	}
	return nil
}

// Keys of the run; they are generated per run and never leave the process.
const (
	steady = "steady"
	greedy = "greedy"
)

// KeyResult is what one key's clients saw.
type KeyResult struct {
	Key              string
	Limit            string // the limit configured, in words
	Sent             int
	OK               int // 200 and the stream ended with [DONE]
	TooMany          int // 429 with Retry-After
	Other            int // anything else, transport errors included
	FirstOther       string
	Dropped          int // arrivals with every worker busy
	ExpectedOKAtMost int // what the limit lets through in the run's time
	P50, P99         time.Duration
}

// Memory is the process's memory over the run.
type Memory struct {
	Samples                          int
	HeapStart, HeapFirst, HeapSecond uint64 // HeapInuse: at start, highest in each half
	RSSStart, RSSEnd                 uint64 // 0 where /proc/self/statm cannot be read
	MaxGoroutines                    int
	// LiveHalf and LiveEnd are the live heap (HeapAlloc after a GC, nothing in flight)
	// after the first half of the load and after the second; SecondHalfRequests is how
	// many requests the second half answered. RetainedPerRequest is their quotient, the
	// heap each request of the second half left live (0 if it shrank): a leak's size.
	LiveHalf, LiveEnd  uint64
	SecondHalfRequests int
	RetainedPerRequest float64
}

// Report is a run's outcome.
type Report struct {
	Config   Config
	Keys     []KeyResult
	Memory   Memory
	Problems []string // the checks that failed; none: pass
}

// Run starts the upstream and the gateway on loopback, sends the load and checks it.
func Run(ctx context.Context, c Config) (*Report, error) {
	c = c.withDefaults()
	if err := c.validate(); err != nil {
		return nil, err
	}
	upLn, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	up := &http.Server{Handler: slowEvents(workload.Upstream(), c.ChunkDelay)}
	go up.Serve(upLn)
	defer up.Close()

	keys := map[string]string{steady: randomKey(), greedy: randomKey()}
	ring, err := tenant.NewKeyring([]tenant.Key{
		{Name: steady, Hash: tenant.HashOf(keys[steady]), Limits: tenant.Limits{RequestsPerMinute: int(60 * c.Rate * 10), MaxConcurrent: 4 * c.Clients}},
		{Name: greedy, Hash: tenant.HashOf(keys[greedy]), Limits: tenant.Limits{RequestsPerMinute: c.GreedyRPM}},
	})
	if err != nil {
		return nil, err
	}
	be, err := openaicompat.New(openaicompat.Options{Name: "bench", BaseURL: "http://" + upLn.Addr().String() + "/v1"})
	if err != nil {
		return nil, err
	}
	gw := gateway.New(gateway.Options{
		Upstreams: []gateway.Upstream{{Name: "bench", Models: []string{workload.Model}, Backend: be,
			MaxInFlight: 4 * c.Clients, MaxQueue: 4 * c.Clients, QueueTimeout: 10 * time.Second}},
		Keys:     ring,
		Registry: prometheus.NewRegistry(),
		Logger:   slog.New(slog.DiscardHandler),
	})
	gwLn, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	srv := &http.Server{Handler: gw, ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(gwLn)
	defer srv.Close()
	url := "http://" + gwLn.Addr().String() + "/v1/chat/completions"

	tr := &http.Transport{MaxIdleConns: 4 * c.Clients, MaxIdleConnsPerHost: 4 * c.Clients}
	defer tr.CloseIdleConnections()
	body := workload.Request(workload.FewTools, true)

	rep := &Report{Config: c}
	sampler := startSampler(ctx, c.Sample)
	start := time.Now()
	results := []*keyRun{{name: steady, key: keys[steady]}, {name: greedy, key: keys[greedy]}}
	// The load runs in two halves with nothing in flight between them, so that what a
	// request leaves live can be read apart from what the first requests set up once
	// (connections, pools, buckets): the second half's growth of the live heap.
	half := c
	half.Duration = c.Duration / 2
	var live [2]uint64
	var sentHalf int
	for i := range live {
		var wg sync.WaitGroup
		for _, kr := range results {
			wg.Add(1)
			go func() {
				defer wg.Done()
				kr.drive(ctx, half, tr, url, body)
			}()
		}
		wg.Wait()
		live[i] = liveHeap()
		if i == 0 {
			sentHalf = sent(results)
		}
	}
	elapsed := time.Since(start)
	rep.Memory = sampler.stop()
	m := &rep.Memory
	m.LiveHalf, m.LiveEnd, m.SecondHalfRequests = live[0], live[1], sent(results)-sentHalf
	if m.SecondHalfRequests > 0 && live[1] > live[0] {
		m.RetainedPerRequest = float64(live[1]-live[0]) / float64(m.SecondHalfRequests)
	}

	for _, kr := range results {
		r := kr.result()
		switch kr.name {
		case steady:
			r.Limit = "none reached"
			r.ExpectedOKAtMost = r.Sent
		case greedy:
			r.Limit = strconv.Itoa(c.GreedyRPM) + " requests/min"
			r.ExpectedOKAtMost = c.GreedyRPM + int(math.Ceil(float64(c.GreedyRPM)*elapsed.Minutes()))
		}
		rep.Keys = append(rep.Keys, r)
	}
	rep.check()
	return rep, nil
}

// liveHeap is the heap still reachable: HeapAlloc after two collections (the second
// frees what the first's finalizers released).
func liveHeap() uint64 {
	var ms runtime.MemStats
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

func sent(keys []*keyRun) int {
	n := 0
	for _, k := range keys {
		k.mu.Lock()
		n += k.sent
		k.mu.Unlock()
	}
	return n
}

// check fills Problems with every check that failed.
func (r *Report) check() {
	for _, k := range r.Keys {
		if k.Other > 0 {
			r.Problems = append(r.Problems, fmt.Sprintf("%s: %d requests failed otherwise than 429 (first: %s)", k.Key, k.Other, k.FirstOther))
		}
		switch k.Key {
		case steady:
			if k.TooMany > 0 || k.OK != k.Sent {
				r.Problems = append(r.Problems, fmt.Sprintf("steady, below its limits: %d of %d ok, %d × 429", k.OK, k.Sent, k.TooMany))
			}
		case greedy:
			if k.TooMany == 0 {
				r.Problems = append(r.Problems, "greedy, above its limit, got no 429")
			}
			if k.OK > k.ExpectedOKAtMost {
				r.Problems = append(r.Problems, fmt.Sprintf("greedy got %d answers, more than its limit allows (%d)", k.OK, k.ExpectedOKAtMost))
			}
		}
	}
	m := r.Memory
	if m.Samples < 4 {
		r.Problems = append(r.Problems, fmt.Sprintf("only %d memory samples: run longer", m.Samples))
	} else if m.HeapSecond > m.HeapFirst+max(m.HeapFirst/4, 4<<20) {
		r.Problems = append(r.Problems, fmt.Sprintf("memory grew: HeapInuse at most %s in the first half, %s in the second", mib(m.HeapFirst), mib(m.HeapSecond)))
	}
	if m.SecondHalfRequests < 50 {
		r.Problems = append(r.Problems, fmt.Sprintf("only %d requests in the run's second half: too few to bound what each leaves live; run longer", m.SecondHalfRequests))
	} else if m.RetainedPerRequest > float64(r.Config.MaxRetained) {
		r.Problems = append(r.Problems, fmt.Sprintf("memory leaks: the live heap grew %s over the second half's %d requests, %.0f bytes a request (at most %d)",
			mib(m.LiveEnd-m.LiveHalf), m.SecondHalfRequests, m.RetainedPerRequest, r.Config.MaxRetained))
	}
}

// keyRun is one key's generator: a pacer and a pool of workers.
type keyRun struct {
	name, key string

	mu         sync.Mutex
	sent, ok   int
	tooMany    int
	other      int
	firstOther string
	dropped    int
	times      []time.Duration
}

func (k *keyRun) drive(ctx context.Context, c Config, tr http.RoundTripper, url string, body []byte) {
	work := make(chan struct{})
	var wg sync.WaitGroup
	for range c.Clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range work {
				k.one(ctx, tr, url, body)
			}
		}()
	}
	interval := time.Duration(float64(time.Second) / c.Rate)
	deadline := time.Now().Add(c.Duration)
	next := time.Now()
	for next.Before(deadline) && ctx.Err() == nil {
		select {
		case work <- struct{}{}:
		default:
			k.mu.Lock()
			k.dropped++
			k.mu.Unlock()
		}
		next = next.Add(interval)
		time.Sleep(time.Until(next))
	}
	close(work)
	wg.Wait()
}

func (k *keyRun) one(ctx context.Context, tr http.RoundTripper, url string, body []byte) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+k.key)
	start := time.Now()
	status, problem := exchange(tr, req)
	took := time.Since(start)
	k.mu.Lock()
	defer k.mu.Unlock()
	k.sent++
	switch {
	case status == http.StatusOK && problem == "":
		k.ok++
		k.times = append(k.times, took)
	case status == http.StatusTooManyRequests && problem == "":
		k.tooMany++
	default:
		k.other++
		if k.firstOther == "" {
			k.firstOther = fmt.Sprintf("status %d %s", status, problem)
		}
	}
}

// exchange sends req and reads the answer: a 200 must be a stream ending in [DONE], a
// 429 must carry Retry-After. problem says what was wrong, "" when nothing.
func exchange(tr http.RoundTripper, req *http.Request) (int, string) {
	resp, err := tr.RoundTrip(req)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	switch resp.StatusCode {
	case http.StatusOK:
		last := ""
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			if line := sc.Text(); line != "" {
				last = line
			}
		}
		if err := sc.Err(); err != nil {
			return resp.StatusCode, err.Error()
		}
		if last != strings.TrimSpace(workload.DoneFrame) {
			return resp.StatusCode, "stream ended without [DONE]: " + last
		}
	case http.StatusTooManyRequests:
		_, _ = io.Copy(io.Discard, resp.Body)
		if resp.Header.Get("Retry-After") == "" {
			return resp.StatusCode, "429 without Retry-After"
		}
	default:
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 300))
		return resp.StatusCode, string(msg)
	}
	return resp.StatusCode, ""
}

func (k *keyRun) result() KeyResult {
	k.mu.Lock()
	defer k.mu.Unlock()
	slices.Sort(k.times)
	return KeyResult{Key: k.name, Sent: k.sent, OK: k.ok, TooMany: k.tooMany, Other: k.other, FirstOther: k.firstOther,
		Dropped: k.dropped, P50: percentile(k.times, 0.50), P99: percentile(k.times, 0.99)}
}

func percentile(sorted []time.Duration, q float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	return sorted[min(len(sorted)-1, int(q*float64(len(sorted))))]
}

// slowEvents makes each flushed event of h wait d first, so that streams last and
// overlap as an engine's do.
func slowEvents(h http.Handler, d time.Duration) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.ServeHTTP(&slowFlusher{ResponseWriter: w, delay: d}, r)
	})
}

type slowFlusher struct {
	http.ResponseWriter
	delay time.Duration
}

func (s *slowFlusher) FlushError() error {
	time.Sleep(s.delay)
	return http.NewResponseController(s.ResponseWriter).Flush()
}

func (s *slowFlusher) Unwrap() http.ResponseWriter { return s.ResponseWriter }

func randomKey() string {
	b := make([]byte, 16)
	if _, err := io.ReadFull(cryptorand.Reader, b); err != nil {
		panic(err)
	}
	return fmt.Sprintf("bench-%x", b)
}

// sampler reads memory every period until stopped.
type sampler struct {
	cancel context.CancelFunc
	done   chan Memory
}

func startSampler(ctx context.Context, period time.Duration) *sampler {
	ctx, cancel := context.WithCancel(ctx)
	s := &sampler{cancel: cancel, done: make(chan Memory, 1)}
	var ms runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms)
	start := ms.HeapInuse
	rssStart := rss()
	go func() {
		var heap []uint64
		maxG := 0
		t := time.NewTicker(period)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				m := Memory{Samples: len(heap), HeapStart: start, RSSStart: rssStart, RSSEnd: rss(), MaxGoroutines: maxG}
				if len(heap) > 0 {
					m.HeapFirst = slices.Max(heap[:max(1, len(heap)/2)])
					m.HeapSecond = slices.Max(heap[len(heap)/2:])
				}
				s.done <- m
				return
			case <-t.C:
				runtime.ReadMemStats(&ms)
				heap = append(heap, ms.HeapInuse)
				maxG = max(maxG, runtime.NumGoroutine())
			}
		}
	}()
	return s
}

func (s *sampler) stop() Memory {
	s.cancel()
	return <-s.done
}

// rss is the resident set size from /proc/self/statm, or 0 where there is none.
func rss() uint64 {
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b))
	if len(f) < 2 {
		return 0
	}
	pages, _ := strconv.ParseUint(f[1], 10, 64)
	return pages * uint64(os.Getpagesize())
}

func mib(b uint64) string { return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20)) }
