package state

import (
	"bytes"
	"container/list"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"
)

// ErrLocked is why OpenFile fails on a directory another File holds, in this process or
// another.
var ErrLocked = errors.New("thread state directory is in use")

const (
	// fileFormat is the version of the thread files' format.
	fileFormat = 1
	lockName   = "LOCK"
	tempPrefix = ".tmp-"
	// touchEvery is how stale a file's recorded access time may get before a read
	// records it again.
	touchEvery = time.Second
	stripes    = 64
)

// File keeps thread state in a data directory, one file per thread, so that it survives
// restarts and crashes. It is safe for concurrent use; one process owns a directory.
//
// Every update writes the thread's whole state to a new temporary file, syncs it, renames
// it over the thread's file and syncs the directory before it returns, so a crash at any
// point leaves either the old state or the new one. A file is JSON:
//
//	{"v":1,"sha256":"<hex SHA-256 of payload>","payload":{"thread":"<id>","loaded":[...],
//	 "pins":{...},"splices":[{"after":2,"anchor":"<hex>","messages":["<base64>",...]}]}}
//
// ("anchor" is optional: files written before splices carried one still load, their
// splices placed by "after" alone, and a reader that predates it ignores it.)
//
// (messages in base64 so that they come back byte for byte; names, pins and ids are JSON
// strings, so invalid UTF-8 in them would come back from a reopened store as U+FFFD). A
// file that does not parse, fails its checksum or names another thread than its file
// name is never loaded: OpenFile logs it and removes it. A file of a newer format is
// logged and left alone.
//
// The whole state is also held in memory, so reads never touch the disk but to record
// the access time, which is the file's modification time (recorded at most once a second
// per thread, unsynced: a crash may lose up to that much of it). The TTL, NoExpiry and the
// least-recently-used bound work as Memory's, with the files' sizes as Stats.Bytes and as
// what MaxBytes bounds.
//
// A thread's file is named by its id when that is 32 lowercase hex digits (as
// Threads.Thread makes them), else "h" and the SHA-256 of the id in hex.
type File struct {
	dir      string
	lock     *os.File // flock'd; closing it releases the directory
	dirf     *os.File // the directory, for syncing renames
	ttl      time.Duration
	maxBytes int
	now      func() time.Time
	log      *slog.Logger

	// A thread's stripe serializes its writes and the removal of its file. Lock order:
	// one stripe, then mu.
	stripes [stripes]sync.Mutex

	mu      sync.Mutex
	closed  bool
	threads map[string]*list.Element // of *fileEntry
	lru     list.List                // front: most recently used
	bytes   int
}

type fileEntry struct {
	thread string
	state  *fileState // never changed once published: updates replace it
	access time.Time  // last access
	synced time.Time  // last access recorded in the file's modification time
	size   int        // the file's size
}

// fileState is a thread's state. Values are shared between successive states and
// snapshots copy them, so nothing in one is ever modified.
type fileState struct {
	loaded  []string
	splices []Splice
	pins    map[string]string
}

type filePayload struct {
	Thread  string            `json:"thread"`
	Loaded  []string          `json:"loaded,omitempty"`
	Pins    map[string]string `json:"pins,omitempty"`
	Splices []fileSplice      `json:"splices,omitempty"`
}

type fileSplice struct {
	After    int      `json:"after"`
	Anchor   string   `json:"anchor,omitempty"`
	Messages [][]byte `json:"messages"`
}

type fileDoc struct {
	V       int             `json:"v"`
	SHA256  string          `json:"sha256"`
	Payload json.RawMessage `json:"payload"`
}

// OpenFile opens the file store in dir, creating the directory if needed, and loads the
// threads its files hold: the valid and unexpired ones, newest first until MaxBytes.
// Options are as for NewMemory, and Logger receives the files found corrupt. It fails,
// with ErrLocked, when another File (in this process or another) has dir open.
func OpenFile(dir string, o Options) (*File, error) {
	f := &File{dir: dir, ttl: o.TTL, maxBytes: o.MaxBytes, now: o.Now, log: o.Logger,
		threads: map[string]*list.Element{}}
	switch {
	case o.TTL == 0:
		f.ttl = DefaultTTL
	case o.TTL < 0:
		f.ttl = 0 // no expiry
	}
	if f.maxBytes <= 0 {
		f.maxBytes = DefaultMaxBytes
	}
	if f.now == nil {
		f.now = time.Now
	}
	if f.log == nil {
		f.log = slog.Default()
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("opening the thread state directory: %w", err)
	}
	lock, err := lockDir(filepath.Join(dir, lockName))
	if err != nil {
		return nil, fmt.Errorf("opening the thread state directory %s: %w", dir, err)
	}
	f.lock = lock
	if f.dirf, err = os.Open(dir); err == nil {
		err = f.load()
	}
	if err != nil {
		if f.dirf != nil {
			f.dirf.Close()
		}
		lock.Close()
		return nil, fmt.Errorf("opening the thread state directory %s: %w", dir, err)
	}
	return f, nil
}

