package store

import (
	"container/heap"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"time"
)

// File keeps records in a folder, one file per record, so that they outlive the
// process. One process at a time may use a folder: NewFile takes an exclusive lock on it
// (flock), held until Close.
//
// # Layout
//
// The folder holds LOCK, tmp/ (files being written) and r/xx/<name>.rec, where the name
// is a hash of owner and id (so no id names a path of its own) and xx its first two
// digits. A record file is written whole to tmp/, fsynced, renamed into place and its
// folder fsynced: a reader sees the old file or the new one, never a part. Each file
// starts with a header (a magic number, flags, the record's own expiry, the lengths of
// owner, id, parent and data), then a CRC-32C of the header with owner, id and parent,
// those three, the data, and a CRC-32C of the data. A file whose size, owner, id or
// checksums do not agree is never returned: NewFile and Chain remove it, as if it had
// been evicted.
//
// # Bounds
//
// The files' sizes together stay within maxBytes. Past it, Put removes records in the
// order they would expire (a record expires when its newest descendant does), of
// those the one whose chain was written to least recently first, and descendants before
// their ancestors. The record just put and its ancestors are not removed to make room
// for it: if they alone exceed the bound, Put keeps nothing and fails with ErrTooLarge.
//
// The folder's index (ids, parents, sizes, expiries) lives in memory; NewFile rebuilds
// it by reading each file's header, and drops the expired and corrupt ones.
type File struct {
	dir      string
	maxBytes int64
	now      func() time.Time
	lock     *os.File

	mu     sync.Mutex
	closed bool
	idx    map[fileKey]*fileEntry
	order  fileHeap
	bytes  int64
	seq    uint64
}

var _ Records = (*File)(nil)

type fileKey struct{ owner, id string }

// fileEntry is one record in the index.
type fileEntry struct {
	key     fileKey
	parent  string
	expires int64 // its own expiry (Unix ns), as in its file
	eff     int64 // the latest expiry of it and its descendants: when it goes
	seq     uint64
	touch   uint64 // the latest seq of it and its descendants
	kids    int    // records that name it as their parent
	deleted bool   // hidden; kept while it has descendants
	size    int64
	path    string
	hi      int // its index in File.order
}

