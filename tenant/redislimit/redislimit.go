// Package redislimit keeps keys' limits in Redis or Valkey, so that every gateway using
// the same server shares them: behind a load balancer, N gateways give a key its
// requests_per_minute, tokens_per_minute and max_concurrent once, not N times. Limiter
// implements tenant.Budgets with the in-memory tenant.Limiter's rules and refusals.
//
// # How
//
// A key's state lives under Prefix + "{" + name + "}:" — one hash slot, so a cluster
// serves it too:
//
//   - "requests" and "tokens" are token buckets, hashes {level, last}, refilled evenly at
//     a minute's worth per minute up to a minute's worth. Lua scripts update them
//     atomically, timed by the server's clock (TIME), so gateways with skewed clocks
//     agree. A bucket expires once its refill would have filled it again (a little over a
//     minute after its last use, longer while it is in debt): an absent bucket is full.
//   - "leases" is a sorted set of lease ids scored by their expiry. Admit drops expired
//     leases, counts the rest and, under max_concurrent, adds one; release removes it.
//
// Admit checks and takes all of a key's budgets in one script, so a refused request
// spends nothing and two gateways never both take the last request of a minute.
//
// # Leases expire
//
// A gateway that crashes never releases its requests' leases. Rather than block the key
// forever, a lease expires LeaseTTL after it was taken (default 10 minutes): until then
// the crashed gateway's requests still count against max_concurrent. The price is the
// other way round: a request still running after LeaseTTL no longer counts, and one more
// may start. Choose LeaseTTL a little above the longest a request may last.
//
// # Failures
//
// Every call to Redis is bounded by Timeout (default 500ms). When Redis cannot answer,
// Admit and Charge return an error that errors.Is ErrUnavailable, never panic and never
// wait longer; the caller decides (the gateway answers 503). A release that fails is
// reported to OnReleaseError and its lease expires after LeaseTTL. A Redis restarted
// without persistence has forgotten every bucket and lease: keys start afresh, full.
// A nil key, or one whose Limits are all zero, is unlimited and touches Redis not at all.
//
// It needs Redis 5 or later, or Valkey. It starts no goroutine of its own; the client's
// connection pool may.
package redislimit

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/maskgate/maskgate/tenant"
	"github.com/redis/go-redis/v9"
)

// ErrUnavailable is wrapped by every error Admit and Charge return for a failure of
// Redis: unreachable, too slow, or answering with an error.
var ErrUnavailable = errors.New("shared limits unavailable")

// Defaults of Options.
const (
	DefaultPrefix   = "maskgate:limit:"
	DefaultLeaseTTL = 10 * time.Minute
	DefaultTimeout  = 500 * time.Millisecond
)

// Options configure New. Set Client or URL.
type Options struct {
	// Client is used as it is, and Close leaves it open. Its own timeouts bound the
	// network: give it ContextTimeoutEnabled (or short Dial/Read/WriteTimeouts) so that
	// Timeout holds.
	Client redis.UniversalClient
	// URL is redis://host:port/db or rediss://host:port/db; New makes a client of its
	// own for it, with Timeout as its dial, read and write timeouts, and Close closes it.
	URL string
	// Password is the AUTH password for URL.
	Password string
	// Prefix starts every key written. Default DefaultPrefix.
	Prefix string
	// LeaseTTL is how long a request's concurrency slot outlives a gateway that never
	// released it. Default DefaultLeaseTTL.
	LeaseTTL time.Duration
	// Timeout bounds each call to Redis. Default DefaultTimeout.
	Timeout time.Duration
	// OnReleaseError, if set, is told when a release could not reach Redis (the lease
	// then holds its slot until it expires).
	OnReleaseError func(error)
}

// Limiter enforces keys' limits in Redis. It is safe for concurrent use.
type Limiter struct {
	rdb            redis.UniversalClient
	owned          bool
	prefix         string
	leaseTTL       time.Duration
	timeout        time.Duration
	onReleaseError func(error)

	instance string // lease ids are instance:sequence
	seq      atomic.Uint64
}

var _ tenant.Budgets = (*Limiter)(nil)

// New returns a Limiter for o. It does not contact Redis: a server down now is an
// error of the first Admit, not of New.
func New(o Options) (*Limiter, error) {
	if o.LeaseTTL < 0 || o.Timeout < 0 {
		return nil, errors.New("redislimit: LeaseTTL and Timeout may not be negative")
	}
	l := &Limiter{
		prefix:         o.Prefix,
		leaseTTL:       o.LeaseTTL,
		timeout:        o.Timeout,
		onReleaseError: o.OnReleaseError,
	}
	if l.prefix == "" {
		l.prefix = DefaultPrefix
	}
	if l.leaseTTL == 0 {
		l.leaseTTL = DefaultLeaseTTL
	}
	if l.timeout == 0 {
		l.timeout = DefaultTimeout
	}
	var id [8]byte
	rand.Read(id[:])
	l.instance = hex.EncodeToString(id[:])

	switch {
	case o.Client != nil && o.URL != "":
		return nil, errors.New("redislimit: set one of Client and URL")
	case o.Client != nil:
		l.rdb = o.Client
	case o.URL != "":
		opt, err := redis.ParseURL(o.URL)
		if err != nil {
			return nil, fmt.Errorf("redislimit: %w", err)
		}
		if o.Password != "" {
			opt.Password = o.Password
		}
		// The context's deadline (Timeout) bounds every wait; one dial per attempt and
		// one retry, for a connection the server closed meanwhile.
		opt.ContextTimeoutEnabled = true
		opt.DialTimeout = l.timeout
		opt.ReadTimeout = l.timeout
		opt.WriteTimeout = l.timeout
		opt.PoolTimeout = l.timeout
		opt.DialerRetries = 1
		opt.MaxRetries = 1
		l.rdb, l.owned = redis.NewClient(opt), true
	default:
		return nil, errors.New("redislimit: set Client or URL")
	}
	return l, nil
}

