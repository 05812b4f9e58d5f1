// Package redisstore keeps thread state (state.Store) in Redis or Valkey, so that every
// gateway instance behind a load balancer sees the same threads and a restart loses
// none.
//
// # Keys
//
// A thread's state is five keys, all under Options.Prefix and the thread id as a hash
// tag (so that a cluster would keep them in one slot):
//
//	<prefix>{<thread>}:m   hash: a = last access (Unix ms, the caller's clock),
//	                             b = estimated size in bytes
//	<prefix>{<thread>}:l   list: loaded tool names, in load order
//	<prefix>{<thread>}:s   set:  loaded tool names
//	<prefix>{<thread>}:x   list: splices, oldest first (encoded as below)
//	<prefix>{<thread>}:p   hash: pins, key → value
//
// The meta hash exists exactly while the thread does; a write that finds it missing
// deletes any other leftovers of the thread first. Get, Load, AddSplice and Pin are each
// one Lua script (one round trip, atomic on the server) that also records the access and
// sets every key's TTL to Options.TTL again (PEXPIRE; PERSIST under state.NoExpiry).
// Delete is one UNLINK. Redis expires idle threads by itself, so Cleanup has nothing to
// do and returns 0.
//
// A splice is encoded as a byte 1 (the format), After as a signed varint, the number of
// messages plus one (0: nil) as a varint, then each message as its length (a varint) and
// its bytes, unchanged. A splice with an anchor is format 2: the anchor's length (a
// varint) and bytes follow After; format 1 records, kept before anchors, still load.
//
// # Bounds
//
// Each thread's estimated size (names, pins and splices, plus fixed overheads as in
// state.Memory) is capped at Options.MaxBytes: a write that takes a thread past it drops
// the thread's oldest splices until it fits, the one just added last of all. Loaded names
// and pins are never dropped. Bound the server's memory as a whole with its own
// maxmemory (a volatile-lru or allkeys-lru policy).
//
// # Failures
//
// Every failure of Redis (refused or dropped connections, timeouts, errors such as OOM)
// comes back as a *state.Unavailable, within the dial and read timeouts: the store does
// not retry, so a write is never applied twice. The client reconnects by itself: broken
// connections are discarded, and after a run of failed dials it probes the server every
// second and serves again as soon as it answers, with no need to recreate the store.
//
// Stats and Clear walk the keys with SCAN, so they cost time in proportion to the
// database; they are for operators, not for requests. A Redis Cluster is not supported
// (SCAN would see one node only); a single Redis or Valkey server (with replicas) is. The
// tests run Redis 7.0.
//
// go-redis reports failed dials through its own logger (redis.SetLogger), which this
// package leaves as the program set it.
package redisstore