// load reads the directory into the index.
func (f *File) load() error {
	des, err := os.ReadDir(f.dir)
	if err != nil {
		return err
	}
	now := f.now()
	var entries []*fileEntry
	for _, de := range des {
		name := de.Name()
		path := filepath.Join(f.dir, name)
		switch {
		case strings.HasPrefix(name, tempPrefix):
			f.removeFile(path, "an unfinished write")
			continue
		case !isThreadFile(name) || !de.Type().IsRegular():
			continue
		}
		e, err := f.read(name)
		if errors.Is(err, errNewerFormat) {
			f.log.Warn("thread state: leaving a thread file of a newer format alone", "path", path)
			continue
		}
		var bad *corruptError
		if errors.As(err, &bad) {
			f.log.Warn("thread state: removing a corrupt thread file", "path", path, "err", bad.err)
			f.removeFile(path, "")
			continue
		}
		if err != nil {
			return err
		}
		if f.expired(e, now) {
			f.removeFile(path, "")
			continue
		}
		entries = append(entries, e)
	}
	slices.SortFunc(entries, func(a, b *fileEntry) int { return a.access.Compare(b.access) })
	for _, e := range entries {
		f.threads[e.thread] = f.lru.PushFront(e)
		f.bytes += e.size
	}
	for _, th := range f.evictLocked() {
		f.removeFile(filepath.Join(f.dir, fileName(th)), "")
	}
	return nil
}

var errNewerFormat = errors.New("a newer format")

type corruptError struct{ err error }

func (e *corruptError) Error() string { return "corrupt thread file: " + e.err.Error() }

func corrupt(format string, args ...any) error {
	return &corruptError{fmt.Errorf(format, args...)}
}

// read loads the thread file name. Its errors are *corruptError, errNewerFormat or the
// file system's.
func (f *File) read(name string) (*fileEntry, error) {
	fh, err := os.Open(filepath.Join(f.dir, name))
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	info, err := fh.Stat()
	if err != nil {
		return nil, err
	}
	data, err := io.ReadAll(fh)
	if err != nil {
		return nil, err
	}
	thread, st, err := decodeThreadFile(data)
	if err != nil {
		return nil, err
	}
	if fileName(thread) != name {
		return nil, corrupt("it holds thread %q, whose file is %s", thread, fileName(thread))
	}
	return &fileEntry{thread: thread, state: st, access: info.ModTime(), synced: info.ModTime(), size: len(data)}, nil
}

func decodeThreadFile(data []byte) (string, *fileState, error) {
	var doc fileDoc
	if err := json.Unmarshal(data, &doc); err != nil {
		return "", nil, corrupt("%v", err)
	}
	if doc.V > fileFormat {
		return "", nil, errNewerFormat
	}
	if doc.V != fileFormat {
		return "", nil, corrupt("format %d", doc.V)
	}
	sum := sha256.Sum256(doc.Payload)
	if want, err := hex.DecodeString(doc.SHA256); err != nil || !bytes.Equal(want, sum[:]) {
		return "", nil, corrupt("checksum mismatch")
	}
	var p filePayload
	if err := json.Unmarshal(doc.Payload, &p); err != nil {
		return "", nil, corrupt("payload: %v", err)
	}
	st := &fileState{loaded: p.Loaded, pins: p.Pins}
	if len(p.Pins) == 0 {
		st.pins = nil
	}
	for _, sp := range p.Splices {
		s := Splice{After: sp.After, Anchor: sp.Anchor}
		if sp.Messages != nil {
			s.Messages = make([]json.RawMessage, len(sp.Messages))
			for i, m := range sp.Messages {
				if len(m) > 0 {
					s.Messages[i] = m
				}
			}
		}
		st.splices = append(st.splices, s)
	}
	return p.Thread, st, nil
}

