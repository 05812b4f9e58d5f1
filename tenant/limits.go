package tenant

import (
	"fmt"
	"sync"
	"time"
)

// Reasons a request is refused, as metrics label them.
const (
	ReasonRequests    = "requests_per_minute"
	ReasonTokens      = "tokens_per_minute"
	ReasonConcurrency = "max_concurrent"
	ReasonQueueFull   = "backend_queue_full"
	ReasonQueueWait   = "backend_queue_timeout"
)

// Refusal says why a request was not admitted and when trying again may succeed.
type Refusal struct {
	Reason string
	// RetryAfter is how long until the limit that refused lets a request through,
	// assuming nothing else is spent meanwhile; at least a second for the header.
	RetryAfter time.Duration
	// Limit is the configured figure that refused.
	Limit int
}

func (r *Refusal) Error() string {
	return fmt.Sprintf("%s limit %d reached; retry after %s", r.Reason, r.Limit, r.RetryAfter)
}

// Limiter enforces each key's Limits. It is safe for concurrent use; state is created
// on a key's first request and kept for the process's life (keys are configured, so
// their number is bounded).
type Limiter struct {
	now func() time.Time

	mu    sync.Mutex
	state map[*Key]*keyState
}

type keyState struct {
	requests bucket
	tokens   bucket
	active   int
}

// NewLimiter returns a Limiter reading the clock now (if nil, time.Now).
func NewLimiter(now func() time.Time) *Limiter {
	if now == nil {
		now = time.Now
	}
	return &Limiter{now: now, state: map[*Key]*keyState{}}
}

// Admit takes one request from k's budgets, or refuses it. On success the caller must
// call release when the request ends (it frees the concurrency slot; calling it again
// does nothing). A nil k is unlimited.
func (l *Limiter) Admit(k *Key) (release func(), refused *Refusal) {
	if k == nil || k.Limits == (Limits{}) {
		return func() {}, nil
	}
	lim := k.Limits
	now := l.now()
	l.mu.Lock()
	defer l.mu.Unlock()
	st := l.stateOf(k, now)
	if lim.MaxConcurrent > 0 && st.active >= lim.MaxConcurrent {
		// No clock says when a request in flight ends: a second is a fair guess.
		return nil, &Refusal{Reason: ReasonConcurrency, Limit: lim.MaxConcurrent, RetryAfter: time.Second}
	}
	if lim.TokensPerMinute > 0 {
		if ok, wait := st.tokens.solvent(now); !ok {
			return nil, &Refusal{Reason: ReasonTokens, Limit: lim.TokensPerMinute, RetryAfter: atLeastASecond(wait)}
		}
	}
	if lim.RequestsPerMinute > 0 {
		if ok, wait := st.requests.take(1, now); !ok {
			return nil, &Refusal{Reason: ReasonRequests, Limit: lim.RequestsPerMinute, RetryAfter: atLeastASecond(wait)}
		}
	}
	st.active++
	var once sync.Once
	return func() {
		once.Do(func() {
			l.mu.Lock()
			st.active--
			l.mu.Unlock()
		})
	}, nil
}

// Charge spends tokens (an answer's prompt and completion tokens) from k's token
// budget. The next request is refused while the budget is in debt.
func (l *Limiter) Charge(k *Key, tokens int) {
	if k == nil || k.Limits.TokensPerMinute <= 0 || tokens <= 0 {
		return
	}
	now := l.now()
	l.mu.Lock()
	defer l.mu.Unlock()
	l.stateOf(k, now).tokens.charge(float64(tokens), now)
}

func (l *Limiter) stateOf(k *Key, now time.Time) *keyState {
	st, ok := l.state[k]
	if !ok {
		st = &keyState{
			requests: newBucket(k.Limits.RequestsPerMinute, now),
			tokens:   newBucket(k.Limits.TokensPerMinute, now),
		}
		l.state[k] = st
	}
	return st
}

func atLeastASecond(d time.Duration) time.Duration { return max(d, time.Second) }
