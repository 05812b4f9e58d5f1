package redislimit

import "github.com/redis/go-redis/v9"

// The scripts read the server's clock (TIME), never the gateway's, so gateways whose
// clocks disagree still share one refill. Times are microseconds of that clock; a Lua
// number (a double) holds them exactly. Redis passes numbers to redis.call at full
// precision, so the state written is the state computed.
//
// A bucket is a hash {level, last}: its level at time last. A missing hash is a full
// bucket, so each write sets the hash to expire when the refill would have filled it
// again (plus a second): an idle key leaves nothing behind, and a bucket in debt lives
// until its debt is paid.
const bucketLua = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])

-- level is the bucket's level now, refilled at cap per minute up to cap.
local function level(key, cap)
  local s = redis.call('HMGET', key, 'level', 'last')
  local lv, last = tonumber(s[1]), tonumber(s[2])
  if lv == nil or last == nil then
    return cap
  end
  if now > last then
    lv = lv + cap * (now - last) / 60000000
  end
  return math.min(cap, lv)
end

-- wait is the microseconds the refill needs to bring lv to n.
local function wait(lv, n, cap)
  return math.ceil((n - lv) / cap * 60000000)
end

-- store writes the level as of now and lets the hash expire once it would be full.
local function store(key, lv, cap)
  redis.call('HSET', key, 'level', lv, 'last', now)
  redis.call('PEXPIRE', key, math.ceil((cap - lv) / cap * 60000) + 1000)
end
`

// admitScript takes one request, or says which limit refuses it; all or nothing.
//
//	KEYS[1] leases: sorted set of lease ids scored by expiry
//	KEYS[2] tokens bucket, KEYS[3] requests bucket
//	ARGV[1] max_concurrent, ARGV[2] tokens_per_minute, ARGV[3] requests_per_minute
//	        (0: no such limit; its key is not touched)
//	ARGV[4] lease id, ARGV[5] lease TTL in microseconds
//
// It answers {0, 0} when admitted, else {reason, microseconds until that limit would
// admit}: reason 1 max_concurrent, 2 tokens_per_minute, 3 requests_per_minute. Limits are
// checked in the in-memory Limiter's order.
var admitScript = redis.NewScript(bucketLua + `
local maxc, tpm, rpm = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
if maxc > 0 then
  redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
  if redis.call('ZCARD', KEYS[1]) >= maxc then
    return {1, 0}
  end
end
if tpm > 0 then
  local lv = level(KEYS[2], tpm)
  if lv < 0 then
    return {2, wait(lv, 0, tpm)}
  end
end
if rpm > 0 then
  local lv = level(KEYS[3], rpm)
  if lv < 1 then
    return {3, wait(lv, 1, rpm)}
  end
  store(KEYS[3], lv - 1, rpm)
end
if maxc > 0 then
  redis.call('ZADD', KEYS[1], now + tonumber(ARGV[5]), ARGV[4])
  -- The set lives as long as its latest lease, whatever TTL each gateway gave it.
  local latest = redis.call('ZRANGE', KEYS[1], -1, -1, 'WITHSCORES')
  redis.call('PEXPIRE', KEYS[1], math.ceil((tonumber(latest[2]) - now) / 1000) + 1000)
end
return {0, 0}
`)

// chargeScript spends tokens from a bucket, into debt if need be.
//
//	KEYS[1] tokens bucket; ARGV[1] tokens_per_minute, ARGV[2] tokens spent
var chargeScript = redis.NewScript(bucketLua + `
local cap, n = tonumber(ARGV[1]), tonumber(ARGV[2])
store(KEYS[1], level(KEYS[1], cap) - n, cap)
return 0
`)
