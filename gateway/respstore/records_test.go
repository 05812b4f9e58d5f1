package respstore

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/maskgate/maskgate/gateway/store"
	"github.com/maskgate/maskgate/internal/redistest"
)

// callLimit bounds each call to the records in these tests: no passing call reaches it
// (a file or loopback Redis call takes milliseconds, under a second even under -race on
// a loaded machine), and none of them needs it to fire.
const callLimit = 30 * time.Second

// countingRecords is a store.Records that notes each record put.
type countingRecords struct {
	store.Records
	mu   sync.Mutex
	puts []store.Record
}

func (c *countingRecords) Put(ctx context.Context, owner, id string, r store.Record, ttl time.Duration) error {
	err := c.Records.Put(ctx, owner, id, r, ttl)
	if err == nil {
		c.mu.Lock()
		c.puts = append(c.puts, r)
		c.mu.Unlock()
	}
	return err
}

func fileRecords(t testing.TB, now func() time.Time) *store.File {
	t.Helper()
	f, err := store.NewFile(t.TempDir(), 1<<30, now)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

// turn is what the door's keep makes of one more turn after prev.
func turn(prev *Response, owner, id string, user, answer json.RawMessage, tool json.RawMessage) *Response {
	r := &Response{id: id, owner: owner, body: []byte(`{"id":"` + id + `"}`), thread: "thread-1"}
	if prev != nil {
		r.history = append(r.history, prev.history...)
		r.loaded = append(r.loaded, prev.loaded...)
		r.thread = prev.thread
	}
	r.history = append(r.history, user, answer)
	if tool != nil {
		r.loaded = append(r.loaded, tool)
	}
	return r
}

func msg(role string, i, size int) json.RawMessage {
	return json.RawMessage(fmt.Sprintf(`{"role":%q,"content":"%d %s"}`, role, i, strings.Repeat("x", size)))
}

func sameMessages(a, b []json.RawMessage) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !bytes.Equal(a[i], b[i]) {
			return false
		}
	}
	return true
}

// Each record holds what its response added, not the history before it: a 50-turn
// chain stores each message once (once more per recordDepth turns, where a chain
// starts again), and every response reads back whole, byte for byte.
func TestRecordKeeper_StoresWhatEachTurnAdds(t *testing.T) {
	rec := &countingRecords{Records: fileRecords(t, nil)}
	k := &records{rec: rec, ttl: time.Hour, timeout: callLimit}
	ctx := context.Background()
	var prev *Response
	var want []*Response
	for i := range 50 {
		var tool json.RawMessage
		if i%10 == 3 {
			tool = json.RawMessage(`{"type":"function","name":"t` + strconv.Itoa(i) + `"}`)
		}
		r := turn(prev, "alice", "resp_"+strconv.Itoa(i), msg("user", i, 1000), msg("assistant", i, 1000), tool)
		if err := k.Save(ctx, r, prev); err != nil {
			t.Fatal(err)
		}
		want = append(want, r)
		// The next turn continues what the store gives back, as the door does.
		got, err := k.Load(ctx, "alice", r.id)
		if err != nil || got == nil {
			t.Fatalf("load %s: %v %v", r.id, got, err)
		}
		prev = got
	}
	for i, r := range rec.puts {
		whole := i%recordDepth == 0 // a chain starts again
		if n := len(r.Data); !whole && n > 2200 {
			t.Errorf("turn %d stored %d bytes for one exchange of 2 KB", i, n)
		}
		if (r.Parent == "") != whole {
			t.Errorf("turn %d: parent %q", i, r.Parent)
		}
	}
	for _, w := range want {
		got, err := k.Load(ctx, "alice", w.id)
		if err != nil || got == nil {
			t.Fatalf("load %s: %v", w.id, err)
		}
		if !sameMessages(got.history, w.history) || !sameMessages(got.loaded, w.loaded) || got.thread != w.thread || !bytes.Equal(got.body, w.body) {
			t.Errorf("%s read back differs: %d/%d messages, %d/%d tools, thread %q", w.id, len(got.history), len(w.history), len(got.loaded), len(w.loaded), got.thread)
		}
		if body, ok, err := k.Body(ctx, "alice", w.id); !ok || err != nil || !bytes.Equal(body, w.body) {
			t.Errorf("body of %s: %s %v %v", w.id, body, ok, err)
		}
		if got, _ := k.Load(ctx, "bob", w.id); got != nil {
			t.Errorf("bob loads alice's %s", w.id)
		}
	}
	var total int
	for _, r := range rec.puts {
		total += len(r.Data)
	}
	// 100 KB of messages, twice at most (the chain starts again once), plus bodies.
	if total > 2*50*2100+50*200 {
		t.Errorf("a 50-turn chain stored %d bytes", total)
	}
	t.Logf("50-turn chain: %d bytes stored in %d records", total, len(rec.puts))
}

