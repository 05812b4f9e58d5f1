package store

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"
)

// backend is one implementation under the conformance suite: a fresh, empty store, and
// a way to let time pass for it (a fake clock for File, sleeping for Redis).
type backend struct {
	open    func(t *testing.T) Records
	advance func(d time.Duration)
	// tick is a TTL long enough for the calls between puts and checks, short enough
	// to wait past.
	tick time.Duration
}

var bg = context.Background()

func put(t *testing.T, s Records, owner, id, parent, data string, ttl time.Duration) {
	t.Helper()
	if err := s.Put(bg, owner, id, Record{Parent: parent, Data: []byte(data)}, ttl); err != nil {
		t.Fatalf("put %s/%s: %v", owner, id, err)
	}
}

func chain(t *testing.T, s Records, owner, id string, max int) []Record {
	t.Helper()
	c, err := s.Chain(bg, owner, id, max)
	if err != nil {
		t.Fatalf("chain %s/%s: %v", owner, id, err)
	}
	return c
}

// datas is a chain's data, joined by commas.
func datas(c []Record) string {
	var b []byte
	for i, r := range c {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, r.Data...)
	}
	return string(b)
}

func conformance(t *testing.T, be backend) {
	hour := time.Hour
	t.Run("Chains", func(t *testing.T) {
		s := be.open(t)
		put(t, s, "o", "a", "", "A", hour)
		put(t, s, "o", "b", "a", "B", hour)
		put(t, s, "o", "c", "b", "C", hour)
		put(t, s, "o", "d", "b", "D", hour) // a branch
		c := chain(t, s, "o", "c", 10)
		if datas(c) != "A,B,C" || c[0].Parent != "" || c[1].Parent != "a" || c[2].Parent != "b" {
			t.Errorf("chain of c: %q %+v", datas(c), c)
		}
		if got := datas(chain(t, s, "o", "d", 10)); got != "A,B,D" {
			t.Errorf("chain of d: %q", got)
		}
		if got := datas(chain(t, s, "o", "a", 10)); got != "A" {
			t.Errorf("chain of a: %q", got)
		}
		// At most max deep: the newest, and the first names its parent.
		c = chain(t, s, "o", "c", 2)
		if datas(c) != "B,C" || c[0].Parent != "a" {
			t.Errorf("chain of c, max 2: %q, first's parent %q", datas(c), c[0].Parent)
		}
		if c = chain(t, s, "o", "c", 0); datas(c) != "C" {
			t.Errorf("chain of c, max 0: %q", datas(c))
		}
		if c := chain(t, s, "o", "zz", 10); c != nil {
			t.Errorf("unknown id: %+v", c)
		}
		// A parent that is not there: nothing is kept.
		if err := s.Put(bg, "o", "e", Record{Parent: "nope", Data: []byte("E")}, hour); !errors.Is(err, ErrNoParent) {
			t.Errorf("put under a missing parent: %v", err)
		}
		if c := chain(t, s, "o", "e", 10); c != nil {
			t.Errorf("a refused put was kept: %+v", c)
		}
		// The data are the caller's: changing them changes nothing stored.
		c = chain(t, s, "o", "c", 10)
		c[0].Data[0] = 'X'
		if got := datas(chain(t, s, "o", "c", 10)); got != "A,B,C" {
			t.Errorf("after the caller wrote into a chain: %q", got)
		}
	})
	t.Run("Bytes", func(t *testing.T) {
		s := be.open(t)
		data := make([]byte, 200<<10)
		for i := range data {
			data[i] = byte(i * 7)
		}
		if err := s.Put(bg, "o", "bin", Record{Data: data}, hour); err != nil {
			t.Fatal(err)
		}
		if err := s.Put(bg, "o", "empty", Record{Parent: "bin"}, hour); err != nil {
			t.Fatal(err)
		}
		c := chain(t, s, "o", "empty", 5)
		if len(c) != 2 || !bytes.Equal(c[0].Data, data) || len(c[1].Data) != 0 {
			t.Errorf("binary data came back changed (%d records)", len(c))
		}
	})
	t.Run("Replace", func(t *testing.T) {
		s := be.open(t)
		put(t, s, "o", "a", "", "A", hour)
		put(t, s, "o", "b", "a", "B", hour)
		put(t, s, "o", "b", "a", "B2", hour)
		put(t, s, "o", "a", "", "A2", hour)
		if got := datas(chain(t, s, "o", "b", 10)); got != "A2,B2" {
			t.Errorf("after replacing both: %q", got)
		}
	})
	t.Run("OwnerIsolation", func(t *testing.T) {
		s := be.open(t)
		put(t, s, "alice", "x", "", "alice's", hour)
		if c := chain(t, s, "bob", "x", 10); c != nil {
			t.Errorf("bob reads alice's x: %q", datas(c))
		}
		if ok, err := s.Delete(bg, "bob", "x"); ok || err != nil {
			t.Errorf("bob deletes alice's x: %v %v", ok, err)
		}
		if err := s.Put(bg, "bob", "y", Record{Parent: "x", Data: []byte("bob's")}, hour); !errors.Is(err, ErrNoParent) {
			t.Errorf("bob continues alice's x: %v", err)
		}
		put(t, s, "bob", "x", "", "bob's", hour)
		if a, b := datas(chain(t, s, "alice", "x", 10)), datas(chain(t, s, "bob", "x", 10)); a != "alice's" || b != "bob's" {
			t.Errorf("same id, two owners: alice %q, bob %q", a, b)
		}
		// Owners and ids that would run together in a key: a naive owner+id
		// concatenation makes these one key.
		pairs := [][2]string{{"a", "b}:c"}, {"a}:b", "c"}, {"", "x"}, {"%", "x"}, {"{", "x"}, {"%7B", "x"}, {"a:", "x"}, {"a", ":x"}}
		for i, p := range pairs {
			put(t, s, p[0], p[1], "", strconv.Itoa(i), hour)
		}
		for i, p := range pairs {
			if got := datas(chain(t, s, p[0], p[1], 10)); got != strconv.Itoa(i) {
				t.Errorf("owner %q id %q reads %q, want %d", p[0], p[1], got, i)
			}
		}
	})
	t.Run("TTL", func(t *testing.T) {
		s := be.open(t)
		put(t, s, "o", "short", "", "S", be.tick)
		put(t, s, "o", "alone", "", "L", be.tick)
		put(t, s, "o", "root", "", "R", be.tick)
		put(t, s, "o", "child", "root", "C", hour) // keeps root as long as it lives
		be.advance(2 * be.tick)
		if c := chain(t, s, "o", "short", 10); c != nil {
			t.Errorf("expired record read: %q", datas(c))
		}
		if ok, err := s.Delete(bg, "o", "alone"); ok || err != nil {
			t.Errorf("deleting an expired record: %v %v", ok, err)
		}
		if got := datas(chain(t, s, "o", "child", 10)); got != "R,C" {
			t.Errorf("a live record's ancestor expired with its own TTL: chain %q", got)
		}
		if got := datas(chain(t, s, "o", "root", 10)); got != "R" {
			t.Errorf("an ancestor lives as long as its descendant: %q", got)
		}
		if err := s.Put(bg, "o", "late", Record{Parent: "short", Data: []byte("x")}, hour); !errors.Is(err, ErrNoParent) {
			t.Errorf("put under an expired parent: %v", err)
		}
	})
	t.Run("Delete", func(t *testing.T) {
		s := be.open(t)
		put(t, s, "o", "a", "", "A", hour)
		put(t, s, "o", "b", "a", "B", hour)
		put(t, s, "o", "c", "b", "C", hour)
		del := func(id string, want bool) {
			t.Helper()
			if ok, err := s.Delete(bg, "o", id); ok != want || err != nil {
				t.Errorf("delete %s: %v %v, want %v", id, ok, err, want)
			}
		}
		del("b", true)
		del("b", false)
		if c := chain(t, s, "o", "b", 10); c != nil {
			t.Errorf("deleted b read: %q", datas(c))
		}
		if got := datas(chain(t, s, "o", "c", 10)); got != "A,B,C" {
			t.Errorf("c lost its deleted ancestor's data: %q", got)
		}
		// b is still there as an ancestor, so c can be continued.
		put(t, s, "o", "d", "c", "D", hour)
		del("c", true)
		del("d", true) // the last descendant: b and c go
		if err := s.Put(bg, "o", "e", Record{Parent: "b", Data: []byte("E")}, hour); !errors.Is(err, ErrNoParent) {
			t.Errorf("b outlived its last descendant: %v", err)
		}
		if got := datas(chain(t, s, "o", "a", 10)); got != "A" {
			t.Errorf("a, never deleted: %q", got)
		}
		del("a", true)
		del("zz", false)
	})
	t.Run("Concurrent", func(t *testing.T) {
		s := be.open(t)
		var wg sync.WaitGroup
		for w := range 4 {
			wg.Go(func() {
				owner := "w" + strconv.Itoa(w)
				parent := ""
				for i := range 25 {
					id := "r" + strconv.Itoa(i)
					if err := s.Put(bg, owner, id, Record{Parent: parent, Data: []byte(id)}, hour); err != nil {
						t.Error(err)
						return
					}
					c, err := s.Chain(bg, owner, id, 100)
					if err != nil || len(c) != i+1 || c[0].Parent != "" {
						t.Errorf("%s/%s: %d records, %v", owner, id, len(c), err)
						return
					}
					parent = id
				}
			})
		}
		wg.Wait()
	})
	t.Run("Closed", func(t *testing.T) {
		s := be.open(t)
		put(t, s, "o", "a", "", "A", hour)
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		if err := s.Put(bg, "o", "b", Record{}, hour); !errors.Is(err, ErrUnavailable) {
			t.Errorf("put after close: %v", err)
		}
		if _, err := s.Chain(bg, "o", "a", 1); !errors.Is(err, ErrUnavailable) {
			t.Errorf("chain after close: %v", err)
		}
		if _, err := s.Delete(bg, "o", "a"); !errors.Is(err, ErrUnavailable) {
			t.Errorf("delete after close: %v", err)
		}
	})
	t.Run("Cancelled", func(t *testing.T) {
		s := be.open(t)
		ctx, cancel := context.WithCancel(bg)
		cancel()
		err := s.Put(ctx, "o", "a", Record{}, hour)
		if !errors.Is(err, ErrUnavailable) || !errors.Is(err, context.Canceled) {
			t.Errorf("put with a cancelled context: %v", err)
		}
		_, err = s.Chain(ctx, "o", "a", 1)
		if !errors.Is(err, ErrUnavailable) || !errors.Is(err, context.Canceled) {
			t.Errorf("chain with a cancelled context: %v", err)
		}
	})
	t.Run("Usage", func(t *testing.T) {
		s := be.open(t)
		for _, c := range []struct {
			id, parent string
			ttl        time.Duration
		}{{"", "", hour}, {"a", "a", hour}, {"a", "", 0}} {
			if err := s.Put(bg, "o", c.id, Record{Parent: c.parent}, c.ttl); err == nil || errors.Is(err, ErrUnavailable) {
				t.Errorf("put %+v: %v, want a usage error", c, err)
			}
		}
	})
}

// fakeClock is a settable clock.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

func TestFile_Conformance(t *testing.T) {
	clock := &fakeClock{t: time.Unix(1_700_000_000, 0)}
	conformance(t, backend{
		open: func(t *testing.T) Records {
			f, err := NewFile(t.TempDir(), 64<<20, clock.now)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { f.Close() })
			return f
		},
		advance: clock.advance,
		tick:    time.Minute,
	})
}

func ExampleFile() {
	dir, err := os.MkdirTemp("", "store-example-")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	f, err := NewFile(dir, 1<<20, nil)
	if err != nil {
		panic(err)
	}
	defer f.Close()
	ctx := context.Background()
	_ = f.Put(ctx, "alice", "r1", Record{Data: []byte("hello")}, time.Hour)
	_ = f.Put(ctx, "alice", "r2", Record{Parent: "r1", Data: []byte("again")}, time.Hour)
	c, _ := f.Chain(ctx, "alice", "r2", 10)
	for _, r := range c {
		fmt.Printf("%q after %q\n", r.Data, r.Parent)
	}
	c, _ = f.Chain(ctx, "bob", "r2", 10)
	fmt.Println(len(c), "for bob")
	// Output:
	// "hello" after ""
	// "again" after "r1"
	// 0 for bob
}
