package redisstore

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/maskgate/maskgate/internal/redisconn"
	"github.com/maskgate/maskgate/toolsearch/state"
	"github.com/redis/go-redis/v9"
)

// Defaults for Options.
const (
	DefaultPrefix      = "maskgate:"
	DefaultMaxBytes    = 1 << 20
	DefaultDialTimeout = 500 * time.Millisecond
	DefaultReadTimeout = time.Second
)

// Size overheads of the estimate, as state.Memory's.
const (
	threadOverhead = 256
	nameOverhead   = 32
	spliceOverhead = 32
)

// Options configure a Store.
type Options struct {
	// URL is the server: redis://[user:password@]host:port[/db], or rediss:// for TLS.
	URL string
	// Password, if set, overrides the URL's (the caller reads it from the environment).
	Password string
	// Prefix starts every key. If empty, DefaultPrefix. It should not contain '{'.
	Prefix string
	// TTL is how long a thread is kept after its last access; state.NoExpiry keeps
	// threads. If zero, state.DefaultTTL. Redis counts it in milliseconds.
	TTL time.Duration
	// MaxBytes caps each thread's estimated size (see the package doc). If zero,
	// DefaultMaxBytes (1 MiB).
	MaxBytes int
	// DialTimeout bounds connecting; if zero, DefaultDialTimeout (500ms).
	DialTimeout time.Duration
	// ReadTimeout bounds each reply, and writing each command; if zero,
	// DefaultReadTimeout (1s).
	ReadTimeout time.Duration
	// TLSConfig, if set, is used to connect (with redis:// too); rediss:// without it
	// verifies the server against the system's roots.
	TLSConfig *tls.Config
	// PoolSize is the most connections kept; if zero, go-redis's default (10 per CPU).
	PoolSize int
	// Client, if set, is used instead of one built from the fields above (which are then
	// ignored): the gateway shares one client between its Redis stores. Close leaves it
	// open.
	Client *redis.Client
}

// Store is a state.Store in Redis. It is safe for concurrent use.
type Store struct {
	rdb      *redis.Client
	owned    bool // rdb was built here, so Close closes it
	prefix   string
	ttlMS    int64 // 0: no expiry
	maxBytes int
	addr     string
	ttlArg   any // ttlMS and maxBytes as script arguments, boxed once
	maxArg   any
}

var _ state.Store = (*Store)(nil)

// New returns a Store for o. It checks the options but does not connect: a server down
// at start shows as failing calls until it answers (see Ping).
func New(o Options) (*Store, error) {
	if o.URL == "" && o.Client == nil {
		return nil, errors.New("redisstore: no URL")
	}
	rdb, owned := o.Client, false
	if rdb == nil {
		var err error
		if rdb, err = redisconn.New(redisconn.Options{URL: o.URL, Password: o.Password, TLSConfig: o.TLSConfig,
			DialTimeout: cmpOr(o.DialTimeout, DefaultDialTimeout), ReadTimeout: cmpOr(o.ReadTimeout, DefaultReadTimeout), PoolSize: o.PoolSize}); err != nil {
			return nil, fmt.Errorf("redisstore: %w", err)
		}
		owned = true
	}
	s := &Store{rdb: rdb, owned: owned, prefix: o.Prefix, maxBytes: o.MaxBytes, addr: rdb.Options().Addr}
	if s.prefix == "" {
		s.prefix = DefaultPrefix
	}
	switch {
	case o.TTL == 0:
		s.ttlMS = state.DefaultTTL.Milliseconds()
	case o.TTL > 0:
		s.ttlMS = max(o.TTL.Milliseconds(), 1)
	}
	if s.maxBytes <= 0 {
		s.maxBytes = DefaultMaxBytes
	}
	s.ttlArg, s.maxArg = strconv.FormatInt(s.ttlMS, 10), strconv.Itoa(s.maxBytes)
	return s, nil
}

func cmpOr(d, def time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return def
}