func encodeThreadFile(thread string, st *fileState) []byte {
	p := filePayload{Thread: thread, Loaded: st.loaded, Pins: st.pins}
	if len(st.splices) > 0 {
		p.Splices = make([]fileSplice, len(st.splices))
		for i, sp := range st.splices {
			p.Splices[i].After, p.Splices[i].Anchor = sp.After, sp.Anchor
			if sp.Messages != nil {
				p.Splices[i].Messages = make([][]byte, len(sp.Messages))
				for j, m := range sp.Messages {
					p.Splices[i].Messages[j] = m
				}
			}
		}
	}
	payload, err := json.Marshal(p)
	if err != nil {
		panic(err) // strings, ints and bytes always marshal
	}
	sum := sha256.Sum256(payload)
	buf := make([]byte, 0, len(payload)+128)
	buf = fmt.Appendf(buf, `{"v":%d,"sha256":"`, fileFormat)
	buf = hex.AppendEncode(buf, sum[:])
	buf = append(buf, `","payload":`...)
	buf = append(buf, payload...)
	return append(buf, "}\n"...)
}

// fileName is the name of thread's file.
func fileName(thread string) string {
	if isHex(thread, 32) {
		return thread
	}
	sum := sha256.Sum256([]byte(thread))
	return "h" + hex.EncodeToString(sum[:])
}

func isThreadFile(name string) bool {
	return isHex(name, 32) || (len(name) == 65 && name[0] == 'h' && isHex(name[1:], 64))
}

func isHex(s string, n int) bool {
	if len(s) != n {
		return false
	}
	for i := range len(s) {
		if c := s[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

func (f *File) stripe(thread string) *sync.Mutex {
	h := uint32(2166136261) // FNV-1a
	for i := range len(thread) {
		h = (h ^ uint32(thread[i])) * 16777619
	}
	return &f.stripes[h%stripes]
}

// Get returns thread's state, and false when the store has none (never seen, deleted,
// expired or evicted). It counts as an access.
func (f *File) Get(_ context.Context, thread string) (Snapshot, bool, error) {
	f.mu.Lock()
	if f.closed {
		f.mu.Unlock()
		return Snapshot{}, false, &Unavailable{ErrClosed}
	}
	now := f.now()
	el := f.threads[thread]
	if el == nil {
		f.mu.Unlock()
		return Snapshot{}, false, nil
	}
	e := el.Value.(*fileEntry)
	if f.expired(e, now) {
		f.removeLocked(el)
		f.mu.Unlock()
		f.dropFiles(thread)
		return Snapshot{}, false, nil
	}
	st, touch := e.state, f.touchLocked(e, now)
	f.mu.Unlock()
	if touch {
		f.recordAccess(thread, now)
	}
	return snapshotOf(st.loaded, st.splices, st.pins), true, nil
}

// Load appends names to thread's loaded tools, creating the thread if needed, and returns
// the names newly loaded, in order; see Memory.Load.
func (f *File) Load(_ context.Context, thread string, names ...string) ([]string, error) {
	var added []string
	err := f.update(thread, func(old *fileState) *fileState {
		added = newNames(old.loaded, names)
		if len(added) == 0 {
			return nil
		}
		next := *old
		next.loaded = append(slices.Clip(old.loaded), added...)
		return &next
	})
	if err != nil {
		return nil, err
	}
	return added, nil
}

// newNames returns names not in loaded, without repeats, in order.
func newNames(loaded, names []string) []string {
	var added []string
	if len(loaded)+len(names) <= 32 {
		for _, n := range names {
			if !slices.Contains(loaded, n) && !slices.Contains(added, n) {
				added = append(added, n)
			}
		}
		return added
	}
	seen := make(map[string]struct{}, len(loaded)+len(names))
	for _, n := range loaded {
		seen[n] = struct{}{}
	}
	for _, n := range names {
		if _, ok := seen[n]; !ok {
			seen[n] = struct{}{}
			added = append(added, n)
		}
	}
	return added
}

// AddSplice records an exchange for thread, creating the thread if needed. The messages
// are copied.
func (f *File) AddSplice(_ context.Context, thread string, s Splice) error {
	s = copySplice(s)
	return f.update(thread, func(old *fileState) *fileState {
		next := *old
		next.splices = append(slices.Clip(old.splices), s)
		return &next
	})
}

// Pin sets thread's key to value unless it is set, creating the thread if needed, and
// returns the value key holds; see Memory.PinValue.
func (f *File) Pin(_ context.Context, thread, key, value string) (string, error) {
	held := value
	err := f.update(thread, func(old *fileState) *fileState {
		if v, ok := old.pins[key]; ok {
			held = v
			return nil
		}
		held = value
		next := *old
		next.pins = make(map[string]string, len(old.pins)+1)
		for k, v := range old.pins {
			next.pins[k] = v
		}
		next.pins[key] = value
		return &next
	})
	if err != nil {
		return "", err
	}
	return held, nil
}

// update applies change to thread's state and writes the result. change gets the
// current state (empty for a new thread) and returns the next one, or nil when nothing
// changes; a new thread is written even then.
func (f *File) update(thread string, change func(*fileState) *fileState) error {
	stripe := f.stripe(thread)
	stripe.Lock()
	f.mu.Lock()
	if f.closed {
		f.mu.Unlock()
		stripe.Unlock()
		return &Unavailable{ErrClosed}
	}
	now := f.now()
	base := &fileState{}
	el := f.threads[thread]
	if el != nil {
		if e := el.Value.(*fileEntry); f.expired(e, now) {
			f.removeLocked(el) // its file is about to be replaced
			el = nil
		} else {
			base = e.state
		}
	}
	// Only this stripe's holder changes thread's entry, so base stays current outside mu.
	f.mu.Unlock()
	next := change(base)
	if next == nil && el != nil {
		// Nothing to write: an access.
		f.mu.Lock()
		touch := f.threads[thread] == el && f.touchLocked(el.Value.(*fileEntry), now)
		f.mu.Unlock()
		if touch {
			f.recordAccess(thread, now)
		}
		stripe.Unlock()
		return nil
	}
	if next == nil {
		next = base
	}

	data := encodeThreadFile(thread, next)
	renamed, err := f.write(fileName(thread), data, now)
	if !renamed {
		stripe.Unlock()
		return &Unavailable{fmt.Errorf("writing thread state: %w", err)}
	}

	f.mu.Lock()
	switch {
	case el == nil:
		e := &fileEntry{thread: thread, state: next, access: now, synced: now, size: len(data)}
		f.threads[thread] = f.lru.PushFront(e)
		f.bytes += e.size
	case f.threads[thread] == el:
		e := el.Value.(*fileEntry)
		f.bytes += len(data) - e.size
		e.state, e.access, e.synced, e.size = next, now, now, len(data)
		f.lru.MoveToFront(el)
	default:
		// Deleted or evicted meanwhile: that wins, and drops the file once we let go.
	}
	victims := f.evictLocked()
	f.mu.Unlock()
	stripe.Unlock()
	f.dropFiles(victims...)
	if err != nil {
		return &Unavailable{fmt.Errorf("writing thread state: %w", err)}
	}
	return nil
}

// write replaces the file name with data, modified at access, durably. renamed reports
// whether the new contents took the file's place (err may still say that the rename
// could not be synced).
func (f *File) write(name string, data []byte, access time.Time) (renamed bool, err error) {
	tmp, err := os.CreateTemp(f.dir, tempPrefix+name+"-*")
	if err != nil {
		return false, err
	}
	_, err = tmp.Write(data)
	if err == nil {
		err = os.Chtimes(tmp.Name(), access, access)
	}
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), filepath.Join(f.dir, name))
	}
	if err != nil {
		os.Remove(tmp.Name())
		return false, err
	}
	return true, f.dirf.Sync()
}

