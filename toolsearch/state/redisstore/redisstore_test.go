package redisstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/redis/go-redis/v9"

	"github.com/maskgate/maskgate/internal/redisconn"
	"github.com/maskgate/maskgate/internal/redistest"
	"github.com/maskgate/maskgate/toolsearch/state"
)

var bg = context.Background()

func TestMain(m *testing.M) {
	// The tests kill servers on purpose: go-redis's log of each failed dial is noise.
	redis.SetLogger(quiet{})
	os.Exit(m.Run())
}

type quiet struct{}

func (quiet) Printf(context.Context, string, ...any) {}

func tid(i int) string { return fmt.Sprintf("%032x", i) }

// callLimit is the dial and read timeout newStore gives a store unless the test sets
// its own: no passing call reaches it (a call to a local server takes milliseconds,
// under a second even under -race at a load of 18). failFast is the most a call may
// take to fail where what ends it is immediate (a refused dial, a reset connection, a
// timeout or deadline of milliseconds): a bound on a hang, under callLimit so that a
// call that waited out callLimit instead fails it too.
const (
	callLimit = 30 * time.Second
	failFast  = 10 * time.Second
)

func newStore(t *testing.T, o Options) *Store {
	t.Helper()
	if o.DialTimeout == 0 {
		o.DialTimeout = callLimit
	}
	if o.ReadTimeout == 0 {
		o.ReadTimeout = callLimit
	}
	s, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// raw is a plain client, to look at the keys.
func raw(t *testing.T, srv *redistest.Server) *redis.Client {
	t.Helper()
	c := redis.NewClient(&redis.Options{Addr: srv.Addr, DisableIdentity: true})
	t.Cleanup(func() { c.Close() })
	return c
}

func TestNewChecksOptions(t *testing.T) {
	if _, err := New(Options{}); err == nil {
		t.Error("no URL accepted")
	}
	if _, err := New(Options{URL: "http://x"}); err == nil {
		t.Error("an http URL accepted")
	}
	s, err := New(Options{URL: "rediss://user:pw@example.invalid:6380/2"})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	o := s.rdb.Options()
	if o.TLSConfig == nil || o.TLSConfig.ServerName != "example.invalid" || o.Password != "pw" || o.DB != 2 {
		t.Errorf("rediss URL read as %+v", o)
	}
	if o.DialTimeout != DefaultDialTimeout || o.ReadTimeout != DefaultReadTimeout || o.MaxRetries > 0 {
		t.Errorf("timeouts %v %v, retries %d", o.DialTimeout, o.ReadTimeout, o.MaxRetries)
	}
	s2, _ := New(Options{URL: "redis://:urlpw@h:1", Password: "envpw"})
	defer s2.Close()
	if s2.rdb.Options().Password != "envpw" || s2.prefix != DefaultPrefix {
		t.Error("Password does not override the URL's, or the prefix is not the default")
	}
}

// TestKeysAndTTLs checks the key layout and that every access sets the TTL on every key.
func TestKeysAndTTLs(t *testing.T) {
	srv := redistest.Start(t, false)
	rc := raw(t, srv)
	s := newStore(t, Options{URL: srv.URL, Prefix: "mg:", TTL: time.Minute})
	th := tid(1)
	s.Load(bg, th, "a", "b")
	s.AddSplice(bg, th, state.Splice{After: 1, Messages: []json.RawMessage{json.RawMessage(`{}`)}})
	s.Pin(bg, th, "backend", "mask")

	keys, err := rc.Keys(bg, "*").Result()
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(keys)
	base := "mg:{" + th + "}:"
	if want := []string{base + "l", base + "m", base + "p", base + "s", base + "x"}; !cmp.Equal(keys, want) {
		t.Errorf("keys %q, want %q", keys, want)
	}
	if got, _ := rc.LRange(bg, base+"l", 0, -1).Result(); !cmp.Equal(got, []string{"a", "b"}) {
		t.Errorf("the order list holds %q", got)
	}
	if got, _ := rc.HGet(bg, base+"p", "backend").Result(); got != "mask" {
		t.Errorf("the pins hash holds %q", got)
	}
	meta, _ := rc.HGetAll(bg, base+"m").Result()
	if a, _ := strconv.ParseInt(meta["a"], 10, 64); time.Since(time.UnixMilli(a)).Abs() > time.Minute || meta["b"] == "" {
		t.Errorf("meta %v", meta)
	}
	for _, k := range keys {
		if ttl := rc.PTTL(bg, k).Val(); ttl <= 50*time.Second || ttl > time.Minute {
			t.Errorf("%s has TTL %v, want about a minute", k, ttl)
		}
	}
	// Under NoExpiry an access clears the TTLs (and a store with a TTL sets them again).
	forever := newStore(t, Options{URL: srv.URL, Prefix: "mg:", TTL: state.NoExpiry})
	if _, ok, err := forever.Get(bg, th); !ok || err != nil {
		t.Fatal(ok, err)
	}
	for _, k := range keys {
		if ttl := rc.TTL(bg, k).Val(); ttl != -1 {
			t.Errorf("%s has TTL %v under NoExpiry", k, ttl)
		}
	}
	s.Get(bg, th)
	for _, k := range keys {
		if ttl := rc.PTTL(bg, k).Val(); ttl <= 0 {
			t.Errorf("%s has no TTL again: %v", k, ttl)
		}
	}
	// Another prefix is another namespace.
	other := newStore(t, Options{URL: srv.URL, Prefix: "mg:x:"})
	other.Load(bg, th, "z")
	if n, _ := s.Clear(bg); n != 1 {
		t.Errorf("Clear under mg: dropped %d threads", n)
	}
	if snap, ok, _ := other.Get(bg, th); !ok || !cmp.Equal(snap.Loaded, []string{"z"}) {
		t.Error("clearing one prefix touched another")
	}
}

// TestLeftoversOfAnExpiredThreadAreDropped: a write that finds no meta hash starts the
// thread afresh, whatever other keys remain.
func TestLeftoversOfAnExpiredThreadAreDropped(t *testing.T) {
	srv := redistest.Start(t, false)
	rc := raw(t, srv)
	s := newStore(t, Options{URL: srv.URL})
	th := tid(1)
	s.Load(bg, th, "old")
	rc.Del(bg, s.keys(th)[0])
	if _, ok, _ := s.Get(bg, th); ok {
		t.Error("a thread without its meta hash was found")
	}
	if added, _ := s.Load(bg, th, "new", "old"); !cmp.Equal(added, []string{"new", "old"}) {
		t.Errorf("added %q", added)
	}
	if snap, _, _ := s.Get(bg, th); !cmp.Equal(snap.Loaded, []string{"new", "old"}) {
		t.Errorf("loaded %q", snap.Loaded)
	}
}

// TestMaxBytesDropsOldestSplices: past the per-thread cap the oldest splices go, the
// loaded names and pins stay.
func TestMaxBytesDropsOldestSplices(t *testing.T) {
	srv := redistest.Start(t, false)
	s := newStore(t, Options{URL: srv.URL, MaxBytes: 2000})
	th := tid(1)
	s.Load(bg, th, "a", "b")
	s.Pin(bg, th, "k", "v")
	msg := func(i int) json.RawMessage {
		return json.RawMessage(fmt.Sprintf(`"%d%s"`, i, strings.Repeat("x", 400)))
	}
	for i := range 10 {
		if err := s.AddSplice(bg, th, state.Splice{After: i, Messages: []json.RawMessage{msg(i)}}); err != nil {
			t.Fatal(err)
		}
	}
	snap, _, _ := s.Get(bg, th)
	if !cmp.Equal(snap.Loaded, []string{"a", "b"}) || snap.Pins["k"] != "v" {
		t.Errorf("names or pins dropped: %+v", snap)
	}
	if len(snap.Splices) == 0 || len(snap.Splices) >= 10 {
		t.Fatalf("%d splices kept", len(snap.Splices))
	}
	for i, sp := range snap.Splices {
		want := 10 - len(snap.Splices) + i
		if sp.After != want || string(sp.Messages[0]) != string(msg(want)) {
			t.Errorf("splice %d is %d, want the newest ones in order", i, sp.After)
		}
	}
	st, _ := s.Stats(bg)
	if st.Bytes > 2000 || st.Bytes < 2000-450 {
		t.Errorf("thread size %d, cap 2000", st.Bytes)
	}
	// A splice over the cap alone is dropped too.
	s.AddSplice(bg, th, state.Splice{Messages: []json.RawMessage{json.RawMessage(strings.Repeat("y", 3000))}})
	if snap, _, _ := s.Get(bg, th); len(snap.Splices) != 0 || len(snap.Loaded) != 2 {
		t.Errorf("after an oversized splice: %d splices, %q", len(snap.Splices), snap.Loaded)
	}
}

// TestTwoInstancesRaceOnOneThread is two gateway instances (two stores, two connection
// pools) loading into and pinning one thread at once.
func TestTwoInstancesRaceOnOneThread(t *testing.T) {
	srv := redistest.Start(t, false)
	a := newStore(t, Options{URL: srv.URL})
	b := newStore(t, Options{URL: srv.URL})
	th := tid(42)
	const workers, calls, names = 16, 30, 80
	var mu sync.Mutex
	var results [][]string
	pins := map[string]bool{}
	var wg sync.WaitGroup
	for w := range workers {
		s := []*Store{a, b}[w%2]
		wg.Go(func() {
			r := rand.New(rand.NewPCG(uint64(w), 11))
			for c := range calls {
				batch := make([]string, 1+r.IntN(4))
				for i := range batch {
					batch[i] = "tool" + strconv.Itoa(r.IntN(names))
				}
				added, err := s.Load(bg, th, batch...)
				if err != nil {
					t.Error(err)
					return
				}
				v, err := s.Pin(bg, th, "backend", fmt.Sprintf("w%d.%d", w, c))
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				results = append(results, added)
				pins[v] = true
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	seen := map[string]int{}
	for _, added := range results {
		for _, n := range added {
			seen[n]++
		}
	}
	for n, c := range seen {
		if c != 1 {
			t.Errorf("%s newly loaded %d times", n, c)
		}
	}
	sa, _, _ := a.Get(bg, th)
	sb, _, _ := b.Get(bg, th)
	if diff := cmp.Diff(sa.Loaded, sb.Loaded); diff != "" {
		t.Errorf("the instances read different orders:\n%s", diff)
	}
	if len(sa.Loaded) != len(seen) {
		t.Errorf("%d loaded, %d newly loaded", len(sa.Loaded), len(seen))
	}
	pos := map[string]int{}
	for i, n := range sa.Loaded {
		pos[n] = i
	}
	for _, added := range results {
		for i := 1; i < len(added); i++ {
			if pos[added[i]] != pos[added[i-1]]+1 {
				t.Fatalf("one load's names %q are apart in %q", added, sa.Loaded)
			}
		}
	}
	if len(pins) != 1 || !pins[sa.Pins["backend"]] {
		t.Errorf("pins returned %v, the thread holds %q", pins, sa.Pins["backend"])
	}
}

// TestServerDownAndBack kills the server: calls fail fast as Unavailable, none hangs;
// once it is back (with its data: it persists) the same store serves again.
func TestServerDownAndBack(t *testing.T) {
	srv := redistest.Start(t, true)
	s := newStore(t, Options{URL: srv.URL, TTL: state.NoExpiry})
	th := tid(1)
	if _, err := s.Load(bg, th, "a"); err != nil {
		t.Fatal(err)
	}
	srv.Kill()

	calls := map[string]func() error{
		"get":       func() error { _, _, err := s.Get(bg, th); return err },
		"load":      func() error { _, err := s.Load(bg, th, "b"); return err },
		"splice":    func() error { return s.AddSplice(bg, th, state.Splice{}) },
		"pin":       func() error { _, err := s.Pin(bg, th, "k", "v"); return err },
		"delete":    func() error { _, err := s.Delete(bg, th); return err },
		"clear":     func() error { _, err := s.Clear(bg); return err },
		"stats":     func() error { _, err := s.Stats(bg); return err },
		"ping":      func() error { return s.Ping(bg) },
		"unlimited": func() error { _, err := s.Load(context.Background(), th, "c"); return err },
	}
	// Enough rounds to open go-redis's dial breaker (a pool's worth of failed dials).
	for round := range 4 {
		for name, call := range calls {
			start := time.Now()
			err := call()
			took := time.Since(start)
			var u *state.Unavailable
			if !errors.Is(err, state.ErrUnavailable) || !errors.As(err, &u) {
				t.Fatalf("round %d, %s with the server down: %v", round, name, err)
			}
			if took > failFast {
				t.Errorf("round %d, %s took %v to fail", round, name, took)
			}
		}
	}
	// Concurrent callers fail fast too.
	var wg sync.WaitGroup
	for range 32 {
		wg.Go(func() {
			start := time.Now()
			if _, _, err := s.Get(bg, th); !errors.Is(err, state.ErrUnavailable) || time.Since(start) > failFast {
				t.Errorf("a concurrent Get: %v after %v", err, time.Since(start))
			}
		})
	}
	wg.Wait()

	srv.Restart()
	start := time.Now()
	var snap state.Snapshot
	var ok bool
	var err error
	for {
		if snap, ok, err = s.Get(bg, th); err == nil || time.Since(start) > 30*time.Second {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err != nil {
		t.Fatalf("30s after the server came back: %v", err)
	}
	t.Logf("serving again %v after the restart", time.Since(start).Round(time.Millisecond))
	if !ok || !cmp.Equal(snap.Loaded, []string{"a"}) {
		t.Errorf("after the restart: %+v, %v", snap, ok)
	}
	for name, call := range calls {
		if err := call(); err != nil {
			t.Errorf("%s after the restart: %v", name, err)
		}
	}
}

// TestRestartWithoutFailedCalls: a server restarted while the store is idle costs it no
// failed call: the dead pooled connections are not reused.
func TestRestartWithoutFailedCalls(t *testing.T) {
	srv := redistest.Start(t, true)
	s := newStore(t, Options{URL: srv.URL})
	var wg sync.WaitGroup
	for i := range 8 { // fill the pool with several connections
		wg.Go(func() { s.Load(bg, tid(i), "a") })
	}
	wg.Wait()
	srv.Kill()
	srv.Restart()
	for i := range 8 {
		if snap, ok, err := s.Get(bg, tid(i)); err != nil || !ok || !cmp.Equal(snap.Loaded, []string{"a"}) {
			t.Errorf("thread %d after a restart: %+v, %v, %v", i, snap, ok, err)
		}
	}
}

// TestSilentServerTimesOut: a server that accepts and never answers fails the call
// within the read timeout, and within the caller's deadline.
func TestSilentServerTimesOut(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	var mu sync.Mutex
	var conns []net.Conn
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	defer func() {
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
	}()
	addr := "redis://" + ln.Addr().String()
	// The read timeout under test must fire: only it ends these calls (the dial, to a
	// listening socket, succeeds; its timeout is callLimit). failFast, 50 times the read
	// timeout, bounds a hang; the default read timeout (1 s) would pass it too, so the
	// store is checked to have taken the one set here.
	const readTimeout = 200 * time.Millisecond
	s := newStore(t, Options{URL: addr, ReadTimeout: readTimeout})
	if got := s.rdb.Options().ReadTimeout; got != readTimeout {
		t.Fatalf("read timeout %v, want %v", got, readTimeout)
	}
	for range 3 {
		start := time.Now()
		_, _, err := s.Get(bg, tid(1))
		if !errors.Is(err, state.ErrUnavailable) {
			t.Fatalf("a silent server: %v", err)
		}
		if took := time.Since(start); took > failFast {
			t.Errorf("failing took %v with a %v read timeout", took, readTimeout)
		}
	}
	// The caller's deadline bounds a call too: on a store whose own timeouts are
	// callLimit, a 50ms deadline (which must fire) is all that can end the call within
	// failFast.
	patient := newStore(t, Options{URL: addr})
	ctx, cancel := context.WithTimeout(bg, 50*time.Millisecond)
	defer cancel()
	start := time.Now()
	if _, err := patient.Load(ctx, tid(1), "a"); !errors.Is(err, state.ErrUnavailable) || time.Since(start) > failFast {
		t.Errorf("a 50ms deadline: %v after %v", err, time.Since(start))
	}
}

func TestPasswordAndClose(t *testing.T) {
	srv := redistest.Start(t, false)
	rc := raw(t, srv)
	if err := rc.ConfigSet(bg, "requirepass", "s3cret").Err(); err != nil {
		t.Fatal(err)
	}
	without := newStore(t, Options{URL: srv.URL})
	if _, err := without.Load(bg, tid(1), "a"); !errors.Is(err, state.ErrUnavailable) {
		t.Errorf("without the password: %v", err)
	}
	with := newStore(t, Options{URL: srv.URL, Password: "s3cret"})
	if _, err := with.Load(bg, tid(1), "a"); err != nil {
		t.Errorf("with the password: %v", err)
	}
	with.Close()
	if _, _, err := with.Get(bg, tid(1)); !errors.Is(err, state.ErrUnavailable) || !errors.Is(err, state.ErrClosed) {
		t.Errorf("after Close: %v", err)
	}
}

// TestForeignValuesAreSkipped: a splice that does not decode is skipped, not a failure.
func TestForeignValuesAreSkipped(t *testing.T) {
	srv := redistest.Start(t, false)
	rc := raw(t, srv)
	s := newStore(t, Options{URL: srv.URL})
	th := tid(1)
	s.AddSplice(bg, th, state.Splice{After: 1})
	rc.RPush(bg, s.keys(th)[3], "garbage", "")
	s.AddSplice(bg, th, state.Splice{After: 2})
	snap, ok, err := s.Get(bg, th)
	if err != nil || !ok || !cmp.Equal(snap.Splices, []state.Splice{{After: 1}, {After: 2}}) {
		t.Errorf("%+v, %v, %v", snap, ok, err)
	}
}

func TestSpliceEncoding(t *testing.T) {
	for _, sp := range []state.Splice{
		{},
		{After: -3},
		{After: 1 << 40, Messages: []json.RawMessage{}},
		{After: 7, Messages: []json.RawMessage{nil, json.RawMessage(`{"a": 1}`), json.RawMessage(strings.Repeat("\xff", 300))}},
		{After: 2, Anchor: "0123456789abcdef0123456789abcdef", Messages: []json.RawMessage{json.RawMessage(`{"role":"tool"}`)}},
	} {
		got, ok := decodeSplice(string(encodeSplice(sp)))
		if !ok || !cmp.Equal(got, sp) {
			t.Errorf("%+v came back as %+v, %v", sp, got, ok)
		}
	}
	enc := encodeSplice(state.Splice{After: 7, Messages: []json.RawMessage{json.RawMessage(`{"a":1}`), json.RawMessage(`[2]`)}})
	for cut := range len(enc) {
		if _, ok := decodeSplice(string(enc[:cut])); ok {
			t.Errorf("a splice cut at %d decodes", cut)
		}
	}
	if _, ok := decodeSplice(string(enc) + "x"); ok {
		t.Error("a splice with trailing bytes decodes")
	}
	anchored := encodeSplice(state.Splice{After: 7, Anchor: "abc", Messages: []json.RawMessage{json.RawMessage(`[2]`)}})
	for cut := range len(anchored) {
		if _, ok := decodeSplice(string(anchored[:cut])); ok {
			t.Errorf("an anchored splice cut at %d decodes", cut)
		}
	}
}

// A record written before anchors existed (format 1, spelled out byte by byte here) still
// loads, placed by After alone; a splice without an anchor is still written that way, so
// an older reader reads it too.
func TestSpliceEncoding_Format1StillLoads(t *testing.T) {
	old := "\x01\x04\x02\x02[]" // format 1, After 2 (zigzag 4), one message (1+1), 2 bytes "[]"
	sp, ok := decodeSplice(old)
	if want := (state.Splice{After: 2, Messages: []json.RawMessage{json.RawMessage(`[]`)}}); !ok || !cmp.Equal(sp, want) {
		t.Fatalf("a format 1 record decodes as %+v, %v; want %+v", sp, ok, want)
	}
	if got := string(encodeSplice(sp)); got != old {
		t.Errorf("a splice without an anchor encodes as %q, want the format 1 bytes %q", got, old)
	}
	if b := encodeSplice(state.Splice{After: 2, Anchor: "x"}); b[0] != 2 {
		t.Errorf("an anchored splice is written as format %d, want 2", b[0])
	}
}

func FuzzDecodeSplice(f *testing.F) {
	f.Add(string(encodeSplice(state.Splice{After: 1, Messages: []json.RawMessage{json.RawMessage(`{}`)}})))
	f.Add("\x01\x00\xff\xff\xff\xff\x0f")
	f.Add(string(encodeSplice(state.Splice{After: 3, Anchor: "ab", Messages: []json.RawMessage{json.RawMessage(`{}`)}})))
	f.Add("\x02\x00\xff\xff\xff\xff\x0f")
	f.Fuzz(func(t *testing.T, s string) {
		if sp, ok := decodeSplice(s); ok {
			if again, ok := decodeSplice(string(encodeSplice(sp))); !ok || !cmp.Equal(again, sp) {
				t.Errorf("%q decodes as %+v, which encodes and decodes as %+v", s, sp, again)
			}
		}
	})
}

func TestPatternEscapesThePrefix(t *testing.T) {
	s := &Store{prefix: `a*b?[c]\`}
	if got := s.pattern("m"); got != `a\*b\?\[c\]\\{*}:m` {
		t.Errorf("pattern %q", got)
	}
}

// A store on a client the caller shares leaves it open on Close: the gateway's threads,
// stored responses and limits use one client.
func TestSharedClientOutlivesTheStore(t *testing.T) {
	srv := redistest.Start(t, false)
	rdb, err := redisconn.New(redisconn.Options{URL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	defer rdb.Close()
	s, err := New(Options{Client: rdb, Prefix: "shared:"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Load(context.Background(), "t", "a"); err != nil {
		t.Fatal(err)
	}
	s.Close()
	if err := rdb.Ping(context.Background()).Err(); err != nil {
		t.Errorf("the shared client was closed with the store: %v", err)
	}
}
