package state

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

var bg = context.Background()

func hexID(i int) string { return fmt.Sprintf("%032x", i) }

// logBuffer is a slog destination safe for concurrent use.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *logBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func (b *logBuffer) logger() *slog.Logger { return slog.New(slog.NewTextHandler(b, nil)) }

func openFile(t *testing.T, dir string, o Options) *File {
	t.Helper()
	if o.Logger == nil {
		o.Logger = (&logBuffer{}).logger()
	}
	f, err := OpenFile(dir, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

// dump reads every thread of f.
func dump(t *testing.T, f *File) map[string]Snapshot {
	t.Helper()
	f.mu.Lock()
	threads := make([]string, 0, len(f.threads))
	for th := range f.threads {
		threads = append(threads, th)
	}
	f.mu.Unlock()
	out := map[string]Snapshot{}
	for _, th := range threads {
		if s, ok, err := f.Get(bg, th); err != nil {
			t.Fatal(err)
		} else if ok {
			out[th] = s
		}
	}
	return out
}

// threadFiles lists the thread files in dir.
func threadFiles(t *testing.T, dir string) []string {
	t.Helper()
	des, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, de := range des {
		if de.Name() != lockName {
			out = append(out, de.Name())
		}
	}
	return out
}

// fill writes a known state: threads 1..3, with loads, splices and pins, and a thread
// whose id is not hex.
func fill(t *testing.T, f *File) {
	t.Helper()
	for i := 1; i <= 3; i++ {
		th := hexID(i)
		if _, err := f.Load(bg, th, "a"+strconv.Itoa(i), "b"); err != nil {
			t.Fatal(err)
		}
		if err := f.AddSplice(bg, th, Splice{After: i, Anchor: anchors[i], Messages: []json.RawMessage{json.RawMessage(`{"role": "tool", "n":` + strconv.Itoa(i) + `}`)}}); err != nil {
			t.Fatal(err)
		}
		if _, err := f.Pin(bg, th, "backend", "mask"); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := f.Load(bg, "anon/../../etc/passwd", "x"); err != nil {
		t.Fatal(err)
	}
}

// anchors are fill's splice anchors: thread 2's has one, the others none (as kept before
// anchors were recorded).
var anchors = map[int]string{2: "00112233445566778899aabbccddeeff"}

var filled = map[string]Snapshot{
	hexID(1): {Loaded: []string{"a1", "b"}, Pins: map[string]string{"backend": "mask"},
		Splices: []Splice{{After: 1, Messages: []json.RawMessage{json.RawMessage(`{"role": "tool", "n":1}`)}}}},
	hexID(2): {Loaded: []string{"a2", "b"}, Pins: map[string]string{"backend": "mask"},
		Splices: []Splice{{After: 2, Anchor: anchors[2], Messages: []json.RawMessage{json.RawMessage(`{"role": "tool", "n":2}`)}}}},
	hexID(3): {Loaded: []string{"a3", "b"}, Pins: map[string]string{"backend": "mask"},
		Splices: []Splice{{After: 3, Messages: []json.RawMessage{json.RawMessage(`{"role": "tool", "n":3}`)}}}},
	"anon/../../etc/passwd": {Loaded: []string{"x"}},
}

// TestFile_ReopenWithoutClose drops a File without closing it, as a crashed process
// would (its lock goes with it), and opens the directory again.
func TestFile_ReopenWithoutClose(t *testing.T) {
	dir := t.TempDir()
	f, err := OpenFile(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	fill(t, f)
	f.lock.Close() // the process ends: the kernel releases the flock; nothing else happens

	g := openFile(t, dir, Options{})
	if diff := cmp.Diff(filled, dump(t, g)); diff != "" {
		t.Errorf("after reopening (-want +got):\n%s", diff)
	}
	if got := len(threadFiles(t, dir)); got != 4 {
		t.Errorf("%d files, want 4: %q", got, threadFiles(t, dir))
	}
	if _, err := os.Stat(filepath.Join(dir, "etc")); err == nil {
		t.Error("a thread id reached the file system as a path")
	}
}

// TestFile_CrashHelper is the process TestFile_SurvivesAKilledProcess kills: run without
// STATE_CRASH_DIR it does nothing.
func TestFile_CrashHelper(t *testing.T) {
	dir := os.Getenv("STATE_CRASH_DIR")
	if dir == "" {
		return
	}
	f, err := OpenFile(dir, Options{TTL: NoExpiry})
	if err != nil {
		fmt.Println("error:", err)
		os.Exit(1)
	}
	fill(t, f)
	// Threads 100..103 load n0, n1, ... as fast as they can until the process is killed.
	for w := range 4 {
		go func() {
			for i := 0; ; i++ {
				f.Load(bg, hexID(100+w), "n"+strconv.Itoa(i))
				if i == 5 && w == 0 {
					fmt.Println("ready")
				}
			}
		}()
	}
	time.Sleep(time.Minute)
}

// TestFile_SurvivesAKilledProcess kills (SIGKILL) a process in the middle of writes and
// opens its directory: everything it wrote before is there, the threads it was writing
// are consistent, and no file is found corrupt.
func TestFile_SurvivesAKilledProcess(t *testing.T) {
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestFile_CrashHelper$", "-test.count=1")
	cmd.Env = append(os.Environ(), "STATE_CRASH_DIR="+dir)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || line != "ready\n" {
		t.Fatalf("the helper said %q, %v", line, err)
	}
	// While it lives, its directory is its own.
	_, err = OpenFile(dir, Options{})
	if !errors.Is(err, ErrLocked) || !strings.Contains(err.Error(), "process "+strconv.Itoa(cmd.Process.Pid)) {
		t.Errorf("opening a live process's directory: %v", err)
	}
	time.Sleep(100 * time.Millisecond)
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()

	var log logBuffer
	g := openFile(t, dir, Options{TTL: NoExpiry, Logger: log.logger()})
	got := dump(t, g)
	for th, want := range filled {
		if diff := cmp.Diff(want, got[th]); diff != "" {
			t.Errorf("thread %s (-want +got):\n%s", th, diff)
		}
	}
	for w := range 4 {
		loaded := got[hexID(100+w)].Loaded
		if w == 0 && len(loaded) < 6 {
			t.Errorf("thread %d lost loads it reported: %q", 100+w, loaded)
		}
		for i, n := range loaded {
			if n != "n"+strconv.Itoa(i) {
				t.Errorf("thread %d: %q", 100+w, loaded)
				break
			}
		}
	}
	if strings.Contains(log.String(), "corrupt") {
		t.Errorf("a kill left a corrupt file:\n%s", log.String())
	}
	for _, name := range threadFiles(t, dir) {
		if strings.HasPrefix(name, tempPrefix) {
			t.Errorf("a temporary file was left: %s", name)
		}
	}
}

func TestFile_SecondOpenFails(t *testing.T) {
	dir := t.TempDir()
	f := openFile(t, dir, Options{})
	_, err := OpenFile(dir, Options{})
	if !errors.Is(err, ErrLocked) {
		t.Fatalf("a second OpenFile: %v", err)
	}
	if msg := err.Error(); !strings.Contains(msg, dir) || !strings.Contains(msg, "in use") || !strings.Contains(msg, "this process") {
		t.Errorf("the error does not say what is wrong: %q", msg)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	g := openFile(t, dir, Options{}) // closing releases the directory
	if _, err := g.Load(bg, hexID(1), "a"); err != nil {
		t.Fatal(err)
	}
}

func TestFile_ClosedStoreFails(t *testing.T) {
	f := openFile(t, t.TempDir(), Options{})
	f.Load(bg, hexID(1), "a")
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Errorf("closing twice: %v", err)
	}
	_, _, err1 := f.Get(bg, hexID(1))
	_, err2 := f.Load(bg, hexID(1), "b")
	err3 := f.AddSplice(bg, hexID(1), Splice{})
	_, err4 := f.Pin(bg, hexID(1), "k", "v")
	_, err5 := f.Delete(bg, hexID(1))
	_, err6 := f.Clear(bg)
	_, err7 := f.Cleanup(bg)
	_, err8 := f.Stats(bg)
	for i, err := range []error{err1, err2, err3, err4, err5, err6, err7, err8} {
		if !errors.Is(err, ErrUnavailable) || !errors.Is(err, ErrClosed) {
			t.Errorf("call %d after Close: %v", i+1, err)
		}
	}
}

// TestFile_TornFilesAreNeverLoaded plants files no complete write makes: every prefix
// of a valid file, garbage, a changed payload, a valid file under another thread's name.
// None is loaded; each is logged and removed; the valid ones beside them load.
func TestFile_TornFilesAreNeverLoaded(t *testing.T) {
	dir := t.TempDir()
	f := openFile(t, dir, Options{})
	fill(t, f)
	f.Close()

	valid := encodeThreadFile(hexID(50), &fileState{loaded: []string{"a", "b"},
		splices: []Splice{{After: 1, Messages: []json.RawMessage{json.RawMessage(`{"x":1}`)}}}})
	if _, _, err := decodeThreadFile(valid); err != nil {
		t.Fatalf("a valid file does not decode: %v", err)
	}
	planted := map[string][]byte{}
	n := 1000
	for cut := 0; cut < len(valid)-1; cut++ { // all but the final newline
		th := hexID(n)
		n++
		data := encodeThreadFile(th, &fileState{loaded: []string{"a", "b"},
			splices: []Splice{{After: 1, Messages: []json.RawMessage{json.RawMessage(`{"x":1}`)}}}})
		planted[th] = data[:cut*len(data)/len(valid)]
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 20 {
		garbage := make([]byte, r.IntN(300))
		for i := range garbage {
			garbage[i] = byte(r.Uint32())
		}
		planted[hexID(n)] = garbage
		n++
	}
	changed := encodeThreadFile(hexID(n), &fileState{loaded: []string{"tool_a"}})
	planted[hexID(n)] = bytes.Replace(changed, []byte("tool_a"), []byte("tool_b"), 1)
	n++
	planted[hexID(n)] = valid // thread 50's file under another name
	n++
	planted[hexID(n)] = []byte(`{"v":0,"sha256":"","payload":{}}`)
	n++
	planted[hexID(n)] = []byte(`{"v":1,"sha256":"zz","payload":{"thread":"` + hexID(n) + `"}}`)
	n++
	for th, data := range planted {
		if err := os.WriteFile(filepath.Join(dir, th), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	newer := []byte(`{"v":2,"future":true}`)
	os.WriteFile(filepath.Join(dir, hexID(n)), newer, 0o600)
	os.WriteFile(filepath.Join(dir, tempPrefix+hexID(1)+"-123"), valid[:10], 0o600) // a write cut short
	os.WriteFile(filepath.Join(dir, "README"), []byte("not ours"), 0o600)

	var log logBuffer
	g := openFile(t, dir, Options{Logger: log.logger()})
	if diff := cmp.Diff(filled, dump(t, g)); diff != "" {
		t.Errorf("loaded (-want +got):\n%s", diff)
	}
	for th := range planted {
		if _, err := os.Stat(filepath.Join(dir, th)); err == nil {
			t.Errorf("the corrupt file %s was kept", th)
		}
	}
	if got := strings.Count(log.String(), "removing a corrupt thread file"); got != len(planted) {
		t.Errorf("%d corrupt files logged, want %d:\n%s", got, len(planted), log.String())
	}
	if b, err := os.ReadFile(filepath.Join(dir, hexID(n))); err != nil || !bytes.Equal(b, newer) {
		t.Errorf("a file of a newer format was not left alone: %q, %v", b, err)
	}
	if !strings.Contains(log.String(), "newer format") {
		t.Error("the newer format was not logged")
	}
	if _, err := os.Stat(filepath.Join(dir, tempPrefix+hexID(1)+"-123")); err == nil {
		t.Error("a leftover temporary file was kept")
	}
	if _, err := os.Stat(filepath.Join(dir, "README")); err != nil {
		t.Error("a file not the store's was removed")
	}
	if st, _ := g.Stats(bg); st.Threads != len(filled) {
		t.Errorf("stats: %+v", st)
	}
}

// TestFile_FailedWriteChangesNothing makes a thread's file impossible to replace: the
// update fails as Unavailable, and the thread reads as before.
func TestFile_FailedWriteChangesNothing(t *testing.T) {
	dir := t.TempDir()
	f := openFile(t, dir, Options{})
	th := hexID(1)
	if _, err := f.Load(bg, th, "a"); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, th)
	os.Remove(path)
	os.Mkdir(path, 0o700)
	os.WriteFile(filepath.Join(path, "x"), nil, 0o600) // a non-empty directory: rename fails

	if _, err := f.Load(bg, th, "b"); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("Load over an unwritable file: %v", err)
	}
	if err := f.AddSplice(bg, th, Splice{After: 1}); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("AddSplice over an unwritable file: %v", err)
	}
	if _, err := f.Pin(bg, th, "k", "v"); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("Pin over an unwritable file: %v", err)
	}
	if s, _, _ := f.Get(bg, th); !cmp.Equal(s, Snapshot{Loaded: []string{"a"}}) {
		t.Errorf("a failed write changed the thread: %+v", s)
	}
	os.RemoveAll(path)
	if added, err := f.Load(bg, th, "b"); err != nil || !cmp.Equal(added, []string{"b"}) {
		t.Errorf("after the disk recovers: %q, %v", added, err)
	}
	for _, name := range threadFiles(t, dir) {
		if strings.HasPrefix(name, tempPrefix) {
			t.Errorf("a failed write left %s", name)
		}
	}
}

func TestFile_EvictsLeastRecentlyUsedFiles(t *testing.T) {
	c := newClock()
	dir := t.TempDir()
	size := len(encodeThreadFile(hexID(1), &fileState{loaded: []string{"tool"}}))
	f := openFile(t, dir, Options{MaxBytes: 3 * size, Now: c.Now})
	for i := 1; i <= 3; i++ {
		f.Load(bg, hexID(i), "tool")
		c.Advance(time.Second)
	}
	if st, _ := f.Stats(bg); st.Threads != 3 || st.Bytes != 3*size {
		t.Fatalf("stats = %+v, each file %d bytes", st, size)
	}
	f.Get(bg, hexID(1)) // 2 is now the least recently used
	f.Load(bg, hexID(4), "tool")
	if _, ok, _ := f.Get(bg, hexID(2)); ok {
		t.Error("the least recently used thread was kept")
	}
	if _, err := os.Stat(filepath.Join(dir, hexID(2))); err == nil {
		t.Error("the evicted thread's file was kept")
	}
	if got := len(threadFiles(t, dir)); got != 3 {
		t.Errorf("%d files", got)
	}
	f.Close()

	// Reopening under a smaller bound keeps the most recently used.
	g := openFile(t, dir, Options{MaxBytes: 2 * size, Now: c.Now})
	got := dump(t, g)
	if _, ok := got[hexID(3)]; ok || len(got) != 2 {
		t.Errorf("reopened with room for 2, kept %d: %v", len(got), slices.Collect(func(yield func(string) bool) {
			for k := range got {
				yield(k)
			}
		}))
	}
	// A thread bigger than the bound alone goes too.
	g.AddSplice(bg, hexID(9), Splice{Messages: []json.RawMessage{json.RawMessage(strings.Repeat("x", 4*size))}})
	if st, _ := g.Stats(bg); st.Threads != 0 || st.Bytes != 0 || len(threadFiles(t, dir)) != 0 {
		t.Errorf("after an oversized splice: %+v, files %q", st, threadFiles(t, dir))
	}
}

// TestFile_AccessTimeSurvivesReopen: reads keep a thread alive across a restart (its
// file's time records them), and a thread idle past the TTL is not loaded.
func TestFile_AccessTimeSurvivesReopen(t *testing.T) {
	c := newClock()
	dir := t.TempDir()
	f := openFile(t, dir, Options{TTL: time.Hour, Now: c.Now})
	f.Load(bg, hexID(1), "read")
	f.Load(bg, hexID(2), "idle")
	c.Advance(50 * time.Minute)
	f.Get(bg, hexID(1))
	c.Advance(20 * time.Minute) // 1 read 20m ago; 2 idle 70m
	f.Close()

	g := openFile(t, dir, Options{TTL: time.Hour, Now: c.Now})
	if st, _ := g.Stats(bg); st.Threads != 1 || !st.OldestAccess.Equal(c.Now().Add(-20*time.Minute)) {
		t.Errorf("reopened: %+v, want 1 thread last read at %v", st, c.Now().Add(-20*time.Minute))
	}
	got := dump(t, g)
	if _, ok := got[hexID(1)]; !ok {
		t.Error("a thread read within the TTL was dropped on reopening")
	}
	if _, ok := got[hexID(2)]; ok {
		t.Error("a thread idle past the TTL was loaded")
	}
	if _, err := os.Stat(filepath.Join(dir, hexID(2))); err == nil {
		t.Error("an expired thread's file was kept")
	}
	// Cleanup removes the files of the threads it drops.
	c.Advance(61 * time.Minute)
	if n, err := g.Cleanup(bg); n != 1 || err != nil {
		t.Errorf("Cleanup = %d, %v", n, err)
	}
	if files := threadFiles(t, dir); len(files) != 0 {
		t.Errorf("files left after Cleanup: %q", files)
	}
}

// TestFile_ConcurrentUseMatchesTheDisk runs many writers, readers and deleters, then
// checks that what the directory holds is what the store served.
func TestFile_ConcurrentUseMatchesTheDisk(t *testing.T) {
	dir := t.TempDir()
	f := openFile(t, dir, Options{MaxBytes: 20000})
	const threads, workers, ops = 24, 8, 80
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(uint64(w), 5))
			for range ops {
				th := hexID(r.IntN(threads))
				var err error
				switch r.IntN(6) {
				case 0, 1:
					_, err = f.Load(bg, th, "t"+strconv.Itoa(r.IntN(12)))
				case 2:
					err = f.AddSplice(bg, th, Splice{After: r.IntN(5), Messages: []json.RawMessage{json.RawMessage(strings.Repeat("m", r.IntN(400)))}})
				case 3:
					_, err = f.Pin(bg, th, "k"+strconv.Itoa(r.IntN(3)), strconv.Itoa(w))
				case 4:
					_, _, err = f.Get(bg, th)
				case 5:
					if r.IntN(4) == 0 {
						_, err = f.Delete(bg, th)
					}
				}
				if err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	before := dump(t, f)
	st, _ := f.Stats(bg)
	if st.Bytes > 20000 {
		t.Errorf("%d bytes over the bound", st.Bytes)
	}
	if got := len(threadFiles(t, dir)); got != len(before) {
		t.Errorf("%d files for %d threads", got, len(before))
	}
	f.Close()
	g := openFile(t, dir, Options{MaxBytes: 20000})
	if diff := cmp.Diff(before, dump(t, g)); diff != "" {
		t.Errorf("the disk differs from the store (-store +disk):\n%s", diff)
	}
	if st2, _ := g.Stats(bg); st2.Bytes != st.Bytes {
		t.Errorf("reopened with %d bytes, the store counted %d", st2.Bytes, st.Bytes)
	}
}

func TestFileName(t *testing.T) {
	if got := fileName(hexID(7)); got != hexID(7) {
		t.Errorf("a hex id is named %q", got)
	}
	for _, th := range []string{"", "t", strings.ToUpper(hexID(0xabc)), "../x", strings.Repeat("a", 500)} {
		name := fileName(th)
		if !isThreadFile(name) || name == th || strings.ContainsAny(name, "/.") {
			t.Errorf("thread %q is named %q", th, name)
		}
	}
	if fileName("a") == fileName("b") {
		t.Error("two threads share a file")
	}
}

// A thread file written before splices carried an anchor (spelled out here as that
// format wrote it) loads, its splice placed by position.
func TestFile_LoadsSplicesWithoutAnchors(t *testing.T) {
	dir := t.TempDir()
	payload := `{"thread":"` + hexID(5) + `","loaded":["a"],"splices":[{"after":1,"messages":["eyJyb2xlIjoidG9vbCJ9"]}]}`
	sum := sha256.Sum256([]byte(payload))
	doc := `{"v":1,"sha256":"` + hex.EncodeToString(sum[:]) + `","payload":` + payload + "}\n"
	if err := os.WriteFile(filepath.Join(dir, hexID(5)), []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := OpenFile(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	snap, ok, err := f.Get(bg, hexID(5))
	want := Snapshot{Loaded: []string{"a"}, Splices: []Splice{{After: 1, Messages: []json.RawMessage{json.RawMessage(`{"role":"tool"}`)}}}}
	if err != nil || !ok || !cmp.Equal(snap, want) {
		t.Fatalf("old file loads as %+v, %v, %v; want %+v", snap, ok, err, want)
	}
}