// touchLocked records an access to e and reports whether its file's time is due for
// recording.
func (f *File) touchLocked(e *fileEntry, now time.Time) bool {
	e.access = now
	f.lru.MoveToFront(f.threads[e.thread])
	if now.Sub(e.synced) < touchEvery && now.Sub(e.synced) > -touchEvery {
		return false
	}
	e.synced = now
	return true
}

// recordAccess sets thread's file's modification time, which is its access time when the
// store is opened again. A file gone meanwhile is no matter.
func (f *File) recordAccess(thread string, at time.Time) {
	path := filepath.Join(f.dir, fileName(thread))
	if err := os.Chtimes(path, at, at); err != nil && !errors.Is(err, fs.ErrNotExist) {
		f.log.Warn("thread state: recording an access", "path", path, "err", err)
	}
}

// Delete drops thread's state and reports whether there was any.
func (f *File) Delete(_ context.Context, thread string) (bool, error) {
	f.mu.Lock()
	if f.closed {
		f.mu.Unlock()
		return false, &Unavailable{ErrClosed}
	}
	el, ok := f.threads[thread]
	if ok {
		f.removeLocked(el)
	}
	f.mu.Unlock()
	if !ok {
		return false, nil
	}
	if err := f.dropFiles(thread); err != nil {
		return true, err
	}
	return true, f.syncDir()
}

