package store

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/maskgate/maskgate/internal/redisconn"
	"github.com/redis/go-redis/v9"
)

// Defaults for RedisOptions.
const (
	DefaultRedisPrefix      = "maskgate:"
	DefaultRedisDialTimeout = 500 * time.Millisecond
	DefaultRedisReadTimeout = time.Second
)

// RedisOptions configure a Redis store.
type RedisOptions struct {
	// URL is the server: redis://[user:password@]host:port[/db], or rediss:// for TLS.
	URL string
	// Password, if set, overrides the URL's.
	Password string
	// Prefix starts every key; if empty, DefaultRedisPrefix. It may not contain '{' or
	// '}' (the owner is the key's hash tag).
	Prefix string
	// DialTimeout bounds connecting; if zero, DefaultRedisDialTimeout (500ms).
	DialTimeout time.Duration
	// ReadTimeout bounds each reply, and writing each command; if zero,
	// DefaultRedisReadTimeout (1s).
	ReadTimeout time.Duration
	// TLSConfig, if set, is used to connect (with redis:// too).
	TLSConfig *tls.Config
	// PoolSize is the most connections kept; if zero, go-redis's default (10 per CPU).
	PoolSize int
	// Client, if set, is used instead of one built from the fields above (which are then
	// ignored): the gateway shares one client between its Redis stores. Close leaves it
	// open.
	Client *redis.Client
}

// Redis keeps records in a Redis (6.2 or later) or Valkey server, shared by every
// gateway that names it.
//
// # Keys
//
// Owner's record id is the hash Prefix + "resp:{" + owner + "}:" + id, with fields p
// (the parent's id), d (the data), n (how many records name it as parent) and x (1 once
// deleted, while descendants keep it), and the record's TTL. The owner is the key's hash
// tag, so a chain's keys share a cluster slot; in it '%', '{' and '}' are written
// %25, %7B and %7D, and the empty owner is "%", so no two owners share keys.
//
// Each call is one Lua script, one round trip and atomic on the server: Put writes the
// hash and extends its ancestors' TTLs (stopping at the first that already lives as
// long: its own ancestors do too); Chain walks the parents, up to max; Delete removes
// the record, or marks it deleted while it has descendants, and removes deleted
// ancestors it was the last descendant of.
//
// # Bounds
//
// The store sets no byte bound: bound the server with maxmemory. Choose the
// volatile-ttl policy: descendants expire no later than their ancestors, so it evicts
// the ends of chains first and keeps the rest whole; an LRU policy may evict a chain's
// first record and leave the rest useless.
//
// # Failures
//
// Every failure (refused or dropped connections, timeouts, errors such as OOM) is an
// ErrUnavailable within the dial and read timeouts: the store does not retry, so a
// write is never applied twice. The client reconnects by itself: broken connections
// are dropped, and after failed dials it probes the server about every second, serving
// again once it answers, without a new store. go-redis reports failed dials through its
// own logger (redis.SetLogger), which this package leaves as the program set it.
type Redis struct {
	rdb    *redis.Client
	owned  bool // rdb was built here, so Close closes it
	prefix string
	addr   string
}

var _ Records = (*Redis)(nil)

// NewRedis returns a Redis store for o. It checks the options but does not connect: a
// server down at start shows as failing calls until it answers (see Ping).
func NewRedis(o RedisOptions) (*Redis, error) {
	if o.URL == "" && o.Client == nil {
		return nil, errors.New("store: no Redis URL")
	}
	if strings.ContainsAny(o.Prefix, "{}") {
		return nil, fmt.Errorf("store: the key prefix %q may not contain braces", o.Prefix)
	}
	rdb, owned := o.Client, false
	if rdb == nil {
		var err error
		if rdb, err = redisconn.New(redisconn.Options{URL: o.URL, Password: o.Password, TLSConfig: o.TLSConfig,
			DialTimeout: cmpOr(o.DialTimeout, DefaultRedisDialTimeout), ReadTimeout: cmpOr(o.ReadTimeout, DefaultRedisReadTimeout), PoolSize: o.PoolSize}); err != nil {
			return nil, fmt.Errorf("store: %w", err)
		}
		owned = true
	}
	prefix := o.Prefix
	if prefix == "" {
		prefix = DefaultRedisPrefix
	}
	return &Redis{rdb: rdb, owned: owned, prefix: prefix, addr: rdb.Options().Addr}, nil
}

func cmpOr(d, def time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return def
}

// ownerKeys is the start of owner's keys: an id follows.
func (s *Redis) ownerKeys(owner string) string {
	return s.prefix + "resp:{" + ownerTag(owner) + "}:"
}

// ownerTag is owner as written in a key (see Redis's doc).
func ownerTag(owner string) string {
	if owner == "" {
		return "%"
	}
	if !strings.ContainsAny(owner, "%{}") {
		return owner
	}
	return strings.NewReplacer("%", "%25", "{", "%7B", "}", "%7D").Replace(owner)
}

func (s *Redis) fail(op string, err error) error {
	return fail("redis "+op+" at "+s.addr, err)
}