// NewFile opens (creating it if need be) the store in dir, bounded to maxBytes of
// record files; now is the clock (nil: time.Now). It fails if another File, in this
// process or another, has dir open.
func NewFile(dir string, maxBytes int64, now func() time.Time) (*File, error) {
	if maxBytes <= 0 {
		return nil, fmt.Errorf("store: the byte bound %d is not positive", maxBytes)
	}
	if now == nil {
		now = time.Now
	}
	if err := os.MkdirAll(filepath.Join(dir, "tmp"), 0o700); err != nil {
		return nil, fmt.Errorf("store: %w", err)
	}
	for i := range fileFanout {
		if err := os.MkdirAll(filepath.Join(dir, "r", fmt.Sprintf("%02x", i)), 0o700); err != nil {
			return nil, fmt.Errorf("store: %w", err)
		}
	}
	lock, err := os.OpenFile(filepath.Join(dir, "LOCK"), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, fmt.Errorf("store: %w", err)
	}
	if err := lockFile(lock); err != nil {
		lock.Close()
		return nil, fmt.Errorf("store: %s is in use by another store: %w", dir, err)
	}
	f := &File{dir: dir, maxBytes: maxBytes, now: now, lock: lock, idx: map[fileKey]*fileEntry{}}
	if err := f.load(); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// load rebuilds the index from the folder.
func (f *File) load() error {
	tmp := filepath.Join(f.dir, "tmp")
	left, err := os.ReadDir(tmp)
	if err != nil {
		return fmt.Errorf("store: %w", err)
	}
	for _, de := range left {
		_ = os.RemoveAll(filepath.Join(tmp, de.Name())) // a write cut short
	}
	var all []*fileEntry
	for i := range fileFanout {
		sub := filepath.Join(f.dir, "r", fmt.Sprintf("%02x", i))
		names, err := os.ReadDir(sub)
		if err != nil {
			return fmt.Errorf("store: %w", err)
		}
		for _, de := range names {
			path := filepath.Join(sub, de.Name())
			e, err := readHeader(path)
			if err != nil && !errors.Is(err, errCorrupt) && !errors.Is(err, fs.ErrNotExist) {
				return fmt.Errorf("store: %w", err)
			}
			if err != nil || path != f.path(e.key) {
				_ = os.Remove(path) // torn, corrupt, or not where its key puts it
				continue
			}
			e.path = path
			all = append(all, e)
			f.idx[e.key] = e
			f.bytes += e.size
		}
	}
	// Link the chains; number the records by expiry, ancestors first on a tie.
	depth := func(e *fileEntry) int {
		n := 0
		for p := f.parentOf(e); p != nil && n < maxWalk; p = f.parentOf(p) {
			n++
		}
		return n
	}
	depths := make(map[*fileEntry]int, len(all))
	for _, e := range all {
		depths[e] = depth(e)
		if p := f.parentOf(e); p != nil {
			p.kids++
		}
	}
	sort.Slice(all, func(i, j int) bool {
		if all[i].expires != all[j].expires {
			return all[i].expires < all[j].expires
		}
		return depths[all[i]] < depths[all[j]]
	})
	for _, e := range all {
		f.seq++
		e.seq, e.touch, e.eff = f.seq, f.seq, e.expires
	}
	for _, e := range all {
		f.raise(e)
	}
	for _, e := range all {
		heap.Push(&f.order, e)
	}
	now := f.now().UnixNano()
	f.expire(now)
	for _, e := range all {
		if e.hi >= 0 && e.deleted && e.kids == 0 {
			f.remove(e)
		}
	}
	for f.bytes > f.maxBytes && len(f.order) > 0 {
		f.remove(f.order[0])
	}
	return nil
}

// path is where key's record lives.
func (f *File) path(k fileKey) string {
	h := sha256.New()
	var n [binary.MaxVarintLen64]byte
	h.Write(n[:binary.PutUvarint(n[:], uint64(len(k.owner)))])
	h.Write([]byte(k.owner))
	h.Write([]byte(k.id))
	sum := hex.EncodeToString(h.Sum(nil))
	return filepath.Join(f.dir, "r", sum[:2], sum[2:32]+fileSuffix)
}

func (f *File) Put(ctx context.Context, owner, id string, r Record, ttl time.Duration) error {
	if id == "" {
		return errors.New("store: empty id")
	}
	if r.Parent == id {
		return errors.New("store: a record cannot be its own parent")
	}
	if ttl <= 0 {
		return fmt.Errorf("store: the ttl %v is not positive", ttl)
	}
	if err := ctx.Err(); err != nil {
		return fail("put", err)
	}
	key := fileKey{owner, id}
	expires := f.now().Add(ttl).UnixNano()
	buf := encodeFile(key, r.Parent, r.Data, expires, 0)
	size := int64(len(buf))
	if size > f.maxBytes {
		return ErrTooLarge
	}
	if err := f.check(key, r.Parent); err != nil {
		return err
	}
	tmp, err := writeTemp(filepath.Join(f.dir, "tmp"), buf)
	if err != nil {
		return fail("put", err)
	}
	path := f.path(key)
	if err := f.commit(tmp, path, key, r.Parent, expires, size); err != nil {
		return err
	}
	if err := syncDir(filepath.Dir(path)); err != nil { // outside the lock: it waits for the disk
		return fail("put", err)
	}
	return nil
}

// commit renames the written file into place and files it in the index.
func (f *File) commit(tmp, path string, key fileKey, parent string, expires, size int64) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.checkLocked(key, parent); err != nil {
		_ = os.Remove(tmp)
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		_ = os.Remove(tmp)
		return fail("put", err)
	}
	e := &fileEntry{key: key, parent: parent, expires: expires, eff: expires, size: size, path: path, hi: -1}
	if p := f.parentOf(e); p != nil {
		p.kids++ // first, so that replacing old below cannot take p with it
	}
	if old := f.idx[key]; old != nil {
		// Its descendants now descend from e; its file is already replaced.
		e.kids, e.eff = old.kids, max(e.eff, old.eff)
		old.path = ""
		delete(f.idx, key)
		f.remove(old)
	}
	f.seq++
	e.seq, e.touch = f.seq, f.seq
	f.idx[key] = e
	f.bytes += size
	heap.Push(&f.order, e)
	f.raise(e)
	f.expire(f.now().UnixNano())
	if f.bytes > f.maxBytes && !f.makeRoom(e) {
		return ErrTooLarge
	}
	return nil
}

