package state

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// clock is a fake clock for tests.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *clock { return &clock{t: time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

func TestMemory_LoadKeepsFirstLoadOrderAndIsIdempotent(t *testing.T) {
	m := NewMemory(Options{})
	if got := m.Load("t", "b", "a", "b"); !cmp.Equal(got, []string{"b", "a"}) {
		t.Errorf("first load added %q", got)
	}
	if got := m.Load("t", "a", "c", "b"); !cmp.Equal(got, []string{"c"}) {
		t.Errorf("second load added %q", got)
	}
	s, ok := m.Get("t")
	if !ok {
		t.Fatal("thread missing")
	}
	if diff := cmp.Diff([]string{"b", "a", "c"}, s.Loaded); diff != "" {
		t.Errorf("loaded (-want +got):\n%s", diff)
	}
	if _, ok := m.Get("other"); ok {
		t.Error("unknown thread found")
	}
}

func TestMemory_TTLExpiresIdleThreads(t *testing.T) {
	c := newClock()
	m := NewMemory(Options{TTL: time.Hour, Now: c.Now})
	m.Load("old", "a")
	c.Advance(40 * time.Minute)
	m.Load("young", "b")
	c.Advance(30 * time.Minute) // old idle 70m, young 30m

	if st := m.Stats(); st.Threads != 2 || !st.OldestAccess.Equal(c.Now().Add(-70*time.Minute)) {
		t.Errorf("stats before cleanup = %+v", st)
	}
	if _, ok := m.Get("old"); ok {
		t.Error("Get returned a thread idle past the TTL")
	}
	m.Load("old2", "x")
	c.Advance(61 * time.Minute) // young idle 91m, old2 61m
	m.Load("fresh", "y")
	if n := m.Cleanup(); n != 2 {
		t.Errorf("Cleanup dropped %d threads, want 2", n)
	}
	if st := m.Stats(); st.Threads != 1 || !st.OldestAccess.Equal(c.Now()) {
		t.Errorf("stats after cleanup = %+v", st)
	}
}

func TestMemory_GetKeepsAThreadAlive(t *testing.T) {
	c := newClock()
	m := NewMemory(Options{TTL: time.Hour, Now: c.Now})
	m.Load("t", "a")
	for range 5 {
		c.Advance(50 * time.Minute)
		if _, ok := m.Get("t"); !ok {
			t.Fatal("thread expired while in use")
		}
	}
	if n := m.Cleanup(); n != 0 {
		t.Errorf("Cleanup dropped %d", n)
	}
}

func TestMemory_EvictsLeastRecentlyUsedPastMaxBytes(t *testing.T) {
	c := newClock()
	// Each thread: id (2) + overhead (256) + one 8-byte name (8+32) = 298 bytes.
	m := NewMemory(Options{MaxBytes: 3 * 298, Now: c.Now})
	for _, th := range []string{"t1", "t2", "t3"} {
		m.Load(th, "tool_"+th+"x")
		c.Advance(time.Second)
	}
	if st := m.Stats(); st.Threads != 3 || st.Bytes != 3*298 {
		t.Fatalf("stats = %+v", st)
	}
	m.Get("t1") // t2 is now least recently used
	m.Load("t4", "tool_t4x")
	if _, ok := m.Get("t2"); ok {
		t.Error("t2 (least recently used) was kept")
	}
	for _, th := range []string{"t1", "t3", "t4"} {
		if _, ok := m.Get(th); !ok {
			t.Errorf("%s was evicted", th)
		}
	}
	if st := m.Stats(); st.Bytes > 3*298 {
		t.Errorf("bytes %d over the limit", st.Bytes)
	}
	// A splice larger than the whole budget evicts everything, its own thread last.
	m.AddSplice("t1", Splice{After: 1, Messages: []json.RawMessage{json.RawMessage(strings.Repeat("x", 2000))}})
	if st := m.Stats(); st.Threads != 0 || st.Bytes != 0 {
		t.Errorf("after an oversized splice: %+v", st)
	}
}

