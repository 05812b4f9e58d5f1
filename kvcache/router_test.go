package kvcache

import (
	"fmt"
	"slices"
	"sync"
	"testing"
)

func newTestRouter(t *testing.T, ids []string, o RouterOptions) *Router {
	t.Helper()
	r, err := NewRouter(ids, o)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

var fourReplicas = []string{"http://a:8000/v1", "http://b:8000/v1", "http://c:8000/v1", "http://d:8000/v1"}

// routeAndServe plays one whole request: pick, hold it in flight, record, release.
func routeAndServe(r *Router, prefix, thread string) Route {
	rt := r.Pick(prefix, thread)
	r.Acquire(rt.Order[0])
	r.Served(thread, prefix, rt.Order[0])
	r.Release(rt.Order[0])
	return rt
}

func TestRouter_SessionsOfOneCatalogShareOneReplicaWhileBalanced(t *testing.T) {
	r := newTestRouter(t, fourReplicas, RouterOptions{})
	home := r.Pick("catalog-v1", "").Order[0]
	// 31 sessions in flight at once stay within DefaultBalanceAbs, so none is moved.
	for n := range DefaultBalanceAbs - 1 {
		rt := r.Pick("catalog-v1", fmt.Sprintf("thread-%d", n))
		if rt.Order[0] != home || rt.Why != RoutePrefix {
			t.Fatalf("session %d went to %d (%s), want the catalog's home %d", n, rt.Order[0], rt.Why, home)
		}
		r.Acquire(rt.Order[0])
	}
	if got := r.Load(home); got != DefaultBalanceAbs-1 {
		t.Errorf("home load %d, want %d", got, DefaultBalanceAbs-1)
	}
	// And turn after turn, sequentially.
	for n := range 200 {
		if rt := routeAndServe(r, "catalog-v1", fmt.Sprintf("seq-%d", n)); rt.Order[0] != home {
			t.Fatalf("sequential session %d went to %d, want %d", n, rt.Order[0], home)
		}
	}
}

func TestRouter_PrefixesSpreadOverReplicas(t *testing.T) {
	r := newTestRouter(t, fourReplicas, RouterOptions{})
	count := make([]int, len(fourReplicas))
	for n := range 400 {
		count[r.Pick(fmt.Sprintf("catalog-%d", n), "").Order[0]]++
	}
	for i, c := range count {
		if c < 60 { // 100 expected; a hash this skewed would defeat the point
			t.Errorf("replica %d is home to %d of 400 prefixes: %v", i, c, count)
		}
	}
}

func TestRouter_ThreadReturnsToTheReplicaThatServedIt(t *testing.T) {
	r := newTestRouter(t, fourReplicas, RouterOptions{})
	home := r.Pick("p", "").Order[0]
	other := (home + 1) % 4
	// The thread was served elsewhere (say the home was busy): its conversation is there.
	r.Served("t1", "p", other)
	if rt := r.Pick("p", "t1"); rt.Order[0] != other || rt.Why != RouteThread {
		t.Errorf("thread went to %d (%s), want %d (thread)", rt.Order[0], rt.Why, other)
	}
	if rt := r.Pick("p", "t2"); rt.Order[0] != home || rt.Why != RoutePrefix {
		t.Errorf("a new thread went to %d (%s), want the prefix home %d", rt.Order[0], rt.Why, home)
	}
	// A new catalog version: the old replica holds nothing of the new prefix.
	if rt := r.Pick("p2", "t1"); rt.Why == RouteThread {
		t.Errorf("thread affinity survived a prefix change: %+v", rt)
	}
	// Down and back up: it may have restarted with an empty cache.
	r.MarkDown(other)
	if rt := r.Pick("p", "t1"); rt.Order[0] == other {
		t.Errorf("thread went to its replica while it was down: %+v", rt)
	}
	r.MarkUp(other)
	if rt := r.Pick("p", "t1"); rt.Why == RouteThread {
		t.Errorf("thread affinity survived the replica going down: %+v", rt)
	}
}

func TestRouter_WithoutPrefixTheThreadIsHashed(t *testing.T) {
	r := newTestRouter(t, fourReplicas, RouterOptions{})
	first := r.Pick("", "only-thread")
	for range 10 {
		if rt := r.Pick("", "only-thread"); rt.Order[0] != first.Order[0] || rt.Why != RoutePrefix {
			t.Fatalf("thread without prefix moved: %+v then %+v", first, rt)
		}
	}
}

func TestRouter_ThreadMemoryIsBounded(t *testing.T) {
	r := newTestRouter(t, fourReplicas, RouterOptions{Threads: 2})
	home := r.Pick("p", "").Order[0]
	other := (home + 1) % 4
	r.Served("t1", "p", other)
	r.Served("t2", "p", other)
	r.Served("t3", "p", other)
	if rt := r.Pick("p", "t1"); rt.Why == RouteThread {
		t.Error("the least recently served thread was not forgotten")
	}
	if rt := r.Pick("p", "t3"); rt.Why != RouteThread || rt.Order[0] != other {
		t.Errorf("the newest thread was forgotten: %+v", rt)
	}
}

func TestRouter_ImbalanceNeedsBothThresholdsStrictlyExceeded(t *testing.T) {
	tests := []struct {
		name           string
		homeLoad, rest int
		moved          bool
	}{
		{"gap equal to abs", 4, 0, false},
		{"gap one over abs", 5, 0, true},
		{"ratio equal to rel", 15, 10, false}, // gap 5 > 4, but 15 is not > 10*1.5
		{"ratio just over rel", 16, 10, true},
		{"gap equal to abs, ratio high", 8, 4, false},
		{"gap over abs, ratio under", 25, 20, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ids := []string{"x", "y"}
			r := newTestRouter(t, ids, RouterOptions{BalanceAbs: 4, BalanceRel: 1.5})
			home := r.Pick("p", "").Order[0]
			for range tt.homeLoad {
				r.Acquire(home)
			}
			for range tt.rest {
				r.Acquire(1 - home)
			}
			rt := r.Pick("p", "")
			if moved := rt.Order[0] != home; moved != tt.moved {
				t.Errorf("loads %d vs %d: moved=%v (%+v), want %v", tt.homeLoad, tt.rest, moved, rt, tt.moved)
			}
			if tt.moved && rt.Why != RouteBalance {
				t.Errorf("why %q, want %q", rt.Why, RouteBalance)
			}
			if !slices.Contains(rt.Order, home) {
				t.Errorf("the home is not among the candidates: %v", rt.Order)
			}
		})
	}
}

