package logtail

import (
	"fmt"
	"strings"
	"sync"
	"testing"
)

func TestBuffer_KeepsTheEndFromALineStart(t *testing.T) {
	b := &Buffer{Max: 40}
	for i := range 10 {
		fmt.Fprintf(b, "line %d of the log\n", i) // 18 bytes a line
	}
	// The last 40 bytes start inside line 7; the buffer keeps lines 8 and 9 whole.
	if got, want := b.String(), "line 8 of the log\nline 9 of the log"; got != want {
		t.Errorf("kept %q, want %q", got, want)
	}
	if b.Empty() {
		t.Error("Empty with two lines kept")
	}
}

func TestBuffer_OneLongLineKeepsItsEnd(t *testing.T) {
	b := &Buffer{Max: 8}
	_, _ = b.Write([]byte("abcdefghijklmnop\n"))
	if got, want := b.String(), "jklmnop"; got != want {
		t.Errorf("kept %q, want %q", got, want)
	}
}

func TestBuffer_EmptyAndZero(t *testing.T) {
	var b Buffer
	_, _ = b.Write([]byte("dropped\n"))
	if !b.Empty() || b.String() != "(empty)" {
		t.Errorf("zero Max kept %q", b.String())
	}
	w := &Buffer{Max: 64}
	_, _ = w.Write([]byte(" \n\t"))
	if !w.Empty() {
		t.Error("white space alone is not Empty")
	}
}

func TestBuffer_ConcurrentWritersKeepWholeLines(t *testing.T) {
	b := &Buffer{Max: 256}
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 200 {
				fmt.Fprintf(b, "writer %d line %03d\n", g, i)
			}
		}()
	}
	wg.Wait()
	for _, l := range strings.Split(b.String(), "\n") {
		var g, i int
		if n, err := fmt.Sscanf(l, "writer %d line %d", &g, &i); n != 2 || err != nil {
			t.Errorf("kept a broken line %q", l)
		}
	}
}