func TestMemory_SnapshotsAreCopies(t *testing.T) {
	m := NewMemory(Options{})
	msg := json.RawMessage(`{"role":"tool"}`)
	m.Load("t", "a", "b")
	m.AddSplice("t", Splice{After: 2, Messages: []json.RawMessage{msg}})
	msg[2] = 'X' // the caller's bytes change after the call

	s1, _ := m.Get("t")
	s1.Loaded[0] = "changed"
	s1.Splices[0].Messages[0][3] = 'Y'
	s1.Splices[0].After = 99
	m.Load("t", "c")

	s2, _ := m.Get("t")
	want := Snapshot{Loaded: []string{"a", "b", "c"},
		Splices: []Splice{{After: 2, Messages: []json.RawMessage{json.RawMessage(`{"role":"tool"}`)}}}}
	if diff := cmp.Diff(want, s2); diff != "" {
		t.Errorf("store changed through a snapshot (-want +got):\n%s", diff)
	}
	if len(s1.Loaded) != 2 {
		t.Errorf("an older snapshot saw a later load: %q", s1.Loaded)
	}
}

func TestMemory_DeleteAndClear(t *testing.T) {
	m := NewMemory(Options{})
	m.Load("a", "x")
	m.Load("b", "y")
	m.AddSplice("c", Splice{})
	if !m.Delete("a") || m.Delete("a") {
		t.Error("Delete: want true then false")
	}
	if n := m.Clear(); n != 2 {
		t.Errorf("Clear = %d, want 2", n)
	}
	if st := m.Stats(); st != (Stats{}) {
		t.Errorf("stats after Clear = %+v", st)
	}
}

func TestMemory_RunCleansUpUntilCancelled(t *testing.T) {
	c := newClock()
	m := NewMemory(Options{TTL: time.Minute, Now: c.Now})
	m.Load("t", "a")
	c.Advance(2 * time.Minute)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { m.Run(ctx, time.Millisecond); close(done) }()
	for m.Stats().Threads != 0 {
		time.Sleep(time.Millisecond)
	}
	cancel()
	<-done
}

// TestMemory_ThreadsNeverSeeEachOthersTools is the isolation property: whatever the
// interleaving, a thread's state holds only the tools loaded into that thread.
func TestMemory_ThreadsNeverSeeEachOthersTools(t *testing.T) {
	m := NewMemory(Options{})
	const threads, workers, ops = 64, 16, 400
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(w), 7))
			for range ops {
				th := fmt.Sprintf("th%d", r.IntN(threads))
				switch r.IntN(4) {
				case 0, 1:
					// A tool's name says which thread it was loaded into.
					m.Load(th, fmt.Sprintf("%s.tool%d", th, r.IntN(20)), fmt.Sprintf("%s.tool%d", th, r.IntN(20)))
				case 2:
					m.AddSplice(th, Splice{After: r.IntN(10), Messages: []json.RawMessage{json.RawMessage(`"` + th + `"`)}})
				case 3:
					s, ok := m.Get(th)
					if ok {
						checkOwn(t, th, s)
					}
				}
				if r.IntN(200) == 0 {
					m.Delete(th)
				}
			}
		}()
	}
	wg.Wait()
	for i := range threads {
		th := fmt.Sprintf("th%d", i)
		if s, ok := m.Get(th); ok {
			checkOwn(t, th, s)
		}
	}
}

func checkOwn(t *testing.T, th string, s Snapshot) {
	t.Helper()
	seen := map[string]bool{}
	for _, name := range s.Loaded {
		if !strings.HasPrefix(name, th+".") {
			t.Errorf("thread %s holds %s", th, name)
		}
		if seen[name] {
			t.Errorf("thread %s holds %s twice", th, name)
		}
		seen[name] = true
	}
	for _, sp := range s.Splices {
		for _, msg := range sp.Messages {
			if string(msg) != `"`+th+`"` {
				t.Errorf("thread %s holds splice %s", th, msg)
			}
		}
	}
}

func TestMemory_NoExpiryKeepsIdleThreads(t *testing.T) {
	c := newClock()
	m := NewMemory(Options{TTL: NoExpiry, Now: c.Now})
	m.Load("old", "a")
	c.Advance(1000 * time.Hour)
	if n := m.Cleanup(); n != 0 {
		t.Errorf("Cleanup dropped %d threads under NoExpiry", n)
	}
	if snap, ok := m.Get("old"); !ok || len(snap.Loaded) != 1 {
		t.Error("a thread idle 1000h is gone under NoExpiry")
	}
}
