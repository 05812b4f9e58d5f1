package gateway

import (
	"hash/fnv"
	"net/http"
	"strconv"
	"sync"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/maskgate/maskgate/backends/oai"
	"github.com/maskgate/maskgate/gateway/planner"
)

// The operator's view of requests: a bounded log of the latest ones (GET
// /admin/requests), the live statistics of /admin/events (live.go) and the request's
// spans (trace.go) are all fed from record, once per request, from what the exchange
// holds. None of them ever holds a prompt, a message or a tool's arguments.

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

// watched is what the operator's views need of a request beyond the exchange's own
// bookkeeping: the model asked for and answered with, each upstream round's prompt,
// the loaded set each round saw, and the request's spans (nil when tracing is off).
type watched struct {
	reqModel, respModel string
	rounds              int
	noted               bool // a round's usage was noted
	firstPrompt         int
	firstCached         int
	firstKnown          bool // the first round reported its cached tokens
	lastPrompt          int
	loadedFirst         uint64 // under remove: the loaded set of the first and last rounds
	loadedLast          uint64
	loadedMoved         bool // and whether it changed between rounds

	span, round, upstream trace.Span // nil when tracing is off, or once ended
	failed                error      // what serve got from run, for the spans' status
}

// noteRound keeps what the request log needs of one upstream answer's usage.
func (w *watched) noteRound(u *oai.Usage) {
	if u == nil {
		return
	}
	if !w.noted {
		w.noted = true
		w.firstPrompt = u.PromptTokens
		if d := u.PromptTokensDetails; d != nil {
			w.firstCached, w.firstKnown = d.CachedTokens, true
		}
	}
	w.lastPrompt = u.PromptTokens
}

// noteLoaded records, under remove, the loaded set round n sends the engine.
func (s *Server) noteLoaded(x *exchange, p *planner.Plan) {
	if p == nil || p.Strategy() != StrategyRemove {
		return
	}
	h := fnv.New64a()
	for _, name := range p.Active() {
		h.Write([]byte(name))
		h.Write([]byte{0})
	}
	sum := h.Sum64()
	w := &x.ops
	if w.rounds <= 1 {
		w.loadedFirst = sum
	} else if sum != w.loadedLast {
		w.loadedMoved = true
	}
	w.loadedLast = sum
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
func (l *requestLog) missReason(x *exchange) string {
	p := x.plan
	if p == nil || p.Thread() == "" || x.usage == nil || x.status != http.StatusOK {
		return ""
	}
	w := &x.ops
	cur := threadSeen{version: p.Catalog().Version(), loaded: w.loadedLast, lastPrompt: w.lastPrompt}
	l.mu.Lock()
	prev, known := l.threads.by[p.Thread()]
	l.threads.put(p.Thread(), cur)
	l.mu.Unlock()
	switch {
	case !known:
		if firstOfThread(p) {
			return MissNewThread
		}
		return "" // seen by another instance, or before a restart
	case prev.version != cur.version:
		return MissCatalogChanged
	case p.Strategy() == StrategyRemove && (prev.loaded != w.loadedFirst || w.loadedMoved):
		return MissLoadedSetChanged
	case w.firstKnown && w.firstPrompt >= prev.lastPrompt && w.firstCached+missSlack(prev.lastPrompt) < prev.lastPrompt:
		return MissEngineEvicted
	}
	return ""
}

// firstOfThread says whether the client's messages (with the thread's hidden exchanges
// spliced in) hold no assistant message: the conversation starts with this request.
func firstOfThread(p *planner.Plan) bool {
	for i, m := range p.Messages() {
		if i >= p.ClientMessages() {
			break
		}
		if role, ok := oai.Get(m, "role"); ok && string(role) == `"assistant"` {
			return false
		}
	}
	return true
}

// watch feeds the request log, the live statistics and the request's span with x.
func (s *Server) watch(x *exchange, total time.Duration) {
	rec := RequestRecord{
		Time: x.start.UTC(), RequestID: x.id, Key: x.caller.label(), Door: x.door, Model: x.ops.reqModel,
		Backend: x.backend, Replica: x.replica, Strategy: string(x.strategy), Stream: x.stream, Status: x.status,
		DurationMS: ms(total), Rounds: x.ops.rounds,
	}
	if x.stream && x.ttft > 0 {
		rec.TTFTMS = ms(x.ttft)
	}
	if x.prof != nil {
		rec.Profile = x.prof.Name
	}
	if p := x.plan; p != nil {
		rec.Thread, rec.CatalogVersion, rec.DisabledCalls = p.Thread(), p.Catalog().Version(), p.Strays()
	}
	if u := x.usage; u != nil {
		if !x.ops.noted { // relayed: one round the loop did not read
			x.ops.noteRound(u)
		}
		a := accounting(u, x.cache)
		rec.PromptTokens, rec.ComputedTokens, rec.CompletionTokens = &a.Prompt, &a.Computed, &u.CompletionTokens
		if u.PromptTokensDetails != nil {
			rec.CachedTokens = &a.Cached
		}
		rec.CacheSource = string(x.cache)
		rec.Miss = s.reqlog.missReason(x)
	}
	s.live.add(x, &rec, total)
	s.endSpan(x, &rec)
	s.reqlog.add(&rec) // last: a request in the log is in everything else
}

func ms(d time.Duration) float64 {
	return float64(d.Microseconds()) / 1000
}

// requests serves GET /admin/requests?limit=N: the latest N requests (default 100, at
// most the log's size), newest first.
func (s *Server) requests(w http.ResponseWriter, r *http.Request) {
	n := 100
	if raw := r.URL.Query().Get("limit"); raw != "" {
		v, err := strconv.Atoi(raw)
		if err != nil || v < 1 {
			writeError(w, s.log, badRequest("limit must be a positive integer", "limit"))
			return
		}
		n = v
	}
	recs := s.reqlog.latest(n)
	writeJSON(w, http.StatusOK, struct {
		Capacity int             `json:"capacity"`
		Data     []RequestRecord `json:"data"`
	}{len(s.reqlog.ring), recs})
}
