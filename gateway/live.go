package gateway

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Live statistics: record adds every request to in-memory counters per backend ×
// profile × strategy (cumulative, per second for rates, and a sliding window of TTFT
// and TPOT samples for percentiles), and GET /admin/events streams a snapshot of them
// every EventInterval to each subscriber (the dashboard, `gateway stats`). Nothing here
// reads Prometheus: the numbers are the requests' own.

const (
	// rateWindow is the span of the rates and the windowed hit rate: the last complete
	// seconds.
	rateWindow = 10
	// sampleWindow is the span of the TTFT and TPOT percentiles, over at most
	// maxSamples requests per row.
	sampleWindow = time.Minute
	maxSamples   = 256
	// historySeconds is how much per-second history a new subscriber gets, for the hit
	// rate chart.
	historySeconds = 300
	// maxSubscribers bounds the event streams open at once (503 past it).
	maxSubscribers = 64
	// subscriberQueue is how many snapshots a stream may fall behind before it is
	// dropped; eventsWriteTimeout bounds one write to a client that does not read.
	subscriberQueue    = 8
	eventsWriteTimeout = 5 * time.Second
)

// LiveSnapshot is one event of GET /admin/events.
type LiveSnapshot struct {
	Time        time.Time `json:"time"`
	UptimeS     float64   `json:"uptime_s"`
	IntervalMS  int64     `json:"interval_ms"`
	Subscribers int       `json:"subscribers"`
	// Threads is the thread store's statistics; null when the gateway keeps no state or
	// the store did not answer (ThreadsError then says so).
	Threads      *LiveThreads `json:"threads"`
	ThreadsError string       `json:"threads_error,omitempty"`
	// Totals sums the rows (its backend, profile and strategy are empty).
	Totals LiveRow   `json:"totals"`
	Rows   []LiveRow `json:"rows"`
	// History, in a stream's first event only, is the last historySeconds seconds that
	// had requests; Point, in every event, is the last complete second.
	History []LivePoint `json:"history,omitempty"`
	Point   *LivePoint  `json:"point,omitempty"`
}

// LiveThreads is GET /admin/threads's statistics.
type LiveThreads struct {
	Count        int        `json:"count"`
	Bytes        int        `json:"bytes"`
	OldestAccess *time.Time `json:"oldest_access"`
}

// LiveRow is one backend × profile × strategy since the gateway started. Rates are
// over the last rateWindow complete seconds; the hit rate is cached / prompt tokens,
// over everything (HitRate) and over that window (HitRateWindow), null without prompt
// tokens; percentiles are over the last sampleWindow.
type LiveRow struct {
	Backend  string `json:"backend"`
	Profile  string `json:"profile"`
	Strategy string `json:"strategy"`
	// AutoChoice, for a profile on strategy auto, is what its latest managed request on
	// this backend was given.
	AutoChoice string `json:"auto_choice,omitempty"`
	// Auto is, with AutoChoice, the chooser's latest decision for the profile on this
	// backend and what it rests on (where the chooser can say: Explainer).
	Auto *LiveAuto `json:"auto,omitempty"`

	Requests         int64 `json:"requests"`
	Errors           int64 `json:"errors"` // status 400 or more (499: the client went away)
	PromptTokens     int64 `json:"prompt_tokens"`
	CachedTokens     int64 `json:"cached_tokens"`
	ComputedTokens   int64 `json:"computed_tokens"`
	CompletionTokens int64 `json:"completion_tokens"`
	DisabledCalls    int64 `json:"disabled_calls"`

	RequestsPerS float64 `json:"requests_per_s"`
	PromptPerS   float64 `json:"prompt_tokens_per_s"`
	CachedPerS   float64 `json:"cached_tokens_per_s"`
	ComputedPerS float64 `json:"computed_tokens_per_s"`

	HitRate       *float64 `json:"hit_rate"`
	HitRateWindow *float64 `json:"hit_rate_window"`

	TTFTMS Percentiles `json:"ttft_ms"`
	TPOTMS Percentiles `json:"tpot_ms"`
}

// LiveAuto is one decision of strategy auto: what it chose and why, and its estimate of
// the engine seconds a session costs under each strategy open to the backend.
type LiveAuto struct {
	Strategy  string         `json:"strategy"`
	Reason    string         `json:"reason"`
	Estimates []LiveEstimate `json:"estimates"`
}

// LiveEstimate is one strategy's estimated engine seconds per session.
type LiveEstimate struct {
	Strategy          string  `json:"strategy"`
	SecondsPerSession float64 `json:"seconds_per_session"`
}

