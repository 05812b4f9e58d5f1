package store

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

func openFile(t *testing.T, dir string, maxBytes int64, clock *fakeClock) *File {
	t.Helper()
	f, err := NewFile(dir, maxBytes, clock.now)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

func newClock() *fakeClock { return &fakeClock{t: time.Unix(1_700_000_000, 0)} }

// recSize is a record file's size: header, names, data, checksum.
func recSize(owner, id, parent string, data int) int64 {
	return int64(fileFixed + fileHeadCRC + len(owner) + len(id) + len(parent) + data + fileTailCRC)
}

func TestFile_EvictsTheOldestWithinTheBound(t *testing.T) {
	data := strings.Repeat("x", 1000)
	one := recSize("o", "r00", "", len(data))
	f := openFile(t, t.TempDir(), 10*one+one/2, newClock())
	for i := range 20 {
		put(t, f, "o", "r"+two(i), "", data, time.Hour)
		if f.Bytes() > f.maxBytes {
			t.Fatalf("after %d puts, %d bytes held, bound %d", i+1, f.Bytes(), f.maxBytes)
		}
	}
	for i := range 20 {
		c := chain(t, f, "o", "r"+two(i), 1)
		if kept := c != nil; kept != (i >= 10) {
			t.Errorf("r%s kept: %v", two(i), kept)
		}
	}
	if err := f.Put(bg, "o", "huge", Record{Data: make([]byte, 11*one)}, time.Hour); !errors.Is(err, ErrTooLarge) {
		t.Errorf("a record past the whole bound: %v", err)
	}
}

func two(i int) string { return string([]byte{byte('0' + i/10), byte('0' + i%10)}) }

// A chain is evicted from its end: what is left of it is always whole. A chain written
// to recently outlives records written before.
func TestFile_EvictsChainsFromTheirEnd(t *testing.T) {
	data := strings.Repeat("x", 1000)
	one := recSize("o", "c0", "c0", len(data))
	clock := newClock()
	f := openFile(t, t.TempDir(), 8*one, clock)
	put(t, f, "o", "old", "", data, time.Hour)
	for i := range 5 {
		parent := ""
		if i > 0 {
			parent = "c" + strconv.Itoa(i-1)
		}
		put(t, f, "o", "c"+strconv.Itoa(i), parent, data, time.Hour)
	}
	put(t, f, "o", "mid", "", data, time.Hour)
	put(t, f, "o", "c5", "c4", data, time.Hour) // the chain is the newest again
	// 8 records: full. Two more roots push out "old" and "mid", not the chain.
	put(t, f, "o", "n1", "", data, time.Hour)
	put(t, f, "o", "n2", "", data, time.Hour)
	for _, id := range []string{"old", "mid"} {
		if chain(t, f, "o", id, 1) != nil {
			t.Errorf("%s outlived a chain written after it", id)
		}
	}
	if c := chain(t, f, "o", "c5", 10); len(c) != 6 || c[0].Parent != "" {
		t.Errorf("the chain lost records: %d, first's parent %q", len(c), c[0].Parent)
	}
	// More roots: now the chain is the oldest; it goes from its end, whole at every step.
	for i := range 4 {
		put(t, f, "o", "m"+strconv.Itoa(i), "", data, time.Hour)
		for j := range 6 {
			if c := chain(t, f, "o", "c"+strconv.Itoa(j), 10); c != nil && c[0].Parent != "" {
				t.Fatalf("after %d more roots, c%d's chain is not whole", i+1, j)
			}
		}
	}
	for j := range 6 {
		if kept := chain(t, f, "o", "c"+strconv.Itoa(j), 1) != nil; kept != (j < 2) {
			t.Errorf("after 4 more roots, c%d kept: %v; want c0 and c1 alone", j, kept)
		}
	}
	// A chain that outgrows the bound: the record that would take it past is refused,
	// and the chain as it was stays whole.
	g := openFile(t, t.TempDir(), 3*one, clock)
	put(t, g, "o", "c0", "", data, time.Hour)
	put(t, g, "o", "c1", "c0", data, time.Hour)
	put(t, g, "o", "c2", "c1", data, time.Hour)
	if err := g.Put(bg, "o", "c3", Record{Parent: "c2", Data: []byte(data)}, time.Hour); !errors.Is(err, ErrTooLarge) {
		t.Errorf("a chain past the bound: %v", err)
	}
	if c := chain(t, g, "o", "c2", 10); len(c) != 3 {
		t.Errorf("the chain after a refused put: %d records", len(c))
	}
}

// NewFile finds what the last process kept: records, their own expiry, deletions.
func TestFile_Restart(t *testing.T) {
	dir, clock := t.TempDir(), newClock()
	f := openFile(t, dir, 1<<20, clock)
	put(t, f, "o", "a", "", "A", time.Minute)
	put(t, f, "o", "b", "a", "B", time.Hour)
	put(t, f, "o", "c", "b", "C", time.Hour)
	put(t, f, "o", "short", "", "S", time.Minute)
	if ok, _ := f.Delete(bg, "o", "b"); !ok {
		t.Fatal("delete b")
	}
	if _, err := NewFile(dir, 1<<20, clock.now); err == nil {
		t.Fatal("a second store opened the folder in use")
	}
	before := f.Bytes()
	f.Close()

	clock.advance(10 * time.Minute)
	g := openFile(t, dir, 1<<20, clock)
	if got := datas(chain(t, g, "o", "c", 10)); got != "A,B,C" {
		t.Errorf("after a restart, c's chain: %q", got)
	}
	if c := chain(t, g, "o", "short", 10); c != nil {
		t.Errorf("expired while closed, read after: %q", datas(c))
	}
	if c := chain(t, g, "o", "b", 10); c != nil {
		t.Errorf("deleted before the restart, read after: %q", datas(c))
	}
	if got, want := g.Bytes(), before-recSize("o", "short", "", 1); got != want {
		t.Errorf("after a restart, %d bytes held; want %d", got, want)
	}
	if ok, _ := g.Delete(bg, "o", "c"); !ok {
		t.Error("delete c")
	}
	// b, deleted, went with its last descendant; a stays.
	if got, want := g.Bytes(), recSize("o", "a", "", 1); got != want {
		t.Errorf("after deleting the chain's end, %d bytes held; want a's %d", got, want)
	}
	clock.advance(2 * time.Hour)
	if c := chain(t, g, "o", "a", 10); c != nil {
		t.Errorf("past every expiry, a read: %q", datas(c))
	}
	if left := countRecFiles(t, dir); left != 0 {
		t.Errorf("%d record files left after everything expired", left)
	}
}

func countRecFiles(t *testing.T, dir string) int {
	t.Helper()
	n := 0
	_ = filepath.WalkDir(filepath.Join(dir, "r"), func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			n++
		}
		return nil
	})
	return n
}