func TestRouter_BalanceAlsoBoundsThreadAffinity(t *testing.T) {
	r := newTestRouter(t, []string{"x", "y"}, RouterOptions{BalanceAbs: 1, BalanceRel: 1})
	r.Served("t", "p", 0)
	r.Acquire(0)
	r.Acquire(0)
	if rt := r.Pick("p", "t"); rt.Order[0] != 1 || rt.Why != RouteBalance {
		t.Errorf("an overloaded thread replica kept the thread: %+v", rt)
	}
}

func TestRouter_DownReplicasAreTriedLast(t *testing.T) {
	r := newTestRouter(t, fourReplicas, RouterOptions{})
	home := r.Pick("p", "").Order[0]
	if !r.MarkDown(home) || r.MarkDown(home) {
		t.Error("MarkDown does not report the change once")
	}
	rt := r.Pick("p", "")
	if rt.Order[0] == home || rt.Order[len(rt.Order)-1] != home || len(rt.Order) != 4 {
		t.Errorf("order %v with %d down", rt.Order, home)
	}
	for i := range 4 {
		r.MarkDown(i)
	}
	rt = r.Pick("p", "")
	if rt.Why != RouteAllDown || len(rt.Order) != 4 {
		t.Errorf("all down: %+v", rt)
	}
	if !r.MarkUp(2) || r.MarkUp(2) || !r.Healthy(2) {
		t.Error("MarkUp does not report the change once")
	}
	if rt := r.Pick("p", ""); rt.Order[0] != 2 {
		t.Errorf("the only healthy replica is not first: %+v", rt)
	}
}