// Lua's false is Redis's nil: HMGET gives it for a missing key's fields.
var (
	putScript = redis.NewScript(`
local key, kp, parent, ttl = KEYS[1], ARGV[1], ARGV[2], tonumber(ARGV[4])
if parent ~= '' and redis.call('EXISTS', kp .. parent) == 0 then return -1 end
local old = redis.call('HMGET', key, 'p', 'n')
local kids = 0
if old[1] then
  kids = tonumber(old[2]) or 0
  if old[1] ~= '' and redis.call('EXISTS', kp .. old[1]) == 1 then
    redis.call('HINCRBY', kp .. old[1], 'n', -1)
  end
  redis.call('DEL', key)
end
redis.call('HSET', key, 'p', parent, 'd', ARGV[3], 'n', kids)
redis.call('PEXPIRE', key, ttl)
local p, i = parent, 0
while p ~= '' and i < ` + strconv.Itoa(maxWalk) + ` do
  local pk = kp .. p
  if i == 0 then redis.call('HINCRBY', pk, 'n', 1) end
  local left = redis.call('PTTL', pk)
  if left == -2 or left == -1 or left >= ttl then break end
  redis.call('PEXPIRE', pk, ttl)
  p = redis.call('HGET', pk, 'p')
  if not p then break end
  i = i + 1
end
return 1
`)
	chainScript = redis.NewScript(`
local kp, max = ARGV[1], tonumber(ARGV[2])
local v = redis.call('HMGET', KEYS[1], 'p', 'd', 'x')
if not v[2] or v[3] == '1' then return {} end
local out = {v[1], v[2]}
local p = v[1]
while p ~= '' and #out < 2 * max do
  v = redis.call('HMGET', kp .. p, 'p', 'd')
  if not v[2] then break end
  out[#out + 1] = v[1]
  out[#out + 1] = v[2]
  p = v[1]
end
return out
`)
	deleteScript = redis.NewScript(`
local kp = ARGV[1]
local v = redis.call('HMGET', KEYS[1], 'p', 'n', 'x')
if not v[1] or v[3] == '1' then return 0 end
if (tonumber(v[2]) or 0) > 0 then
  redis.call('HSET', KEYS[1], 'x', '1')
  return 1
end
redis.call('DEL', KEYS[1])
local p, i = v[1], 0
while p ~= '' and i < ` + strconv.Itoa(maxWalk) + ` do
  local pk = kp .. p
  local w = redis.call('HMGET', pk, 'p', 'x')
  if not w[1] then break end
  local n = redis.call('HINCRBY', pk, 'n', -1)
  if n > 0 or w[2] ~= '1' then break end
  redis.call('DEL', pk)
  p, i = w[1], i + 1
end
return 1
`)
)

func (s *Redis) Put(ctx context.Context, owner, id string, r Record, ttl time.Duration) error {
	if id == "" {
		return errors.New("store: empty id")
	}
	if r.Parent == id {
		return errors.New("store: a record cannot be its own parent")
	}
	if ttl <= 0 {
		return fmt.Errorf("store: the ttl %v is not positive", ttl)
	}
	kp := s.ownerKeys(owner)
	ms := max(ttl.Milliseconds(), 1)
	n, err := putScript.Run(ctx, s.rdb, []string{kp + id}, kp, r.Parent, r.Data, ms).Int64()
	if err != nil {
		return s.fail("put", err)
	}
	if n < 0 {
		return ErrNoParent
	}
	return nil
}

func (s *Redis) Chain(ctx context.Context, owner, id string, max int) ([]Record, error) {
	if max < 1 {
		max = 1
	}
	kp := s.ownerKeys(owner)
	v, err := chainScript.Run(ctx, s.rdb, []string{kp + id}, kp, max).Result()
	if err != nil {
		return nil, s.fail("chain", err)
	}
	arr, ok := v.([]any)
	if !ok || len(arr)%2 != 0 {
		return nil, s.fail("chain", fmt.Errorf("unexpected reply %T", v))
	}
	if len(arr) == 0 {
		return nil, nil
	}
	out := make([]Record, len(arr)/2)
	for i := range out {
		p, ok1 := arr[2*i].(string)
		d, ok2 := arr[2*i+1].(string)
		if !ok1 || !ok2 {
			return nil, s.fail("chain", fmt.Errorf("unexpected reply element %T", arr[2*i]))
		}
		out[len(out)-1-i] = Record{Parent: p, Data: []byte(d)}
	}
	return out, nil
}

func (s *Redis) Delete(ctx context.Context, owner, id string) (bool, error) {
	kp := s.ownerKeys(owner)
	n, err := deleteScript.Run(ctx, s.rdb, []string{kp + id}, kp).Int64()
	if err != nil {
		return false, s.fail("delete", err)
	}
	return n == 1, nil
}

// Ping checks the server answers.
func (s *Redis) Ping(ctx context.Context) error {
	if err := s.rdb.Ping(ctx).Err(); err != nil {
		return s.fail("ping", err)
	}
	return nil
}

// Close closes the client's connections.
func (s *Redis) Close() error {
	if !s.owned {
		return nil
	}
	return s.rdb.Close()
}
