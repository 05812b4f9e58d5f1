package state_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"math/rand/v2"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/maskgate/maskgate/internal/redistest"
	"github.com/maskgate/maskgate/toolsearch/state"
	"github.com/maskgate/maskgate/toolsearch/state/redisstore"
)

// fakeClock is a clock for the stores that take one.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func newFakeClock() *fakeClock { return &fakeClock{t: time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)} }

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// tid is a thread id as Threads.Thread makes them: 32 hex digits.
func tid(i int) string { return fmt.Sprintf("%032x", i) }

var bg = context.Background()

// harness opens stores of one kind for the conformance suite.
type harness struct {
	// open returns an empty store whose threads live ttl (state.NoExpiry: forever).
	open func(t *testing.T, ttl time.Duration) state.Store
	// wait lets d pass for the stores it opened.
	wait func(d time.Duration)
	// ttl is the TTL the expiry tests use; long, a wait that NoExpiry must survive.
	ttl, long time.Duration
}

func quietLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

func memoryHarness() harness {
	c := newFakeClock()
	return harness{
		open: func(t *testing.T, ttl time.Duration) state.Store {
			return state.NewMemory(state.Options{TTL: ttl, Now: c.Now}).Store()
		},
		wait: c.Advance, ttl: time.Hour, long: 1000 * time.Hour,
	}
}

func fileHarness() harness {
	c := newFakeClock()
	return harness{
		open: func(t *testing.T, ttl time.Duration) state.Store {
			f, err := state.OpenFile(t.TempDir(), state.Options{TTL: ttl, Now: c.Now, Logger: quietLogger()})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { f.Close() })
			return f
		},
		wait: c.Advance, ttl: time.Hour, long: 1000 * time.Hour,
	}
}

// redisHarness opens stores on one server, each under a prefix of its own, so that
// Clear and Stats see only their own keys. Time is real: the TTL is 5 s, so a thread
// read 0.6 TTL after its last access still has 2 s to live, far past the milliseconds
// a call takes (under a second even under -race at a load of 18). Its dial and read
// timeouts, 30 s, are limits no passing call reaches.
func redisHarness(t *testing.T) harness {
	srv := redistest.Start(t, false)
	var n atomic.Int64
	return harness{
		open: func(t *testing.T, ttl time.Duration) state.Store {
			s, err := redisstore.New(redisstore.Options{URL: srv.URL, TTL: ttl,
				Prefix:      "conf" + strconv.FormatInt(n.Add(1), 10) + ":",
				DialTimeout: 30 * time.Second, ReadTimeout: 30 * time.Second})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { s.Close() })
			return s
		},
		wait: time.Sleep, ttl: 5 * time.Second, long: 1200 * time.Millisecond,
	}
}

func TestStoreConformance(t *testing.T) {
	t.Run("memory", func(t *testing.T) { t.Parallel(); conformance(t, memoryHarness()) })
	t.Run("file", func(t *testing.T) { t.Parallel(); conformance(t, fileHarness()) })
	t.Run("redis", func(t *testing.T) { t.Parallel(); conformance(t, redisHarness(t)) })
}