func TestRouter_RemovingAReplicaMovesOnlyItsKeys(t *testing.T) {
	five := []string{"r1", "r2", "r3", "r4", "r5"}
	all := newTestRouter(t, five, RouterOptions{})
	// The same set in another order, less r3: homes are decided by ID, not position.
	fewer := newTestRouter(t, []string{"r5", "r4", "r2", "r1"}, RouterOptions{})
	down := newTestRouter(t, five, RouterOptions{})
	down.MarkDown(2)
	moved := 0
	for n := range 2000 {
		key := fmt.Sprintf("k%d", n)
		before := all.Pick(key, "").Order
		after := fewer.ids[fewer.Pick(key, "").Order[0]]
		if all.ids[before[0]] != "r3" {
			if after != all.ids[before[0]] {
				t.Fatalf("key %s moved from %s to %s though its replica stayed", key, all.ids[before[0]], after)
			}
		} else {
			moved++
			if after != all.ids[before[1]] {
				t.Fatalf("key %s moved to %s, want its second choice %s", key, after, all.ids[before[1]])
			}
		}
		if got := down.Pick(key, "").Order[0]; all.ids[before[0]] != "r3" && got != before[0] {
			t.Fatalf("key %s moved when r3 went down", key)
		}
	}
	if moved < 300 || moved > 500 { // about a fifth of 2000
		t.Errorf("%d keys were homed on r3, want about 400", moved)
	}
}

func TestRouter_KeylessRequestsRotateOverIdleReplicas(t *testing.T) {
	r := newTestRouter(t, fourReplicas, RouterOptions{})
	var got []int
	for range 4 {
		rt := r.Pick("", "")
		if rt.Why != RouteLeastLoaded {
			t.Fatalf("why %q", rt.Why)
		}
		got = append(got, rt.Order[0])
	}
	slices.Sort(got)
	if !slices.Equal(got, []int{0, 1, 2, 3}) {
		t.Errorf("four keyless requests went to %v, want each replica once", got)
	}
	r.Acquire(0)
	r.Acquire(1)
	r.Acquire(2)
	if rt := r.Pick("", ""); rt.Order[0] != 3 {
		t.Errorf("keyless request went to %d, want the idle replica 3", rt.Order[0])
	}
}

func TestNewRouter_RefusesNoReplicasAndDuplicateIDs(t *testing.T) {
	if _, err := NewRouter(nil, RouterOptions{}); err == nil {
		t.Error("no replicas: no error")
	}
	if _, err := NewRouter([]string{"a", "b", "a"}, RouterOptions{}); err == nil {
		t.Error("duplicate IDs: no error")
	}
}

func TestRouter_ConcurrentUseKeepsCountsExact(t *testing.T) {
	r := newTestRouter(t, fourReplicas, RouterOptions{})
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for n := range 200 {
				rt := r.Pick(fmt.Sprintf("p%d", n%3), fmt.Sprintf("g%d-t%d", g, n%5))
				r.Acquire(rt.Order[0])
				r.Served(fmt.Sprintf("g%d-t%d", g, n%5), fmt.Sprintf("p%d", n%3), rt.Order[0])
				if n%50 == 0 {
					r.MarkDown(n % 4)
					r.MarkUp(n % 4)
				}
				r.Release(rt.Order[0])
			}
		})
	}
	wg.Wait()
	for i := range 4 {
		if l := r.Load(i); l != 0 {
			t.Errorf("replica %d load %d after every request ended", i, l)
		}
	}
}

func ExampleRouter() {
	r, err := NewRouter([]string{"http://gpu0:8000/v1", "http://gpu1:8000/v1", "http://gpu2:8000/v1"}, RouterOptions{})
	if err != nil {
		panic(err)
	}
	// Two sessions of one profile: the catalog prefix sends both to its home replica.
	a := r.Pick("catalog-3f9a", "thread-a")
	b := r.Pick("catalog-3f9a", "thread-b")
	fmt.Println(a.Order[0] == b.Order[0], a.Why)

	// The request is in flight on the chosen replica until it ends; then the thread is
	// remembered there.
	r.Acquire(a.Order[0])
	r.Served("thread-a", "catalog-3f9a", a.Order[0])
	r.Release(a.Order[0])

	// If the home goes down, its sessions move to their second choice; the rest stay.
	r.MarkDown(a.Order[0])
	c := r.Pick("catalog-3f9a", "thread-a")
	fmt.Println(c.Order[0] == a.Order[1], c.Why, c.Order[len(c.Order)-1] == a.Order[0])
	// Output:
	// true prefix
	// true prefix true
}
