package store

import (
	"context"
	"errors"
	"os"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/maskgate/maskgate/internal/redistest"
)

func TestMain(m *testing.M) {
	// The tests kill servers on purpose: go-redis's log of each failed dial is noise.
	redis.SetLogger(quiet{})
	os.Exit(m.Run())
}

type quiet struct{}

func (quiet) Printf(context.Context, string, ...any) {}

// callLimit is the dial and read timeout of the tests' stores: no passing call waits it
// out (a call to a local server takes milliseconds, well under a second even under
// -race at a load of 18), so it is set far above that; failFast is the most a call may
// take while the server is down, where the refused dial or the reset connection ends it
// at once: a bound on a hang, under callLimit so that a call that waited out a timeout
// instead of failing on the refusal fails it too.
const (
	callLimit = 30 * time.Second
	failFast  = 10 * time.Second
)

func newRedis(t *testing.T, url, prefix string) *Redis {
	t.Helper()
	s, err := NewRedis(RedisOptions{URL: url, Prefix: prefix, DialTimeout: callLimit, ReadTimeout: callLimit})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func TestRedis_Conformance(t *testing.T) {
	srv := redistest.Start(t, false)
	var n atomic.Int64
	conformance(t, backend{
		open: func(t *testing.T) Records {
			return newRedis(t, srv.URL, "t"+strconv.FormatInt(n.Add(1), 10)+":")
		},
		advance: time.Sleep,
		// Real time: the records put with this TTL must outlive the puts and reads
		// between (a few milliseconds each), then expire in the wait of two ticks.
		tick: 3 * time.Second,
	})
}

// The keys are as documented: one hash per record, the owner as hash tag, escaped
// where it could be read as another's.
func TestRedis_Keys(t *testing.T) {
	srv := redistest.Start(t, false)
	s := newRedis(t, srv.URL, "")
	raw := redis.NewClient(&redis.Options{Addr: srv.Addr})
	defer raw.Close()
	put(t, s, "alice", "r1", "", "one", time.Hour)
	put(t, s, "alice", "r2", "r1", "two", time.Minute)
	put(t, s, "a{b}%", "r1", "", "odd", time.Hour)
	put(t, s, "", "r1", "", "anon", time.Hour)
	for key, want := range map[string]map[string]string{
		"maskgate:resp:{alice}:r1":       {"p": "", "d": "one", "n": "1"},
		"maskgate:resp:{alice}:r2":       {"p": "r1", "d": "two", "n": "0"},
		"maskgate:resp:{a%7Bb%7D%25}:r1": {"p": "", "d": "odd", "n": "0"},
		"maskgate:resp:{%}:r1":           {"p": "", "d": "anon", "n": "0"},
	} {
		got, err := raw.HGetAll(bg, key).Result()
		if err != nil || len(got) != len(want) {
			t.Errorf("%s: %v %v", key, got, err)
			continue
		}
		for f, v := range want {
			if got[f] != v {
				t.Errorf("%s %s = %q, want %q", key, f, got[f], v)
			}
		}
	}
	if ttl := raw.PTTL(bg, "maskgate:resp:{alice}:r2").Val(); ttl <= 0 || ttl > time.Minute {
		t.Errorf("r2's TTL %v", ttl)
	}
	// Deleting r1, which r2 continues, marks it; deleting r2 then removes both.
	if ok, _ := s.Delete(bg, "alice", "r1"); !ok {
		t.Fatal("delete r1")
	}
	if x := raw.HGet(bg, "maskgate:resp:{alice}:r1", "x").Val(); x != "1" {
		t.Errorf("deleted r1 with a descendant: x = %q", x)
	}
	if ok, _ := s.Delete(bg, "alice", "r2"); !ok {
		t.Fatal("delete r2")
	}
	if n := raw.Exists(bg, "maskgate:resp:{alice}:r1", "maskgate:resp:{alice}:r2").Val(); n != 0 {
		t.Errorf("%d of alice's keys left after deleting both", n)
	}
	if _, err := NewRedis(RedisOptions{URL: srv.URL, Prefix: "a{b}:"}); err == nil {
		t.Error("a prefix with braces was accepted")
	}
	if _, err := NewRedis(RedisOptions{}); err == nil {
		t.Error("no URL was accepted")
	}
}

// A dead server fails every call fast with ErrUnavailable; once it is back the same
// store serves again, and a persistent server still has the records.
func TestRedis_KillAndRestart(t *testing.T) {
	srv := redistest.Start(t, true)
	s := newRedis(t, srv.URL, "")
	put(t, s, "o", "a", "", "A", time.Hour)
	put(t, s, "o", "b", "a", "B", time.Hour)
	srv.Kill()
	calls := map[string]func() error{
		"put":   func() error { return s.Put(bg, "o", "c", Record{Parent: "b"}, time.Hour) },
		"chain": func() error { _, err := s.Chain(bg, "o", "b", 10); return err },
		"delete": func() error {
			_, err := s.Delete(bg, "o", "a")
			return err
		},
	}
	for range 2 { // the pooled connections, then new dials
		for name, call := range calls {
			start := time.Now()
			err := call()
			if took := time.Since(start); !errors.Is(err, ErrUnavailable) || took > failFast {
				t.Errorf("%s with the server down: %v after %v", name, err, took)
			}
		}
	}
	srv.Restart()
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, err := s.Chain(bg, "o", "b", 10)
		if err == nil {
			if datas(c) != "A,B" {
				t.Errorf("after the restart: %q", datas(c))
			}
			break
		}
		if !errors.Is(err, ErrUnavailable) || time.Now().After(deadline) {
			t.Fatalf("the store did not come back within 10s: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	put(t, s, "o", "c", "b", "C", time.Hour)
	if got := datas(chain(t, s, "o", "c", 10)); got != "A,B,C" {
		t.Errorf("a put after the restart: %q", got)
	}
	if err := s.Ping(context.Background()); err != nil {
		t.Error(err)
	}
}