// Close closes the client New made for URL; a Client passed in is left open.
func (l *Limiter) Close() error {
	if l.owned {
		return l.rdb.Close()
	}
	return nil
}

// Admit takes one request from k's budgets, or refuses it; see tenant.Budgets. On an
// error nothing was taken (or, if Redis ran the script but its answer was lost, a lease
// that expires after LeaseTTL).
func (l *Limiter) Admit(ctx context.Context, k *tenant.Key) (release func(), refused *tenant.Refusal, err error) {
	if k == nil {
		return func() {}, nil, nil
	}
	lim := k.Limits
	maxc, tpm, rpm := max(lim.MaxConcurrent, 0), max(lim.TokensPerMinute, 0), max(lim.RequestsPerMinute, 0)
	if maxc == 0 && tpm == 0 && rpm == 0 {
		return func() {}, nil, nil
	}
	var lease string
	if maxc > 0 {
		lease = l.instance + ":" + strconv.FormatUint(l.seq.Add(1), 10)
	}
	base := l.base(k)
	keys := []string{base + "leases", base + "tokens", base + "requests"}

	cctx, cancel := context.WithTimeout(ctx, l.timeout)
	defer cancel()
	res, err := admitScript.Run(cctx, l.rdb, keys, maxc, tpm, rpm, lease, l.leaseTTL.Microseconds()).Int64Slice()
	if err == nil && len(res) != 2 {
		err = fmt.Errorf("admit script answered %v", res)
	}
	if err != nil {
		return nil, nil, l.fail(ctx, "admit", k, err)
	}
	wait := time.Duration(res[1]) * time.Microsecond
	switch res[0] {
	case 0:
	case 1:
		// No clock says when a request in flight ends: a second is a fair guess.
		return nil, &tenant.Refusal{Reason: tenant.ReasonConcurrency, Limit: maxc, RetryAfter: time.Second}, nil
	case 2:
		return nil, &tenant.Refusal{Reason: tenant.ReasonTokens, Limit: tpm, RetryAfter: max(wait, time.Second)}, nil
	case 3:
		return nil, &tenant.Refusal{Reason: tenant.ReasonRequests, Limit: rpm, RetryAfter: max(wait, time.Second)}, nil
	default:
		return nil, nil, l.fail(ctx, "admit", k, fmt.Errorf("admit script answered %v", res))
	}
	if lease == "" {
		return func() {}, nil, nil
	}
	return sync.OnceFunc(func() { l.release(k, keys[0], lease) }), nil, nil
}

// release removes a lease. It runs when a request ends, usually after its context did,
// so it has a context of its own.
func (l *Limiter) release(k *tenant.Key, key, lease string) {
	ctx, cancel := context.WithTimeout(context.Background(), l.timeout)
	defer cancel()
	if err := l.rdb.ZRem(ctx, key, lease).Err(); err != nil && l.onReleaseError != nil {
		l.onReleaseError(l.fail(context.Background(), "release", k, err))
	}
}

// Charge spends n tokens from k's tokens_per_minute budget; see tenant.Budgets.
func (l *Limiter) Charge(ctx context.Context, k *tenant.Key, n int) error {
	if k == nil || k.Limits.TokensPerMinute <= 0 || n <= 0 {
		return nil
	}
	cctx, cancel := context.WithTimeout(ctx, l.timeout)
	defer cancel()
	err := chargeScript.Run(cctx, l.rdb, []string{l.base(k) + "tokens"}, k.Limits.TokensPerMinute, n).Err()
	if err != nil {
		return l.fail(ctx, "charge", k, err)
	}
	return nil
}

// base starts the names of k's keys; the braces keep them in one cluster slot.
func (l *Limiter) base(k *tenant.Key) string { return l.prefix + "{" + k.Name + "}:" }

// fail wraps a failed call's error: ErrUnavailable, unless the caller's own context
// ended first (a client that left is no outage).
func (l *Limiter) fail(ctx context.Context, op string, k *tenant.Key, err error) error {
	if cerr := ctx.Err(); cerr != nil {
		return fmt.Errorf("redislimit: %s for key %q: %w", op, k.Name, cerr)
	}
	return fmt.Errorf("redislimit: %s for key %q: %w: %w", op, k.Name, ErrUnavailable, err)
}