func must[T any](t *testing.T) func(T, error) T {
	return func(v T, err error) T {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
}

func get(t *testing.T, s state.Store, thread string) (state.Snapshot, bool) {
	t.Helper()
	snap, ok, err := s.Get(bg, thread)
	if err != nil {
		t.Fatal(err)
	}
	return snap, ok
}

func conformance(t *testing.T, h harness) {
	t.Run("LoadOrderAndIdempotence", func(t *testing.T) {
		s := h.open(t, 0)
		load := must[[]string](t)
		if got := load(s.Load(bg, tid(1), "b", "a", "b")); !cmp.Equal(got, []string{"b", "a"}) {
			t.Errorf("first load added %q", got)
		}
		if got := load(s.Load(bg, tid(1), "a", "c", "b")); !cmp.Equal(got, []string{"c"}) {
			t.Errorf("second load added %q", got)
		}
		if got := load(s.Load(bg, tid(1), "c", "a")); len(got) != 0 {
			t.Errorf("reloading added %q", got)
		}
		snap, ok := get(t, s, tid(1))
		if !ok {
			t.Fatal("thread missing")
		}
		if diff := cmp.Diff([]string{"b", "a", "c"}, snap.Loaded); diff != "" {
			t.Errorf("loaded (-want +got):\n%s", diff)
		}
		if _, ok := get(t, s, tid(2)); ok {
			t.Error("an unknown thread was found")
		}
		// Loading nothing still makes the thread.
		load(s.Load(bg, tid(3)))
		if snap, ok := get(t, s, tid(3)); !ok || snap.Loaded != nil || snap.Splices != nil || snap.Pins != nil {
			t.Errorf("an empty load: %+v, %v", snap, ok)
		}
	})

	t.Run("SplicesComeBackByteForByte", func(t *testing.T) {
		s := h.open(t, 0)
		splices := []state.Splice{
			{After: 2, Messages: []json.RawMessage{
				json.RawMessage(`{"role": "assistant",  "tool_calls":[]}`), // spacing kept
				json.RawMessage(`{"role":"tool","content":"<b>&amp;\u00e9</b>"}`),
				json.RawMessage("not json \x00\xff"),
			}},
			{After: 5}, // no messages
			{After: 0, Messages: []json.RawMessage{json.RawMessage(`{}`)}},
		}
		for _, sp := range splices {
			if err := s.AddSplice(bg, tid(1), sp); err != nil {
				t.Fatal(err)
			}
		}
		snap, ok := get(t, s, tid(1))
		if !ok {
			t.Fatal("a thread made by AddSplice is missing")
		}
		if diff := cmp.Diff(state.Snapshot{Splices: splices}, snap); diff != "" {
			t.Errorf("(-want +got):\n%s", diff)
		}
	})

	t.Run("PinFirstWriterWins", func(t *testing.T) {
		s := h.open(t, 0)
		pin := must[string](t)
		if got := pin(s.Pin(bg, tid(1), "backend-a", "mask")); got != "mask" {
			t.Errorf("first pin holds %q", got)
		}
		if got := pin(s.Pin(bg, tid(1), "backend-a", "remove")); got != "mask" {
			t.Errorf("second pin holds %q, want the first's", got)
		}
		if got := pin(s.Pin(bg, tid(1), "backend-b", "remove")); got != "remove" {
			t.Errorf("another key holds %q", got)
		}
		snap, _ := get(t, s, tid(1))
		if diff := cmp.Diff(map[string]string{"backend-a": "mask", "backend-b": "remove"}, snap.Pins); diff != "" {
			t.Errorf("pins (-want +got):\n%s", diff)
		}
		// Racing pins all learn one winner.
		var wg sync.WaitGroup
		got := make([]string, 16)
		for i := range got {
			wg.Go(func() {
				v, err := s.Pin(bg, tid(2), "k", "v"+strconv.Itoa(i))
				if err != nil {
					t.Error(err)
				}
				got[i] = v
			})
		}
		wg.Wait()
		for _, v := range got {
			if v != got[0] {
				t.Fatalf("racing pins returned %q", got)
			}
		}
		if snap, _ := get(t, s, tid(2)); snap.Pins["k"] != got[0] {
			t.Errorf("the store holds %q, the pins returned %q", snap.Pins["k"], got[0])
		}
	})

	t.Run("SnapshotsAreDeepCopies", func(t *testing.T) {
		s := h.open(t, 0)
		msg := json.RawMessage(`{"role":"tool"}`)
		must[[]string](t)(s.Load(bg, tid(1), "a", "b"))
		if err := s.AddSplice(bg, tid(1), state.Splice{After: 2, Messages: []json.RawMessage{msg, json.RawMessage(`"x"`)}}); err != nil {
			t.Fatal(err)
		}
		must[string](t)(s.Pin(bg, tid(1), "k", "v"))
		msg[2] = 'X' // the caller's bytes change after the call

		s1, _ := get(t, s, tid(1))
		s1.Loaded[0] = "changed"
		s1.Splices[0].Messages[0][3] = 'Y'
		s1.Splices[0].Messages[0] = append(s1.Splices[0].Messages[0], "garbage"...)
		s1.Splices[0].After = 99
		s1.Pins["k"] = "changed"
		s1.Pins["new"] = "x"
		must[[]string](t)(s.Load(bg, tid(1), "c"))

		s2, _ := get(t, s, tid(1))
		want := state.Snapshot{Loaded: []string{"a", "b", "c"},
			Splices: []state.Splice{{After: 2, Messages: []json.RawMessage{json.RawMessage(`{"role":"tool"}`), json.RawMessage(`"x"`)}}},
			Pins:    map[string]string{"k": "v"}}
		if diff := cmp.Diff(want, s2); diff != "" {
			t.Errorf("the store changed through a snapshot (-want +got):\n%s", diff)
		}
		if len(s1.Loaded) != 2 {
			t.Errorf("an older snapshot saw a later load: %q", s1.Loaded)
		}
	})

	t.Run("ThreadsAreIsolated", func(t *testing.T) {
		s := h.open(t, 0)
		must[[]string](t)(s.Load(bg, tid(1), "a"))
		must[[]string](t)(s.Load(bg, tid(2), "b"))
		must[string](t)(s.Pin(bg, tid(2), "k", "v"))
		if err := s.AddSplice(bg, tid(2), state.Splice{After: 1}); err != nil {
			t.Fatal(err)
		}
		s1, _ := get(t, s, tid(1))
		if diff := cmp.Diff(state.Snapshot{Loaded: []string{"a"}}, s1); diff != "" {
			t.Errorf("thread 1 (-want +got):\n%s", diff)
		}
	})

	t.Run("DeleteClearStats", func(t *testing.T) {
		s := h.open(t, 0)
		if st := must[state.Stats](t)(s.Stats(bg)); st != (state.Stats{}) {
			t.Errorf("an empty store's stats: %+v", st)
		}
		must[[]string](t)(s.Load(bg, tid(1), "x"))
		must[[]string](t)(s.Load(bg, tid(2), "y"))
		if err := s.AddSplice(bg, tid(3), state.Splice{Messages: []json.RawMessage{json.RawMessage(`{}`)}}); err != nil {
			t.Fatal(err)
		}
		must[string](t)(s.Pin(bg, tid(4), "k", "v"))
		st := must[state.Stats](t)(s.Stats(bg))
		if st.Threads != 4 || st.Bytes <= 0 || st.OldestAccess.IsZero() {
			t.Errorf("stats of 4 threads: %+v", st)
		}
		del := must[bool](t)
		if !del(s.Delete(bg, tid(1))) || del(s.Delete(bg, tid(1))) {
			t.Error("Delete: want true, then false")
		}
		if _, ok := get(t, s, tid(1)); ok {
			t.Error("a deleted thread was found")
		}
		if n := must[int](t)(s.Clear(bg)); n != 3 {
			t.Errorf("Clear = %d, want 3", n)
		}
		if st := must[state.Stats](t)(s.Stats(bg)); st != (state.Stats{}) {
			t.Errorf("stats after Clear: %+v", st)
		}
		if _, ok := get(t, s, tid(2)); ok {
			t.Error("a cleared thread was found")
		}
		// The store is still usable.
		must[[]string](t)(s.Load(bg, tid(2), "z"))
		if snap, _ := get(t, s, tid(2)); !cmp.Equal(snap.Loaded, []string{"z"}) {
			t.Errorf("after Clear a thread starts afresh, got %q", snap.Loaded)
		}
	})

	t.Run("TTLExpiresIdleThreads", func(t *testing.T) {
		s := h.open(t, h.ttl)
		must[[]string](t)(s.Load(bg, tid(1), "a"))
		must[string](t)(s.Pin(bg, tid(2), "k", "v"))
		// Reads keep a thread alive: two waits of 0.6 TTL with a read between.
		h.wait(h.ttl * 6 / 10)
		if _, ok := get(t, s, tid(1)); !ok {
			t.Fatal("a thread expired before its TTL")
		}
		h.wait(h.ttl * 6 / 10)
		if _, ok := get(t, s, tid(1)); !ok {
			t.Fatal("a read did not keep the thread alive")
		}
		if _, ok := get(t, s, tid(2)); ok {
			t.Error("a thread idle past its TTL was found")
		}
		h.wait(h.ttl * 13 / 10)
		if _, ok := get(t, s, tid(1)); ok {
			t.Error("a thread idle past its TTL was found")
		}
		must[int](t)(s.Cleanup(bg))
		if st := must[state.Stats](t)(s.Stats(bg)); st.Threads != 0 {
			t.Errorf("after the TTL and Cleanup: %+v", st)
		}
		// An expired thread starts afresh.
		if got := must[[]string](t)(s.Load(bg, tid(1), "b", "a")); !cmp.Equal(got, []string{"b", "a"}) {
			t.Errorf("loading into an expired thread added %q", got)
		}
	})

	t.Run("NoExpiryKeepsIdleThreads", func(t *testing.T) {
		s := h.open(t, state.NoExpiry)
		must[[]string](t)(s.Load(bg, tid(1), "a"))
		h.wait(h.long)
		if n := must[int](t)(s.Cleanup(bg)); n != 0 {
			t.Errorf("Cleanup dropped %d threads under NoExpiry", n)
		}
		if snap, ok := get(t, s, tid(1)); !ok || !cmp.Equal(snap.Loaded, []string{"a"}) {
			t.Errorf("an idle thread is gone under NoExpiry: %+v, %v", snap, ok)
		}
	})

	t.Run("RacingLoadsLoadEachNameOnce", func(t *testing.T) {
		s := h.open(t, 0)
		racingLoads(t, []state.Store{s}, tid(7))
	})

	t.Run("ConcurrentThreadsStayIsolated", func(t *testing.T) {
		s := h.open(t, 0)
		const threads, workers, ops = 16, 8, 60
		var wg sync.WaitGroup
		for w := range workers {
			wg.Go(func() {
				r := rand.New(rand.NewPCG(uint64(w), 9))
				for range ops {
					i := r.IntN(threads)
					th := tid(i)
					var err error
					switch r.IntN(5) {
					case 0, 1:
						_, err = s.Load(bg, th, fmt.Sprintf("%d.tool%d", i, r.IntN(10)), fmt.Sprintf("%d.tool%d", i, r.IntN(10)))
					case 2:
						err = s.AddSplice(bg, th, state.Splice{After: r.IntN(9), Messages: []json.RawMessage{json.RawMessage(strconv.Itoa(i))}})
					case 3:
						_, err = s.Pin(bg, th, "k", strconv.Itoa(i))
					case 4:
						var snap state.Snapshot
						var ok bool
						if snap, ok, err = s.Get(bg, th); ok {
							checkOwn(t, i, snap)
						}
					}
					if err != nil {
						t.Error(err)
					}
					if r.IntN(50) == 0 {
						s.Delete(bg, th)
					}
				}
			})
		}
		wg.Wait()
		for i := range threads {
			if snap, ok := get(t, s, tid(i)); ok {
				checkOwn(t, i, snap)
			}
		}
	})
}

// checkOwn fails unless snap holds only what thread i's workers wrote.
func checkOwn(t *testing.T, i int, snap state.Snapshot) {
	t.Helper()
	seen := map[string]bool{}
	prefix := strconv.Itoa(i) + "."
	for _, name := range snap.Loaded {
		if len(name) < len(prefix) || name[:len(prefix)] != prefix {
			t.Errorf("thread %d holds %s", i, name)
		}
		if seen[name] {
			t.Errorf("thread %d holds %s twice", i, name)
		}
		seen[name] = true
	}
	for _, sp := range snap.Splices {
		for _, m := range sp.Messages {
			if string(m) != strconv.Itoa(i) {
				t.Errorf("thread %d holds splice %s", i, m)
			}
		}
	}
	if v, ok := snap.Pins["k"]; ok && v != strconv.Itoa(i) {
		t.Errorf("thread %d holds pin %s", i, v)
	}
}

// racingLoads races loads of overlapping names into one thread from many goroutines
// spread over stores (which may be two instances sharing one backend) and checks that
// every name was newly loaded exactly once, that every store reads one order holding
// them all, and that the names of each call sit together in that order, in the call's
// order: each load is atomic.
func racingLoads(t *testing.T, stores []state.Store, thread string) {
	t.Helper()
	const names, workers, calls = 60, 12, 25
	var mu sync.Mutex
	var results [][]string
	var wg sync.WaitGroup
	for w := range workers {
		s := stores[w%len(stores)]
		wg.Go(func() {
			r := rand.New(rand.NewPCG(uint64(w), 3))
			for range calls {
				batch := make([]string, 1+r.IntN(4))
				for i := range batch {
					batch[i] = "tool" + strconv.Itoa(r.IntN(names))
				}
				added, err := s.Load(bg, thread, batch...)
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				results = append(results, added)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	count := map[string]int{}
	for _, added := range results {
		for _, n := range added {
			count[n]++
		}
	}
	for n, c := range count {
		if c != 1 {
			t.Errorf("%s was newly loaded %d times", n, c)
		}
	}
	var first []string
	for i, s := range stores {
		snap, ok := get(t, s, thread)
		if !ok {
			t.Fatalf("store %d: the thread is missing", i)
		}
		if i == 0 {
			first = snap.Loaded
		} else if diff := cmp.Diff(first, snap.Loaded); diff != "" {
			t.Errorf("stores 0 and %d read different orders (-0 +%d):\n%s", i, i, diff)
		}
	}
	if want := slices.Sorted(maps.Keys(count)); !cmp.Equal(want, slices.Sorted(slices.Values(first))) {
		t.Errorf("loaded %q, the calls added %q", first, want)
	}
	pos := map[string]int{}
	for i, n := range first {
		pos[n] = i
	}
	for _, added := range results {
		for i := 1; i < len(added); i++ {
			if pos[added[i]] != pos[added[i-1]]+1 {
				t.Errorf("one call's names %q are not together in the order %q", added, first)
				break
			}
		}
	}
}

// TestStoreErrorsAreUnavailable checks the error type the gateway maps to a 503.
func TestStoreErrorsAreUnavailable(t *testing.T) {
	var err error = &state.Unavailable{Err: fmt.Errorf("redis get: %w", io.ErrUnexpectedEOF)}
	if !errors.Is(err, state.ErrUnavailable) || !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("%v: errors.Is fails", err)
	}
	var u *state.Unavailable
	if !errors.As(fmt.Errorf("wrapped: %w", err), &u) {
		t.Error("errors.As fails")
	}
	if got := err.Error(); got != "thread state store unavailable: redis get: unexpected EOF" {
		t.Errorf("message %q", got)
	}
	if got := (&state.Unavailable{}).Error(); got != "thread state store unavailable" {
		t.Errorf("message %q", got)
	}
	if errors.Is(errors.New("other"), state.ErrUnavailable) {
		t.Error("any error is ErrUnavailable")
	}
}
