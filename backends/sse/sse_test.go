package sse

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func readAll(t *testing.T, r *Reader) ([]Event, error) {
	t.Helper()
	var out []Event
	for {
		ev, err := r.Next()
		if err != nil {
			return out, err
		}
		out = append(out, Event{Name: ev.Name, Data: bytes.Clone(ev.Data)})
	}
}

func TestReader_FramesEventsAsTheSpecSays(t *testing.T) {
	in := ": keep-alive\n\ndata: a\n\nevent: error\ndata: {\"x\":1}\n\ndata: l1\r\ndata: l2\r\n\r\ndata:nospace\n\nid: 7\nretry: 10\n\n"
	got, err := readAll(t, NewReader(strings.NewReader(in), 0))
	if err != io.EOF {
		t.Fatalf("err %v", err)
	}
	want := []Event{{Data: []byte("a")}, {Name: "error", Data: []byte(`{"x":1}`)}, {Data: []byte("l1\nl2")}, {Data: []byte("nospace")}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Error(diff)
	}
}

func TestReader_CutOffEventIsUnexpectedEOF(t *testing.T) {
	_, err := readAll(t, NewReader(strings.NewReader("data: a\n\ndata: part"), 0))
	if err != io.ErrUnexpectedEOF {
		t.Errorf("err %v, want io.ErrUnexpectedEOF", err)
	}
}

func TestReader_LineOverCapIsAnError(t *testing.T) {
	in := "data: " + strings.Repeat("x", 100) + "\n\n"
	_, err := readAll(t, NewReader(strings.NewReader(in), 50))
	if !errors.Is(err, ErrLineTooLong) {
		t.Errorf("err %v", err)
	}
	// A line longer than the internal buffer but under the cap is whole.
	long := strings.Repeat("y", 40<<10)
	got, err := readAll(t, NewReader(strings.NewReader("data: "+long+"\n\n"), 1<<20))
	if err != io.EOF || len(got) != 1 || string(got[0].Data) != long {
		t.Errorf("long line: %d events, err %v", len(got), err)
	}
}

// FuzzReader: arbitrary bytes never panic, every event's data fits the cap, and the
// reader ends with EOF, ErrUnexpectedEOF or ErrLineTooLong.
func FuzzReader(f *testing.F) {
	for _, s := range []string{"data: a\n\n", "data: [DONE]\n\n", ":\n\ndata:x\r\n\r\n", "event: e\ndata: 1\ndata: 2\n\n", "data: cut"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		r := NewReader(bytes.NewReader(in), 64)
		for i := 0; ; i++ {
			ev, err := r.Next()
			if err != nil {
				if err != io.EOF && err != io.ErrUnexpectedEOF && !errors.Is(err, ErrLineTooLong) {
					t.Fatalf("unexpected error %v", err)
				}
				return
			}
			if len(ev.Data) > len(in) {
				t.Fatalf("event data longer than input")
			}
			if i > len(in) {
				t.Fatal("more events than input bytes")
			}
		}
	})
}
