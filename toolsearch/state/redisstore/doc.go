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