// fail wraps a Redis failure.
func (s *Store) fail(op string, err error) error {
	if errors.Is(err, redis.ErrClosed) {
		return &state.Unavailable{Err: fmt.Errorf("redis %s: %w (%w)", op, state.ErrClosed, err)}
	}
	return &state.Unavailable{Err: fmt.Errorf("redis %s at %s: %w", op, s.addr, err)}
}

// keys are thread's keys: meta, loaded order, loaded set, splices, pins.
func (s *Store) keys(thread string) []string {
	// One string holds the five, each a substring of it.
	n := len(s.prefix) + len(thread) + 4 // prefix{thread}:x
	var b strings.Builder
	b.Grow(5 * n)
	for _, part := range "mlsxp" {
		b.WriteString(s.prefix)
		b.WriteByte('{')
		b.WriteString(thread)
		b.WriteString("}:")
		b.WriteRune(part)
	}
	all := b.String()
	keys := make([]string, 5)
	for i := range keys {
		keys[i] = all[i*n : (i+1)*n]
	}
	return keys
}

// args starts a script's ARGV: now, TTL, cap.
func (s *Store) args(extra int) []any {
	a := make([]any, 3, 3+extra)
	a[0], a[1], a[2] = time.Now().UnixMilli(), s.ttlArg, s.maxArg
	return a
}

// Get returns thread's state, and false when Redis holds none. It counts as an access.
func (s *Store) Get(ctx context.Context, thread string) (state.Snapshot, bool, error) {
	v, err := getScript.Run(ctx, s.rdb, s.keys(thread), s.args(0)...).Result()
	if errors.Is(err, redis.Nil) {
		return state.Snapshot{}, false, nil
	}
	if err != nil {
		return state.Snapshot{}, false, s.fail("get", err)
	}
	parts, ok := v.([]any)
	if !ok || len(parts) != 3 {
		return state.Snapshot{}, false, s.fail("get", fmt.Errorf("unexpected reply %T", v))
	}
	var snap state.Snapshot
	snap.Loaded = stringsOf(parts[0])
	for _, raw := range stringsOf(parts[1]) {
		if sp, ok := decodeSplice(raw); ok {
			snap.Splices = append(snap.Splices, sp)
		}
	}
	if kv := stringsOf(parts[2]); len(kv) >= 2 {
		snap.Pins = make(map[string]string, len(kv)/2)
		for i := 0; i+1 < len(kv); i += 2 {
			snap.Pins[kv[i]] = kv[i+1]
		}
	}
	return snap, true, nil
}

// stringsOf reads an array reply of strings; nil when empty.
func stringsOf(v any) []string {
	arr, _ := v.([]any)
	if len(arr) == 0 {
		return nil
	}
	out := make([]string, 0, len(arr))
	for _, x := range arr {
		if str, ok := x.(string); ok {
			out = append(out, str)
		}
	}
	return out
}

// Load appends the names not yet loaded to thread's, atomically, creating the thread if
// needed, and returns those newly loaded, in order.
func (s *Store) Load(ctx context.Context, thread string, names ...string) ([]string, error) {
	a := s.args(len(names))
	for _, n := range names {
		a = append(a, n)
	}
	v, err := loadScript.Run(ctx, s.rdb, s.keys(thread), a...).Result()
	if err != nil {
		return nil, s.fail("load", err)
	}
	return stringsOf(v), nil
}

// AddSplice appends an exchange to thread's, creating the thread if needed; past
// MaxBytes the thread's oldest splices are dropped.
func (s *Store) AddSplice(ctx context.Context, thread string, sp state.Splice) error {
	a := append(s.args(1), encodeSplice(sp))
	if err := spliceScript.Run(ctx, s.rdb, s.keys(thread), a...).Err(); err != nil {
		return s.fail("add splice", err)
	}
	return nil
}