// A torn or corrupt file is never read: not at open, not by Chain.
func TestFile_TornFiles(t *testing.T) {
	dir, clock := t.TempDir(), newClock()
	f := openFile(t, dir, 1<<20, clock)
	put(t, f, "o", "r1", "", strings.Repeat("1", 100), time.Hour)
	put(t, f, "o", "r2", "r1", strings.Repeat("2", 100), time.Hour)
	put(t, f, "o", "r3", "r2", strings.Repeat("3", 100), time.Hour)
	put(t, f, "o", "t", "", strings.Repeat("t", 100), time.Hour)
	put(t, f, "o", "h", "", strings.Repeat("h", 100), time.Hour)
	path := func(id string) string { return f.path(fileKey{"o", id}) }

	// A bit flipped in r2's data: the header is sound, so it is found at open, but
	// Chain's check of the data ends the chain there.
	flip(t, path("r2"), -10)
	c := chain(t, f, "o", "r3", 10)
	if len(c) != 1 || c[0].Parent != "r2" || string(c[0].Data) != strings.Repeat("3", 100) {
		t.Errorf("chain through a corrupt record: %d records %q", len(c), datas(c))
	}
	if c := chain(t, f, "o", "r2", 10); c != nil {
		t.Errorf("corrupt r2 read: %q", datas(c))
	}
	f.Close()

	// Cut short (a write that never finished would look so if it were not renamed
	// whole), a corrupt header, a stray file, a record under another's name, a temp
	// file left by a crash.
	if err := os.Truncate(path("t"), 50); err != nil {
		t.Fatal(err)
	}
	flip(t, path("h"), 6)
	stray := filepath.Join(dir, "r", "00", "junk.rec")
	_ = os.WriteFile(stray, []byte("MGR1 not a record"), 0o600)
	b, _ := os.ReadFile(path("r1"))
	moved := filepath.Join(dir, "r", "ff", "0123456789abcdef0123456789abcd.rec")
	_ = os.WriteFile(moved, b, 0o600)
	tmp := filepath.Join(dir, "tmp", "put-123")
	_ = os.WriteFile(tmp, []byte("half"), 0o600)

	g := openFile(t, dir, 1<<20, clock)
	for _, id := range []string{"t", "h"} {
		if c := chain(t, g, "o", id, 1); c != nil {
			t.Errorf("%s read after it was damaged: %q", id, datas(c))
		}
	}
	for _, p := range []string{stray, moved, tmp, path("t"), path("h")} {
		if _, err := os.Stat(p); !os.IsNotExist(err) {
			t.Errorf("%s left in the folder: %v", p, err)
		}
	}
	if got := datas(chain(t, g, "o", "r1", 10)); got != strings.Repeat("1", 100) {
		t.Errorf("r1 after the damage around it: %q", got)
	}
	if got := g.Bytes(); got != recSize("o", "r1", "", 100)+recSize("o", "r3", "r2", 100) {
		t.Errorf("%d bytes held after dropping the damaged files", got)
	}
}

// flip inverts one byte of a file, at off from its start (from its end if negative).
func flip(t *testing.T, path string, off int) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if off < 0 {
		off += len(b)
	}
	b[off] ^= 0xff
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

func TestFile_Options(t *testing.T) {
	if _, err := NewFile(t.TempDir(), 0, nil); err == nil {
		t.Error("a zero bound was accepted")
	}
	blocked := filepath.Join(t.TempDir(), "file")
	_ = os.WriteFile(blocked, nil, 0o600)
	if _, err := NewFile(blocked, 1<<20, nil); err == nil {
		t.Error("a file for a folder was accepted")
	}
}