import (
	"context"
	"crypto/tls"
	"encoding/binary"
	"encoding/json"
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

// The scripts share a prelude. KEYS are a thread's five keys; ARGV[1..3] are now (ms),
// the TTL (ms, 0 for none) and the size cap.
var prelude = `
local function open()
  if redis.call('EXISTS', KEYS[1]) == 0 then
    redis.call('DEL', KEYS[2], KEYS[3], KEYS[4], KEYS[5])
    redis.call('HSET', KEYS[1], 'a', ARGV[1], 'b', ` + strconv.Itoa(threadOverhead) + `)
  else
    redis.call('HSET', KEYS[1], 'a', ARGV[1])
  end
end
local function grow(n)
  local size = redis.call('HINCRBY', KEYS[1], 'b', n)
  local cap = tonumber(ARGV[3])
  while size > cap do
    local v = redis.call('LPOP', KEYS[4])
    if not v then break end
    size = redis.call('HINCRBY', KEYS[1], 'b', -(#v + ` + strconv.Itoa(spliceOverhead) + `))
  end
end
local function touch()
  local ttl = tonumber(ARGV[2])
  for i = 1, 5 do
    if ttl > 0 then redis.call('PEXPIRE', KEYS[i], ttl) else redis.call('PERSIST', KEYS[i]) end
  end
end
`

var (
	getScript = redis.NewScript(prelude + `
if redis.call('EXISTS', KEYS[1]) == 0 then return false end
redis.call('HSET', KEYS[1], 'a', ARGV[1])
touch()
return {redis.call('LRANGE', KEYS[2], 0, -1), redis.call('LRANGE', KEYS[4], 0, -1), redis.call('HGETALL', KEYS[5])}
`)
	loadScript = redis.NewScript(prelude + `
open()
local added = {}
local n = 0
for i = 4, #ARGV do
  if redis.call('SADD', KEYS[3], ARGV[i]) == 1 then
    redis.call('RPUSH', KEYS[2], ARGV[i])
    added[#added + 1] = ARGV[i]
    n = n + #ARGV[i] + ` + strconv.Itoa(nameOverhead) + `
  end
end
grow(n)
touch()
return added
`)
	spliceScript = redis.NewScript(prelude + `
open()
redis.call('RPUSH', KEYS[4], ARGV[4])
grow(#ARGV[4] + ` + strconv.Itoa(spliceOverhead) + `)
touch()
return 1
`)
	pinScript = redis.NewScript(prelude + `
open()
if redis.call('HSETNX', KEYS[5], ARGV[4], ARGV[5]) == 1 then
  grow(#ARGV[4] + #ARGV[5] + ` + strconv.Itoa(nameOverhead) + `)
end
touch()
return redis.call('HGET', KEYS[5], ARGV[4])
`)
)

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

// Splice formats: 1 has no anchor; 2 (written only for a splice with one) carries the
// anchor, its length as a uvarint and its bytes, after After. Both are read, so threads
// kept before anchors existed still load, and a reader that knows only format 1 still
// reads the splices without anchors.
const (
	spliceFormat         = 1
	spliceFormatAnchored = 2
)

func encodeSplice(sp state.Splice) []byte {
	size := 1 + 3*binary.MaxVarintLen64 + len(sp.Anchor)
	for _, m := range sp.Messages {
		size += binary.MaxVarintLen64 + len(m)
	}
	b := make([]byte, 0, size)
	if sp.Anchor == "" {
		b = append(b, spliceFormat)
		b = binary.AppendVarint(b, int64(sp.After))
	} else {
		b = append(b, spliceFormatAnchored)
		b = binary.AppendVarint(b, int64(sp.After))
		b = binary.AppendUvarint(b, uint64(len(sp.Anchor)))
		b = append(b, sp.Anchor...)
	}
	if sp.Messages == nil {
		return binary.AppendUvarint(b, 0)
	}
	b = binary.AppendUvarint(b, uint64(len(sp.Messages))+1)
	for _, m := range sp.Messages {
		b = binary.AppendUvarint(b, uint64(len(m)))
		b = append(b, m...)
	}
	return b
}

// decodeSplice reads an encoded splice; false for anything malformed.
func decodeSplice(s string) (state.Splice, bool) {
	b := []byte(s)
	if len(b) == 0 || (b[0] != spliceFormat && b[0] != spliceFormatAnchored) {
		return state.Splice{}, false
	}
	format := b[0]
	b = b[1:]
	after, n := binary.Varint(b)
	if n <= 0 {
		return state.Splice{}, false
	}
	b = b[n:]
	var anchor string
	if format == spliceFormatAnchored {
		l, n := binary.Uvarint(b)
		if n <= 0 || l > uint64(len(b)-n) {
			return state.Splice{}, false
		}
		anchor = string(b[n : n+int(l)])
		b = b[n+int(l):]
	}
	count, n := binary.Uvarint(b)
	if n <= 0 || count > uint64(len(b)) {
		return state.Splice{}, false
	}
	b = b[n:]
	sp := state.Splice{After: int(after), Anchor: anchor}
	if count == 0 {
		return sp, len(b) == 0
	}
	sp.Messages = make([]json.RawMessage, count-1)
	for i := range sp.Messages {
		l, n := binary.Uvarint(b)
		if n <= 0 || l > uint64(len(b)-n) {
			return state.Splice{}, false
		}
		if l > 0 {
			sp.Messages[i] = json.RawMessage(b[n : n+int(l) : n+int(l)])
		}
		b = b[n+int(l):]
	}
	return sp, len(b) == 0
}
