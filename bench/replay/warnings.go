package main

import (
	"bytes"
	"strings"
	"sync"
)

// warnings keeps the last lines the replay's gateway logged at warning level or above,
// so a run that fails says why the gateway answered as it did: a 502's cause (the
// transport's error) is in the gateway's log, not in the envelope the client reads.
type warnings struct {
	mu    sync.Mutex
	lines []string // the newest last, at most maxWarnings
	part  []byte   // a line not yet ended
}

const maxWarnings = 8

// Write takes whole log lines; slog's handlers write one record per call.
func (w *warnings) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.part = append(w.part, p...)
	for {
		i := bytes.IndexByte(w.part, '\n')
		if i < 0 {
			break
		}
		line := string(w.part[:i])
		w.part = w.part[i+1:]
		if len(line) > 2048 {
			line = line[:2048] + "…"
		}
		if len(w.lines) == maxWarnings {
			copy(w.lines, w.lines[1:])
			w.lines = w.lines[:maxWarnings-1]
		}
		w.lines = append(w.lines, line)
	}
	if len(w.part) > 1<<16 { // a record with no line end: keep its start
		w.part = w.part[:1<<16]
	}
	return len(p), nil
}

// String is the kept lines, one per line.
func (w *warnings) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return strings.Join(w.lines, "\n")
}
