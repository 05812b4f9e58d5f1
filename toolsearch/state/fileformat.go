package state

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"
)

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
