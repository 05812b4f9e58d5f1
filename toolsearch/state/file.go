package state

import (
	"container/list"
	"context"
	"errors"
	"fmt"
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

var _ Store = (*File)(nil)
