package observe

import (
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/maskgate/maskgate/backends"
)

// The request log: a bounded ring of the latest requests (GET /admin/requests), each with
// why it missed the engine's cache where the gateway knows. None of it ever holds a
// prompt, a message or a tool's arguments.

// Why a request's prompt was not served from the engine's cache, where the gateway
// knows (RequestRecord.Miss).
const (
	// MissNewThread: the first request of its thread; nothing of the conversation can be
	// cached yet (beyond a prefix other threads share).
	MissNewThread = "new thread"
	// MissCatalogChanged: the thread's catalog version differs from its previous
	// request's, so the tools in the prompt's prefix changed.
	MissCatalogChanged = "catalog changed"
	// MissLoadedSetChanged: under remove, the tools the engine saw changed since the
	// thread's previous upstream call (a load), which moves everything after them.
	MissLoadedSetChanged = "loaded set changed"
	// MissEngineEvicted: the engine reported fewer cached tokens than the thread's
	// previous prompt, though the gateway sent a prompt that extends it.
	MissEngineEvicted = "engine evicted"
)

// DefaultRequestLog is how many requests GET /admin/requests keeps when Options'
// RequestLog is zero.
const DefaultRequestLog = 1000

// RequestRecord is one request as GET /admin/requests lists it: who, where, how, and
// what it cost the engine, never what was said.
type RequestRecord struct {
	Time      time.Time `json:"time"`
	RequestID string    `json:"request_id"`
	// Key is the caller's key name ("anonymous" without keys).
	Key     string `json:"key"`
	Door    string `json:"door"`
	Profile string `json:"profile,omitempty"`
	// Model is the model the request named (after a profile alias, the backend model);
	// empty when it was refused before its body was read.
	Model    string `json:"model,omitempty"`
	Backend  string `json:"backend"`
	Replica  string `json:"replica,omitempty"`
	Strategy string `json:"strategy"`
	Stream   bool   `json:"stream"`
	Status   int    `json:"status"`
	// DurationMS is the whole request, TTFTMS the first streamed chunk (0: none).
	DurationMS float64 `json:"duration_ms"`
	TTFTMS     float64 `json:"ttft_ms,omitempty"`
	// Rounds is how many upstream calls the request made (0 when refused before).
	Rounds int `json:"rounds"`
	// Tokens, summed over rounds; absent when the backend reported no usage. Cached is
	// absent when the engine's cache is not known (CacheSource unknown).
	PromptTokens     *int   `json:"prompt_tokens,omitempty"`
	CachedTokens     *int   `json:"cached_tokens,omitempty"`
	ComputedTokens   *int   `json:"computed_tokens,omitempty"`
	CompletionTokens *int   `json:"completion_tokens,omitempty"`
	CacheSource      string `json:"cache_source,omitempty"`
	// DisabledCalls counts the model's calls to tools outside the allowed set.
	DisabledCalls int `json:"disabled_calls,omitempty"`
	// Thread is the gateway's id of the request's thread (X-Maskgate-Thread), which
	// DELETE /admin/threads/{id} takes; CatalogVersion the catalog the engine saw.
	Thread         string `json:"thread,omitempty"`
	CatalogVersion string `json:"catalog_version,omitempty"`
	// Miss says why the cache missed, where the gateway knows (Miss* constants).
	Miss string `json:"miss,omitempty"`
}

// requestLog is the ring of the latest requests, and what the miss reasons need of
// each thread's previous request.
type requestLog struct {
	mu      sync.Mutex
	ring    []RequestRecord
	next    int
	full    bool
	threads threadsSeen
}

func newRequestLog(n int) *requestLog {
	if n == 0 {
		n = DefaultRequestLog
	}
	if n < 0 {
		n = 0
	}
	return &requestLog{ring: make([]RequestRecord, n), threads: threadsSeen{by: map[string]threadSeen{}}}
}

func (l *requestLog) add(r *RequestRecord) {
	if len(l.ring) == 0 {
		return
	}
	l.mu.Lock()
	l.ring[l.next] = *r
	l.next++
	if l.next == len(l.ring) {
		l.next, l.full = 0, true
	}
	l.mu.Unlock()
}

// latest returns up to n records, newest first.
func (l *requestLog) latest(n int) []RequestRecord {
	l.mu.Lock()
	defer l.mu.Unlock()
	have := l.next
	if l.full {
		have = len(l.ring)
	}
	n = min(n, have)
	out := make([]RequestRecord, 0, n)
	for i := 1; i <= n; i++ {
		out = append(out, l.ring[(l.next-i+len(l.ring))%len(l.ring)])
	}
	return out
}