// check is checkLocked under the lock.
func (f *File) check(key fileKey, parent string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.checkLocked(key, parent)
}

// checkLocked fails if the store is closed or parent is not there.
func (f *File) checkLocked(key fileKey, parent string) error {
	if f.closed {
		return fail("put", errClosed)
	}
	if parent == "" {
		return nil
	}
	p := f.idx[fileKey{key.owner, parent}]
	if p == nil || p.eff < f.now().UnixNano() {
		return ErrNoParent
	}
	return nil
}

func (f *File) Chain(ctx context.Context, owner, id string, max int) ([]Record, error) {
	if err := ctx.Err(); err != nil {
		return nil, fail("chain", err)
	}
	if max < 1 {
		max = 1
	}
	f.mu.Lock()
	if f.closed {
		f.mu.Unlock()
		return nil, fail("chain", errClosed)
	}
	f.expire(f.now().UnixNano())
	e := f.idx[fileKey{owner, id}]
	if e == nil || e.deleted {
		f.mu.Unlock()
		return nil, nil
	}
	chain := []*fileEntry{e}
	for p := f.parentOf(e); p != nil && len(chain) < max; p = f.parentOf(p) {
		chain = append(chain, p)
	}
	type want struct {
		e    *fileEntry
		path string
		key  fileKey
	}
	wants := make([]want, len(chain))
	for i, c := range chain {
		wants[i] = want{c, c.path, c.key}
	}
	f.mu.Unlock()

	out := make([]Record, 0, len(wants))
	for _, w := range wants {
		parent, data, err := readRecord(w.path, w.key)
		if err != nil {
			if !errors.Is(err, errCorrupt) && !errors.Is(err, fs.ErrNotExist) {
				return nil, fail("chain", err)
			}
			if errors.Is(err, errCorrupt) {
				f.mu.Lock()
				if f.idx[w.key] == w.e {
					f.remove(w.e)
				}
				f.mu.Unlock()
			}
			break // the chain ends at a lost record
		}
		out = append(out, Record{Parent: parent, Data: data})
	}
	if len(out) == 0 {
		return nil, nil
	}
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return out, nil
}

func (f *File) Delete(ctx context.Context, owner, id string) (bool, error) {
	if err := ctx.Err(); err != nil {
		return false, fail("delete", err)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return false, fail("delete", errClosed)
	}
	f.expire(f.now().UnixNano())
	e := f.idx[fileKey{owner, id}]
	if e == nil || e.deleted {
		return false, nil
	}
	if e.kids == 0 {
		f.remove(e)
		if err := syncDir(filepath.Dir(e.path)); err != nil {
			return true, fail("delete", err)
		}
		return true, nil
	}
	// Its descendants still need its data: mark the file deleted.
	b, err := os.ReadFile(e.path)
	if err != nil {
		return false, fail("delete", err)
	}
	if _, _, err := parseRecord(b, e.key); err != nil {
		f.remove(e) // corrupt: it was lost anyway
		return true, nil
	}
	b[4] |= flagDeleted
	lo, li, lp, _, _ := parseFixed(b)
	names := b[fileFixed+fileHeadCRC : fileFixed+fileHeadCRC+lo+li+lp]
	binary.LittleEndian.PutUint32(b[fileFixed:], headCRC(b[:fileFixed], names))
	tmp, err := writeTemp(filepath.Join(f.dir, "tmp"), b)
	if err != nil {
		return false, fail("delete", err)
	}
	if err := os.Rename(tmp, e.path); err != nil {
		_ = os.Remove(tmp)
		return false, fail("delete", err)
	}
	e.deleted = true
	if err := syncDir(filepath.Dir(e.path)); err != nil {
		return true, fail("delete", err)
	}
	return true, nil
}

// Close releases the folder's lock; the files stay.
func (f *File) Close() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return nil
	}
	f.closed = true
	return f.lock.Close() // closing the descriptor drops the flock
}

// Bytes is the size of the record files held, for tests and metrics.
func (f *File) Bytes() int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.bytes
}
