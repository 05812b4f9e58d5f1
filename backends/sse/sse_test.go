package sse

import (
	"bytes"
	"errors"
	"io"
	"runtime"
	"slices"
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
	if !errors.Is(err, ErrTooLarge) {
		t.Errorf("err %v", err)
	}
	// A line longer than the internal buffer but under the cap is whole.
	long := strings.Repeat("y", 40<<10)
	got, err := readAll(t, NewReader(strings.NewReader("data: "+long+"\n\n"), 1<<20))
	if err != io.EOF || len(got) != 1 || string(got[0].Data) != long {
		t.Errorf("long line: %d events, err %v", len(got), err)
	}
}

// The cap is on the event, not the line: many short data lines that add up past it are
// an error, while the same lines split into separate events pass.
func TestReader_EventOverCapIsAnErrorWhateverItsLines(t *testing.T) {
	line := "data: " + strings.Repeat("z", 94) + "\n" // 100 bytes counted per line
	_, err := readAll(t, NewReader(strings.NewReader(strings.Repeat(line, 11)+"\n"), 1000))
	if !errors.Is(err, ErrTooLarge) {
		t.Errorf("11 lines of 100 bytes under a 1000-byte cap: err %v, want ErrTooLarge", err)
	}
	got, err := readAll(t, NewReader(strings.NewReader(strings.Repeat(line, 10)+"\n"), 1000))
	if err != io.EOF || len(got) != 1 || len(got[0].Data) != 10*94+9 {
		t.Errorf("10 lines of 100 bytes under a 1000-byte cap: %d events, err %v", len(got), err)
	}
	got, err = readAll(t, NewReader(strings.NewReader(strings.Repeat(line+"\n", 50)), 1000))
	if err != io.EOF || len(got) != 50 {
		t.Errorf("50 separate events: %d, err %v", len(got), err)
	}
	// Comments between blank lines count toward nothing but their own block.
	_, err = readAll(t, NewReader(strings.NewReader(strings.Repeat(": "+strings.Repeat("c", 98)+"\n", 11)+"\n"), 1000))
	if !errors.Is(err, ErrTooLarge) {
		t.Errorf("11 comment lines with no blank line between: err %v, want ErrTooLarge", err)
	}
}

// eventSource generates one event of about size bytes, split into data lines of
// lineLen bytes, without holding it: the reader is the only thing that could buffer it.
type eventSource struct {
	line []byte
	left int
	pos  int
}

func newEventSource(size, lineLen int) *eventSource {
	l := append([]byte("data: "), bytes.Repeat([]byte("x"), lineLen-7)...)
	return &eventSource{line: append(l, '\n'), left: size}
}

func (s *eventSource) Read(p []byte) (int, error) {
	if s.left <= 0 {
		return 0, io.EOF
	}
	n := 0
	for n < len(p) && s.left > 0 {
		c := copy(p[n:], s.line[s.pos:])
		n += c
		s.left -= c
		s.pos = (s.pos + c) % len(s.line)
	}
	return n, nil
}