// threadSeen is a thread's previous request as the engine saw it.
type threadSeen struct {
	version    string
	loaded     uint64
	lastPrompt int
}

// maxThreadsSeen bounds the threads whose previous request is remembered; past it the
// earliest remembered is forgotten (its next request's miss is then not explained).
const maxThreadsSeen = 8192

// threadsSeen remembers each thread's previous request, first in first out.
type threadsSeen struct {
	by    map[string]threadSeen
	order []string
	head  int
}

func (t *threadsSeen) put(thread string, v threadSeen) {
	if _, ok := t.by[thread]; !ok {
		if len(t.order) < maxThreadsSeen {
			t.order = append(t.order, thread)
		} else {
			delete(t.by, t.order[t.head])
			t.order[t.head] = thread
			t.head = (t.head + 1) % maxThreadsSeen
		}
	}
	t.by[thread] = v
}

// missSlack is how far under the previous prompt a hit may fall for the gateway still
// to count it whole: engines cache in blocks (vLLM 16 tokens, OpenAI 128) and may
// recompute the last one.
func missSlack(prev int) int { return min(128, prev/10) }

// missReason explains, for a request with a thread, why the engine did not serve its
// prompt from cache, and remembers the request for the thread's next one. "" when the
// gateway does not know, or nothing was missed.
func (l *requestLog) missReason(w *Request, e *Ended) string {
	if e.Thread == "" || e.Usage == nil || e.Status != http.StatusOK {
		return ""
	}
	cur := threadSeen{version: e.CatalogVersion, loaded: w.loadedLast, lastPrompt: w.lastPrompt}
	l.mu.Lock()
	prev, known := l.threads.by[e.Thread]
	l.threads.put(e.Thread, cur)
	l.mu.Unlock()
	switch {
	case !known:
		if e.Opens != nil && e.Opens.OpensThread() {
			return MissNewThread
		}
		return "" // seen by another instance, or before a restart
	case prev.version != cur.version:
		return MissCatalogChanged
	case e.Remove && (prev.loaded != w.loadedFirst || w.loadedMoved):
		return MissLoadedSetChanged
	case w.firstKnown && w.firstPrompt >= prev.lastPrompt && w.firstCached+missSlack(prev.lastPrompt) < prev.lastPrompt:
		return MissEngineEvicted
	}
	return ""
}

// record is the request log's line for a request that ended.
func (v *View) record(o *Request, e *Ended) RequestRecord {
	rec := RequestRecord{
		Time: e.Start.UTC(), RequestID: e.ID, Key: e.Key, Door: e.Door, Model: o.Model, Profile: e.Profile,
		Backend: e.Backend, Replica: e.Replica, Strategy: e.Strategy, Stream: e.Stream, Status: e.Status,
		DurationMS: ms(e.Total), Rounds: o.rounds,
		Thread: e.Thread, CatalogVersion: e.CatalogVersion, DisabledCalls: e.DisabledCalls,
	}
	if e.Stream && e.TTFT > 0 {
		rec.TTFTMS = ms(e.TTFT)
	}
	if u := e.Usage; u != nil {
		if !o.noted { // relayed: one round the loop did not read
			o.noteRound(u)
		}
		a := e.Account
		rec.PromptTokens, rec.ComputedTokens, rec.CompletionTokens = &a.Prompt, &a.Computed, &u.CompletionTokens
		if u.PromptTokensDetails != nil {
			rec.CachedTokens = &a.Cached
		}
		rec.CacheSource = e.Cache
		rec.Miss = v.reqlog.missReason(o, e)
	}
	return rec
}

func ms(d time.Duration) float64 {
	return float64(d.Microseconds()) / 1000
}

// requests serves GET /admin/requests?limit=N: the latest N requests (default 100, at
// most the log's size), newest first.
func (v *View) requests(w http.ResponseWriter, r *http.Request) {
	n := 100
	if raw := r.URL.Query().Get("limit"); raw != "" {
		limit, err := strconv.Atoi(raw)
		if err != nil || limit < 1 {
			v.opt.WriteError(w, &backends.Error{Status: http.StatusBadRequest, Type: "invalid_request_error", Param: "limit",
				Message: "limit must be a positive integer"})
			return
		}
		n = limit
	}
	recs := v.reqlog.latest(n)
	writeJSON(w, http.StatusOK, struct {
		Capacity int             `json:"capacity"`
		Data     []RequestRecord `json:"data"`
	}{len(v.reqlog.ring), recs})
}