// Clear drops every thread and returns how many there were.
func (f *File) Clear(context.Context) (int, error) {
	f.mu.Lock()
	if f.closed {
		f.mu.Unlock()
		return 0, &Unavailable{ErrClosed}
	}
	threads := make([]string, 0, len(f.threads))
	for th := range f.threads {
		threads = append(threads, th)
	}
	f.threads = map[string]*list.Element{}
	f.lru.Init()
	f.bytes = 0
	f.mu.Unlock()
	if err := f.dropFiles(threads...); err != nil {
		return len(threads), err
	}
	return len(threads), f.syncDir()
}

// Cleanup drops the threads idle for longer than the TTL and returns how many.
func (f *File) Cleanup(context.Context) (int, error) {
	f.mu.Lock()
	if f.closed {
		f.mu.Unlock()
		return 0, &Unavailable{ErrClosed}
	}
	now := f.now()
	var threads []string
	for el := f.lru.Back(); el != nil; el = f.lru.Back() {
		e := el.Value.(*fileEntry)
		if !f.expired(e, now) {
			break
		}
		f.removeLocked(el)
		threads = append(threads, e.thread)
	}
	f.mu.Unlock()
	return len(threads), f.dropFiles(threads...)
}

// Stats reports the store's size: Bytes is the size of its files. Expired threads not
// yet cleaned up are counted.
func (f *File) Stats(context.Context) (Stats, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return Stats{}, &Unavailable{ErrClosed}
	}
	s := Stats{Threads: len(f.threads), Bytes: f.bytes}
	if el := f.lru.Back(); el != nil {
		s.OldestAccess = el.Value.(*fileEntry).access
	}
	return s, nil
}

// Run calls Cleanup every interval until ctx is done.
func (f *File) Run(ctx context.Context, every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			f.Cleanup(ctx)
		}
	}
}

// Close waits for the writes under way, then releases the directory. Later calls fail
// with ErrClosed; closing again does nothing.
func (f *File) Close() error {
	for i := range f.stripes {
		f.stripes[i].Lock()
	}
	f.mu.Lock()
	was := f.closed
	f.closed = true
	f.mu.Unlock()
	for i := range f.stripes {
		f.stripes[i].Unlock()
	}
	if was {
		return nil
	}
	return errors.Join(f.dirf.Close(), f.lock.Close())
}

func (f *File) expired(e *fileEntry, now time.Time) bool {
	return f.ttl > 0 && now.Sub(e.access) > f.ttl
}

func (f *File) removeLocked(el *list.Element) {
	e := el.Value.(*fileEntry)
	f.lru.Remove(el)
	delete(f.threads, e.thread)
	f.bytes -= e.size
}

// evictLocked drops least recently used threads from the index until the store fits and
// returns them; their files are the caller's to drop. The thread just written is at the
// front, so it goes last: only when it alone exceeds MaxBytes.
func (f *File) evictLocked() []string {
	var victims []string
	for f.bytes > f.maxBytes {
		el := f.lru.Back()
		if el == nil {
			break
		}
		victims = append(victims, el.Value.(*fileEntry).thread)
		f.removeLocked(el)
	}
	return victims
}

// dropFiles removes the files of threads already dropped from the index, unless a thread
// came back meanwhile (its file is then its new state).
func (f *File) dropFiles(threads ...string) error {
	var errs []error
	for _, th := range threads {
		stripe := f.stripe(th)
		stripe.Lock()
		f.mu.Lock()
		back := f.threads[th] != nil || f.closed
		f.mu.Unlock()
		if !back {
			err := os.Remove(filepath.Join(f.dir, fileName(th)))
			if err != nil && !errors.Is(err, fs.ErrNotExist) {
				errs = append(errs, err)
			}
		}
		stripe.Unlock()
	}
	if len(errs) > 0 {
		return &Unavailable{fmt.Errorf("removing thread state: %w", errors.Join(errs...))}
	}
	return nil
}

func (f *File) syncDir() error {
	if err := f.dirf.Sync(); err != nil {
		return &Unavailable{fmt.Errorf("syncing the thread state directory: %w", err)}
	}
	return nil
}

// removeFile removes path while opening, logging why when there is a reason to.
func (f *File) removeFile(path, why string) {
	err := os.Remove(path)
	switch {
	case err != nil && !errors.Is(err, fs.ErrNotExist):
		f.log.Warn("thread state: could not remove a file", "path", path, "err", err)
	case why != "":
		f.log.Info("thread state: removed "+why, "path", path)
	}
}

var _ Store = (*File)(nil)
