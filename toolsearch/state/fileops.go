package state

import (
	"container/list"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"
)

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