// explainAuto fills the rows of profiles on auto with the chooser's latest decisions.
func (s *Server) explainAuto(rows []LiveRow) {
	ex, ok := s.opt.Chooser.(Explainer)
	if !ok {
		return
	}
	for i := range rows {
		r := &rows[i]
		if r.AutoChoice == "" {
			continue
		}
		d, ok := ex.Explain(r.Profile, r.Backend)
		if !ok {
			continue
		}
		a := &LiveAuto{Strategy: string(d.Strategy), Reason: d.Reason, Estimates: make([]LiveEstimate, len(d.Estimates))}
		for j, e := range d.Estimates {
			a.Estimates[j] = LiveEstimate{Strategy: string(e.Strategy), SecondsPerSession: e.Seconds}
		}
		r.Auto = a
	}
}

// Percentiles of the samples in the window; null without samples.
type Percentiles struct {
	P50 *float64 `json:"p50"`
	P95 *float64 `json:"p95"`
	N   int      `json:"n"`
}

// LivePoint is one second of every row together.
type LivePoint struct {
	T        int64 `json:"t"` // unix seconds
	Requests int64 `json:"requests"`
	Prompt   int64 `json:"prompt_tokens"`
	Cached   int64 `json:"cached_tokens"`
}

type liveKey struct{ backend, profile, strategy string }

type liveSec struct {
	sec                                int64
	requests, prompt, cached, computed int64
}

// samples is a ring of the latest values (milliseconds) with their times.
type samples struct {
	at   [maxSamples]int64
	v    [maxSamples]float64
	next int
	n    int
}

func (s *samples) add(at time.Time, v float64) {
	s.at[s.next], s.v[s.next] = at.UnixNano(), v
	s.next = (s.next + 1) % maxSamples
	s.n = min(s.n+1, maxSamples)
}

// since appends to dst the values taken at or after t.
func (s *samples) since(dst []float64, t time.Time) []float64 {
	cut := t.UnixNano()
	for i := 0; i < s.n; i++ {
		if s.at[i] >= cut {
			dst = append(dst, s.v[i])
		}
	}
	return dst
}

type liveRow struct {
	key                                                              liveKey
	requests, errors, prompt, cached, computed, completion, disabled int64
	secs                                                             [16]liveSec
	ttft, tpot                                                       samples
}

// liveStats are the counters record feeds.
type liveStats struct {
	mu      sync.Mutex
	start   time.Time
	rows    map[liveKey]*liveRow
	auto    map[[2]string]string // backend, profile → latest choice under auto
	history [historySeconds]LivePoint
}

func newLiveStats(now time.Time) *liveStats {
	return &liveStats{start: now, rows: map[liveKey]*liveRow{}, auto: map[[2]string]string{}}
}