// The probe of issue 12: one 100 MB event split over many data lines made the gateway
// hold 398 MB. With a 1 MiB cap the reader stops at the cap, having allocated a few
// times the cap (the data growing to it, and the bufio buffer), under 8 × the cap.
func TestReader_HugeEventOverManyLinesStopsAtTheCap(t *testing.T) {
	const capBytes = 1 << 20
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	src := newEventSource(100<<20, 1000)
	_, err := NewReader(src, capBytes).Next()
	runtime.ReadMemStats(&after)
	if !errors.Is(err, ErrTooLarge) {
		t.Fatalf("err %v, want ErrTooLarge", err)
	}
	read := 100<<20 - src.left
	if read > capBytes+64<<10 {
		t.Errorf("read %d bytes of the event, want the cap (%d) and a buffer at most", read, capBytes)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 8*capBytes {
		t.Errorf("allocated %d bytes reading the event, want under %d (8 × the cap)", alloc, 8*capBytes)
	} else {
		t.Logf("allocated %d bytes for a 100 MiB event under a %d-byte cap", alloc, capBytes)
	}
}

// refEvents is a reference reader, written for clarity over the whole input: the
// events and the error Reader must produce.
func refEvents(in []byte, max int) ([]Event, error) {
	var out []Event
	var data []byte
	name, hasData, size := "", false, 0
	for {
		i := bytes.IndexByte(in, '\n')
		if i < 0 { // the partial last line
			switch {
			case len(in) > max-size:
				return out, ErrTooLarge
			case hasData || len(in) > 0:
				return out, io.ErrUnexpectedEOF
			}
			return out, io.EOF
		}
		line := bytes.TrimSuffix(in[:i], []byte("\r"))
		in = in[i+1:]
		if len(line) > max-size {
			return out, ErrTooLarge
		}
		if len(line) == 0 {
			if hasData {
				out = append(out, Event{Name: name, Data: data})
			}
			data, name, hasData, size = nil, "", false, 0
			continue
		}
		size += len(line)
		if line[0] == ':' {
			continue
		}
		field, value, found := bytes.Cut(line, []byte(":"))
		if found {
			value = bytes.TrimPrefix(value, []byte(" "))
		}
		switch string(field) {
		case "data":
			if hasData {
				data = append(data, '\n')
			}
			data = append(data, value...)
			if data == nil {
				data = []byte{}
			}
			hasData = true
		case "event":
			name = string(value)
		}
	}
}

// FuzzReader: arbitrary bytes never panic, and the reader gives the events and the end
// (EOF, ErrUnexpectedEOF or ErrTooLarge) of the reference reader, for a small cap and
// one larger than the internal buffer.
func FuzzReader(f *testing.F) {
	for _, s := range []string{"data: a\n\n", "data: [DONE]\n\n", ":\n\ndata:x\r\n\r\n", "event: e\ndata: 1\ndata: 2\n\n", "data: cut",
		"data: " + strings.Repeat("a", 70) + "\n\n", strings.Repeat("data: abcdefgh\n", 9) + "\n"} {
		f.Add([]byte(s), uint16(64))
	}
	f.Add([]byte("data: "+strings.Repeat("b", 20<<10)+"\n\n"), uint16(30000))
	f.Fuzz(func(t *testing.T, in []byte, max uint16) {
		m := int(max)%(40<<10) + 1
		want, wantErr := refEvents(in, m)
		var got []Event
		r := NewReader(bytes.NewReader(in), m)
		var err error
		for {
			var ev Event
			if ev, err = r.Next(); err != nil {
				break
			}
			if ev.Data == nil {
				ev.Data = []byte{}
			}
			got = append(got, Event{Name: ev.Name, Data: bytes.Clone(ev.Data)})
			if len(got) > len(in) {
				t.Fatal("more events than input bytes")
			}
		}
		if !errors.Is(err, wantErr) {
			t.Fatalf("end %v, want %v", err, wantErr)
		}
		for i := range want {
			if want[i].Data == nil {
				want[i].Data = []byte{}
			}
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("events (-ref +reader):\n%s", diff)
		}
	})
}

// arrivals gives its parts one Read each, and counts the reads.
type arrivals struct {
	parts []string
	reads int
}

func (a *arrivals) Read(p []byte) (int, error) {
	if len(a.parts) == 0 {
		return 0, io.EOF
	}
	a.reads++
	n := copy(p, a.parts[0])
	if a.parts[0] = a.parts[0][n:]; a.parts[0] == "" {
		a.parts = a.parts[1:]
	}
	return n, nil
}

// Ready is true exactly when the next event is whole in what has arrived: then Next
// returns it without a read. It is false when the next event is partial, when a comment
// comes first, and when nothing is buffered.
func TestReader_ReadyOnlyWhenTheNextEventHasArrived(t *testing.T) {
	tests := []struct {
		name   string
		parts  []string
		ready  []bool // before each Next after the first
		events int
	}{
		{"two events in one read", []string{"data: 1\n\ndata: 2\n\n"}, []bool{true, false}, 2},
		{"one event a read", []string{"data: 1\n\n", "data: 2\n\n"}, []bool{false, false}, 2},
		{"the next one partial", []string{"data: 1\n\ndata: ", "2\n\n"}, []bool{false, false}, 2},
		{"a comment first", []string{"data: 1\n\n: ping\n\ndata: 2\n\n"}, []bool{false, false}, 2},
		{"CR LF lines", []string{"data: 1\r\n\r\ndata: 2\r\n\r\n"}, []bool{false, false}, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := &arrivals{parts: slices.Clone(tt.parts)}
			r := NewReader(src, 0)
			if _, err := r.Next(); err != nil {
				t.Fatal(err)
			}
			for i := 1; i < tt.events; i++ {
				ready, before := r.Ready(), src.reads
				if ready != tt.ready[i-1] {
					t.Errorf("before event %d: Ready %v, want %v", i+1, ready, tt.ready[i-1])
				}
				if _, err := r.Next(); err != nil {
					t.Fatal(err)
				}
				if ready && src.reads != before {
					t.Errorf("event %d: Ready said it had arrived, but Next read again", i+1)
				}
			}
			if r.Ready() {
				t.Error("Ready after the last event")
			}
		})
	}
}
