package redisstore

import (
	"strconv"

	"github.com/redis/go-redis/v9"
)

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
