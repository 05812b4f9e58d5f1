// Package logtail keeps the end of a log written to it, for the message of a failure: a
// benchmark's child process's stderr (bench/peer), the warnings of a gateway a benchmark
// runs in-process (bench/replay).
package logtail

import (
	"bytes"
	"strings"
	"sync"
)

// Buffer is an io.Writer that keeps the last Max bytes written to it, from the start of
// a line: when older bytes are dropped, so is the rest of the line they cut. Safe for
// concurrent use. The zero Max keeps nothing.
type Buffer struct {
	Max int

	mu sync.Mutex
	b  []byte
}

// Write keeps p's end; it never fails.
func (t *Buffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p...)
	if len(t.b) > t.Max {
		cut := t.b[len(t.b)-t.Max:]
		if i := bytes.IndexByte(cut, '\n'); i >= 0 && i < len(cut)-1 {
			cut = cut[i+1:] // a whole line, unless the kept bytes are one line's end
		}
		t.b = append(t.b[:0], cut...)
	}
	return len(p), nil
}

// Empty reports whether nothing but white space is kept.
func (t *Buffer) Empty() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(bytes.TrimSpace(t.b)) == 0
}

// String is what is kept, trimmed, or "(empty)".
func (t *Buffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	s := strings.TrimSpace(string(t.b))
	if s == "" {
		return "(empty)"
	}
	return s
}