// Pin sets thread's key to value unless it is set (HSETNX), creating the thread if
// needed, and returns the value key holds: the first writer, of any instance, wins.
func (s *Store) Pin(ctx context.Context, thread, key, value string) (string, error) {
	a := append(s.args(2), key, value)
	v, err := pinScript.Run(ctx, s.rdb, s.keys(thread), a...).Text()
	if err != nil {
		return "", s.fail("pin", err)
	}
	return v, nil
}

// Delete drops thread's keys and reports whether there were any.
func (s *Store) Delete(ctx context.Context, thread string) (bool, error) {
	n, err := s.rdb.Unlink(ctx, s.keys(thread)...).Result()
	if err != nil {
		return false, s.fail("delete", err)
	}
	return n > 0, nil
}

// pattern matches keys of every thread ending in one of the suffixes ("[mlsxp]", "m").
func (s *Store) pattern(suffix string) string {
	var b strings.Builder
	for _, r := range s.prefix {
		if strings.ContainsRune(`*?[]\^`, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	b.WriteString("{*}:")
	b.WriteString(suffix)
	return b.String()
}

const scanCount = 1000

// Clear drops every thread under the prefix and returns how many there were.
func (s *Store) Clear(ctx context.Context) (int, error) {
	threads := 0
	var cursor uint64
	for {
		keys, next, err := s.rdb.Scan(ctx, cursor, s.pattern("[mlsxp]"), scanCount).Result()
		if err != nil {
			return threads, s.fail("clear", err)
		}
		var metas, rest []string
		for _, k := range keys {
			if strings.HasSuffix(k, "}:m") {
				metas = append(metas, k)
			} else {
				rest = append(rest, k)
			}
		}
		if len(metas) > 0 {
			n, err := s.rdb.Unlink(ctx, metas...).Result()
			if err != nil {
				return threads, s.fail("clear", err)
			}
			threads += int(n)
		}
		if len(rest) > 0 {
			if err := s.rdb.Unlink(ctx, rest...).Err(); err != nil {
				return threads, s.fail("clear", err)
			}
		}
		if cursor = next; cursor == 0 {
			return threads, nil
		}
	}
}

// Cleanup returns 0: Redis expires idle threads by itself.
func (s *Store) Cleanup(context.Context) (int, error) { return 0, nil }

// Stats reports the threads under the prefix, their oldest access and their estimated
// size, from a SCAN of their meta hashes.
func (s *Store) Stats(ctx context.Context) (state.Stats, error) {
	var st state.Stats
	var oldest int64
	var cursor uint64
	for {
		keys, next, err := s.rdb.Scan(ctx, cursor, s.pattern("m"), scanCount).Result()
		if err != nil {
			return state.Stats{}, s.fail("stats", err)
		}
		if len(keys) > 0 {
			pipe := s.rdb.Pipeline()
			cmds := make([]*redis.SliceCmd, len(keys))
			for i, k := range keys {
				cmds[i] = pipe.HMGet(ctx, k, "a", "b")
			}
			if _, err := pipe.Exec(ctx); err != nil {
				return state.Stats{}, s.fail("stats", err)
			}
			for _, c := range cmds {
				v := c.Val()
				if len(v) != 2 || v[0] == nil {
					continue // expired meanwhile
				}
				a, _ := strconv.ParseInt(fmt.Sprint(v[0]), 10, 64)
				b, _ := strconv.Atoi(fmt.Sprint(v[1]))
				st.Threads++
				st.Bytes += b
				if oldest == 0 || a < oldest {
					oldest = a
				}
			}
		}
		if cursor = next; cursor == 0 {
			break
		}
	}
	if st.Threads > 0 {
		st.OldestAccess = time.UnixMilli(oldest)
	}
	return st, nil
}

// Ping checks that the server answers, for health checks.
func (s *Store) Ping(ctx context.Context) error {
	if err := s.rdb.Ping(ctx).Err(); err != nil {
		return s.fail("ping", err)
	}
	return nil
}

// Close closes the connections. Later calls fail.
func (s *Store) Close() error {
	if !s.owned {
		return nil
	}
	return s.rdb.Close()
}