// A response whose parent the store lost meanwhile is stored whole; one that does not
// extend its parent's history (not what the door makes) too.
func TestRecordKeeper_WholeWhenItCannotContinue(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	var mu sync.Mutex
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	rec := &countingRecords{Records: fileRecords(t, clock)}
	k := &records{rec: rec, ttl: time.Minute, timeout: callLimit}
	ctx := context.Background()
	first := turn(nil, "o", "r1", msg("user", 1, 10), msg("assistant", 1, 10), nil)
	if err := k.Save(ctx, first, nil); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	now = now.Add(2 * time.Minute) // r1 expires
	mu.Unlock()
	second := turn(first, "o", "r2", msg("user", 2, 10), msg("assistant", 2, 10), nil)
	if err := k.Save(ctx, second, first); err != nil {
		t.Fatal(err)
	}
	if p := rec.puts[1].Parent; p != "" {
		t.Errorf("stored under a lost parent %q", p)
	}
	if got, _ := k.Load(ctx, "o", "r2"); got == nil || !sameMessages(got.history, second.history) {
		t.Errorf("r2 read back: %+v", got)
	}
	other := turn(nil, "o", "r3", msg("user", 3, 10), msg("assistant", 3, 10), nil) // not second's continuation
	if err := k.Save(ctx, other, second); err != nil {
		t.Fatal(err)
	}
	if p := rec.puts[2].Parent; p != "" {
		t.Errorf("a response that does not extend its parent stored under it: %q", p)
	}
	// A deleted parent still gives its descendant's history.
	third := turn(second, "o", "r4", msg("user", 4, 10), msg("assistant", 4, 10), nil)
	if err := k.Save(ctx, third, second); err != nil {
		t.Fatal(err)
	}
	if ok, _ := k.Drop(ctx, "o", "r2"); !ok {
		t.Fatal("drop r2")
	}
	if got, _ := k.Load(ctx, "o", "r4"); got == nil || !sameMessages(got.history, third.history) {
		t.Errorf("r4 after its parent was deleted: %+v", got)
	}
	if got, _ := k.Load(ctx, "o", "r2"); got != nil {
		t.Error("deleted r2 loads")
	}
	// A chain that lost its start cannot be continued (its history is not all there),
	// but its own body still reads.
	lossy := &records{rec: lostStart{rec}, ttl: time.Minute, timeout: callLimit}
	if got, err := lossy.Load(ctx, "o", "r4"); got != nil || err != nil {
		t.Errorf("a chain without its start loads: %+v %v", got, err)
	}
	if body, ok, _ := lossy.Body(ctx, "o", "r4"); !ok || !bytes.Equal(body, third.body) {
		t.Errorf("body of a chain without its start: %s %v", body, ok)
	}
}

// lostStart is a store that lost the first record of every chain.
type lostStart struct{ store.Records }

func (l lostStart) Chain(ctx context.Context, owner, id string, max int) ([]store.Record, error) {
	c, err := l.Records.Chain(ctx, owner, id, max)
	if len(c) > 1 {
		c = c[1:]
	}
	return c, err
}

func TestRecordKeeper_DecodeRejectsDamage(t *testing.T) {
	r := turn(nil, "o", "r1", msg("user", 1, 10), msg("assistant", 1, 10), json.RawMessage(`{"t":1}`))
	data := encodeRecord(r, 0, 0)
	if p, err := decodeRecord(data, true); err != nil || len(p.hist) != 2 || len(p.loaded) != 1 {
		t.Fatalf("round trip: %+v %v", p, err)
	}
	for n := range len(data) {
		if _, err := decodeRecord(data[:n], true); err == nil {
			t.Errorf("the first %d of %d bytes decoded", n, len(data))
		}
	}
	if _, err := decodeRecord(append(data, 0), true); err == nil {
		t.Error("a trailing byte decoded")
	}
	bad := append([]byte{9}, data[1:]...)
	if _, err := decodeRecord(bad, false); !errors.Is(err, errRecordFormat) {
		t.Errorf("another format: %v", err)
	}
}

// BenchmarkResponseKeepers puts and reads back a 20-turn chain (2 messages of 1 KB a
// turn), as the door does for each turn: memory, a File on the test's temp folder, and
// Redis on loopback. Compare ns/op between them.
func BenchmarkResponseKeepers(b *testing.B) {
	srv := redistest.Start(b, false)
	red, err := store.NewRedis(store.RedisOptions{URL: srv.URL})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { red.Close() })
	for _, c := range []struct {
		name string
		k    func(b *testing.B) Keeper
	}{
		{"memory", func(*testing.B) Keeper { return New(1<<30, time.Hour, time.Now) }},
		{"file", func(b *testing.B) Keeper {
			return &records{rec: fileRecords(b, nil), ttl: time.Hour, timeout: callLimit}
		}},
		{"redis", func(*testing.B) Keeper { return &records{rec: red, ttl: time.Hour, timeout: callLimit} }},
	} {
		b.Run(c.name, func(b *testing.B) {
			k := c.k(b)
			ctx := context.Background()
			users, answers := make([]json.RawMessage, 20), make([]json.RawMessage, 20)
			for i := range users {
				users[i], answers[i] = msg("user", i, 1000), msg("assistant", i, 1000)
			}
			n := 0
			for b.Loop() {
				var prev *Response
				for i := range 20 {
					n++
					r := turn(prev, "alice", "resp_"+strconv.Itoa(n), users[i], answers[i], nil)
					if err := k.Save(ctx, r, prev); err != nil {
						b.Fatal(err)
					}
					got, err := k.Load(ctx, "alice", r.id)
					if err != nil || got == nil || len(got.history) != 2*(i+1) {
						b.Fatalf("load: %v", err)
					}
					prev = got
				}
			}
			b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N)/20, "µs/turn")
		})
	}
}