// add counts one finished request.
func (l *liveStats) add(x *exchange, rec *RequestRecord, total time.Duration) {
	k := liveKey{backend: x.backend, profile: rec.Profile, strategy: rec.Strategy}
	end := x.start.Add(total)
	sec := end.Unix()
	var prompt, cached, computed, completion int64
	if rec.PromptTokens != nil {
		prompt, computed, completion = int64(*rec.PromptTokens), int64(*rec.ComputedTokens), int64(*rec.CompletionTokens)
		if rec.CachedTokens != nil {
			cached = int64(*rec.CachedTokens)
		}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	row := l.rows[k]
	if row == nil {
		row = &liveRow{key: k}
		l.rows[k] = row
	}
	row.requests++
	if x.status >= 400 {
		row.errors++
	}
	row.prompt += prompt
	row.cached += cached
	row.computed += computed
	row.completion += completion
	row.disabled += int64(rec.DisabledCalls)
	b := &row.secs[sec%int64(len(row.secs))]
	if b.sec != sec {
		*b = liveSec{sec: sec}
	}
	b.requests++
	b.prompt += prompt
	b.cached += cached
	b.computed += computed
	h := &l.history[sec%historySeconds]
	if h.T != sec {
		*h = LivePoint{T: sec}
	}
	h.Requests++
	h.Prompt += prompt
	h.Cached += cached
	if x.stream && x.ttft > 0 && x.status == http.StatusOK {
		row.ttft.add(end, ms(x.ttft))
		// Time per output token: from the first chunk to the last, over the tokens
		// after the first.
		if n := completion - 1; n > 0 {
			decode := total - x.ttft
			if x.lastFrame > x.ttft {
				decode = x.lastFrame - x.ttft
			}
			row.tpot.add(end, ms(decode)/float64(n))
		}
	}
	if p := x.plan; p != nil && x.prof != nil && (x.prof.Strategy == StrategyAuto || x.prof.Strategy == "") {
		l.auto[[2]string{x.backend, x.prof.Name}] = string(p.Strategy())
	}
}

// snapshot is the statistics at now; with history, the per-second points too.
func (l *liveStats) snapshot(now time.Time, history bool) LiveSnapshot {
	nowSec := now.Unix()
	cut := now.Add(-sampleWindow)
	l.mu.Lock()
	defer l.mu.Unlock()
	snap := LiveSnapshot{Time: now.UTC(), UptimeS: now.Sub(l.start).Seconds(), Rows: make([]LiveRow, 0, len(l.rows))}
	var all [2][]float64 // ttft, tpot of every row
	var totWin liveSec
	for _, row := range l.rows {
		out := LiveRow{Backend: row.key.backend, Profile: row.key.profile, Strategy: row.key.strategy,
			AutoChoice: l.auto[[2]string{row.key.backend, row.key.profile}],
			Requests:   row.requests, Errors: row.errors, PromptTokens: row.prompt, CachedTokens: row.cached,
			ComputedTokens: row.computed, CompletionTokens: row.completion, DisabledCalls: row.disabled}
		var win liveSec
		for _, b := range row.secs {
			if b.sec >= nowSec-rateWindow && b.sec < nowSec {
				win.requests += b.requests
				win.prompt += b.prompt
				win.cached += b.cached
				win.computed += b.computed
			}
		}
		setRates(&out, win, row.prompt, row.cached)
		totWin.requests += win.requests
		totWin.prompt += win.prompt
		totWin.cached += win.cached
		totWin.computed += win.computed
		ttft, tpot := row.ttft.since(nil, cut), row.tpot.since(nil, cut)
		out.TTFTMS, out.TPOTMS = percentiles(ttft), percentiles(tpot)
		all[0], all[1] = append(all[0], ttft...), append(all[1], tpot...)
		t := &snap.Totals
		t.Requests += row.requests
		t.Errors += row.errors
		t.PromptTokens += row.prompt
		t.CachedTokens += row.cached
		t.ComputedTokens += row.computed
		t.CompletionTokens += row.completion
		t.DisabledCalls += row.disabled
		snap.Rows = append(snap.Rows, out)
	}
	setRates(&snap.Totals, totWin, snap.Totals.PromptTokens, snap.Totals.CachedTokens)
	snap.Totals.TTFTMS, snap.Totals.TPOTMS = percentiles(all[0]), percentiles(all[1])
	slices.SortFunc(snap.Rows, func(a, b LiveRow) int {
		return strings.Compare(a.Backend+"\x00"+a.Profile+"\x00"+a.Strategy, b.Backend+"\x00"+b.Profile+"\x00"+b.Strategy)
	})
	last := nowSec - 1
	if h := l.history[last%historySeconds]; h.T == last {
		snap.Point = &h
	} else {
		snap.Point = &LivePoint{T: last}
	}
	if history {
		for t := nowSec - historySeconds + 1; t <= nowSec; t++ { // the current second too, so far
			if h := l.history[((t%historySeconds)+historySeconds)%historySeconds]; h.T == t && t > 0 {
				snap.History = append(snap.History, h)
			}
		}
	}
	return snap
}

func setRates(out *LiveRow, win liveSec, prompt, cached int64) {
	out.RequestsPerS = float64(win.requests) / rateWindow
	out.PromptPerS = float64(win.prompt) / rateWindow
	out.CachedPerS = float64(win.cached) / rateWindow
	out.ComputedPerS = float64(win.computed) / rateWindow
	out.HitRate, out.HitRateWindow = ratio(cached, prompt), ratio(win.cached, win.prompt)
}

func ratio(a, b int64) *float64 {
	if b <= 0 {
		return nil
	}
	r := float64(a) / float64(b)
	return &r
}

func percentiles(v []float64) Percentiles {
	if len(v) == 0 {
		return Percentiles{}
	}
	slices.Sort(v)
	at := func(q float64) *float64 {
		i := int(q*float64(len(v))+0.5) - 1
		x := v[min(max(i, 0), len(v)-1)]
		return &x
	}
	return Percentiles{P50: at(0.50), P95: at(0.95), N: len(v)}
}

// eventHub fans snapshots out to the event streams. Its publisher runs only while
// someone listens: it starts with the first subscriber and ends with the last, or when
// the hub closes (shutdown).
type eventHub struct {
	mu      sync.Mutex
	subs    map[*subscriber]struct{}
	running bool
	closed  bool
}

type subscriber struct {
	ch   chan []byte
	gone chan struct{} // closed when dropped or the hub closes
	slow atomic.Bool   // dropped for falling behind
	once sync.Once
}

func (sub *subscriber) drop() { sub.once.Do(func() { close(sub.gone) }) }

var (
	errTooManyStreams = &apiError{Status: http.StatusServiceUnavailable, Type: "server_error", Code: "too_many_streams", RetryAfter: "5",
		Message: "too many admin event streams are open; close one"}
	errEventsClosed = &apiError{Status: http.StatusServiceUnavailable, Type: "server_error", Code: "server_shutting_down",
		Message: "the gateway is shutting down"}
)

// join adds a subscriber, starting the publisher if it is the first.
func (s *Server) join() (*subscriber, error) {
	h := &s.hub
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed || s.stopping.Err() != nil {
		return nil, errEventsClosed
	}
	if len(h.subs) >= maxSubscribers {
		return nil, errTooManyStreams
	}
	if h.subs == nil {
		h.subs = map[*subscriber]struct{}{}
	}
	sub := &subscriber{ch: make(chan []byte, subscriberQueue), gone: make(chan struct{})}
	h.subs[sub] = struct{}{}
	if !h.running {
		h.running = true
		go s.publish()
	}
	return sub, nil
}

func (s *Server) leave(sub *subscriber) {
	s.hub.mu.Lock()
	delete(s.hub.subs, sub)
	s.hub.mu.Unlock()
	sub.drop()
}

// CloseEvents ends every admin event stream and refuses new ones: for the start of a
// graceful shutdown (http.Server.RegisterOnShutdown), since a stream that never ends
// would hold the shutdown for its whole grace period. Stop does it too.
func (s *Server) CloseEvents() {
	h := &s.hub
	h.mu.Lock()
	defer h.mu.Unlock()
	h.closed = true
	for sub := range h.subs {
		sub.drop()
	}
}

// publish sends a snapshot to every subscriber each interval; one whose queue is full
// (it does not read) is dropped, never waited for.
func (s *Server) publish() {
	t := time.NewTicker(s.opt.EventInterval)
	defer t.Stop()
	for {
		select {
		case <-s.stopping.Done():
			s.CloseEvents()
		case <-t.C:
		}
		h := &s.hub
		h.mu.Lock()
		if len(h.subs) == 0 || h.closed {
			h.running = false
			h.mu.Unlock()
			return
		}
		n := len(h.subs)
		h.mu.Unlock()
		b := s.snapshotJSON(false, n)
		h.mu.Lock()
		for sub := range h.subs {
			select {
			case sub.ch <- b:
			default:
				delete(h.subs, sub)
				sub.slow.Store(true)
				sub.drop()
				s.log.Warn("admin event stream dropped: the client does not keep up")
			}
		}
		h.mu.Unlock()
	}
}

// snapshotJSON is one event's data.
func (s *Server) snapshotJSON(history bool, subscribers int) []byte {
	snap := s.live.snapshot(s.now(), history)
	s.explainAuto(snap.Rows)
	snap.IntervalMS = s.opt.EventInterval.Milliseconds()
	snap.Subscribers = subscribers
	if s.store != nil {
		ctx, cancel := context.WithTimeout(s.stopping, time.Second)
		st, err := s.store.Stats(ctx)
		cancel()
		if err != nil {
			snap.ThreadsError = "the state store did not answer"
		} else {
			lt := &LiveThreads{Count: st.Threads, Bytes: st.Bytes}
			if !st.OldestAccess.IsZero() {
				t := st.OldestAccess.UTC()
				lt.OldestAccess = &t
			}
			snap.Threads = lt
		}
	}
	b, _ := json.Marshal(snap)
	return b
}

// events serves GET /admin/events: Server-Sent Events, one LiveSnapshot per
// EventInterval, the first at once and with history. A client that falls
// subscriberQueue events behind, or whose write blocks for eventsWriteTimeout, is
// dropped; the stream ends when the gateway shuts down.
func (s *Server) events(w http.ResponseWriter, r *http.Request) {
	sub, err := s.join()
	if err != nil {
		writeError(w, s.log, err)
		return
	}
	defer s.leave(sub)
	rc := http.NewResponseController(w)
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	s.hub.mu.Lock()
	n := len(s.hub.subs)
	s.hub.mu.Unlock()
	first := append([]byte("retry: 2000\n\n"), sseFrame(s.snapshotJSON(true, n))...)
	send := func(b []byte) bool {
		_ = rc.SetWriteDeadline(time.Now().Add(eventsWriteTimeout))
		if _, err := w.Write(b); err != nil {
			return false
		}
		return rc.Flush() == nil
	}
	if !send(first) {
		return
	}
	for {
		select {
		case <-r.Context().Done():
			return
		case <-sub.gone:
			if sub.slow.Load() {
				// Dropped for not reading: abort the connection rather than end the
				// response and leave it open for another request.
				panic(http.ErrAbortHandler)
			}
			return
		case b := <-sub.ch:
			if !send(sseFrame(b)) {
				return
			}
		}
	}
}

func sseFrame(data []byte) []byte {
	out := make([]byte, 0, len(data)+8)
	out = append(out, "data: "...)
	out = append(out, data...)
	return append(out, '\n', '\n')
}
