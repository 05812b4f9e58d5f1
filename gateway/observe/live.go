package observe

import (
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"
)

// Live statistics: RequestEnded adds every request to in-memory counters per backend ×
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
	// Unfit are the strategies the backend can do that auto did not weigh, because a
	// session under them outgrows the engine's context window.
	Unfit []string `json:"unfit,omitempty"`
}

// LiveEstimate is one strategy's estimated engine seconds per session.
type LiveEstimate struct {
	Strategy          string  `json:"strategy"`
	SecondsPerSession float64 `json:"seconds_per_session"`
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

// liveStats are the counters RequestEnded feeds.
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
func (l *liveStats) add(e *Ended, rec *RequestRecord) {
	k := liveKey{backend: e.Backend, profile: rec.Profile, strategy: rec.Strategy}
	end := e.Start.Add(e.Total)
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
	if e.Status >= 400 {
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
	if e.Stream && e.TTFT > 0 && e.Status == http.StatusOK {
		row.ttft.add(end, ms(e.TTFT))
		// Time per output token: from the first chunk to the last, over the tokens
		// after the first.
		if n := completion - 1; n > 0 {
			decode := e.Total - e.TTFT
			if e.LastFrame > e.TTFT {
				decode = e.LastFrame - e.TTFT
			}
			row.tpot.add(end, ms(decode)/float64(n))
		}
	}
	if e.Chose != "" && e.Auto {
		l.auto[[2]string{e.Backend, e.Profile}] = e.Chose
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
