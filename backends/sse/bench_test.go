package sse

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
)

// BenchmarkReader reads streams as engines write them, with Reader and with the
// reader as it was before issue 12 (a cap per line, not per event), the baseline.
func BenchmarkReader(b *testing.B) {
	chunk := `{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"hello"},"finish_reason":null}]}`
	streams := []struct {
		name string
		in   string
	}{
		{"500_chunks", strings.Repeat("data: "+chunk+"\n\n", 500) + "data: [DONE]\n\n"},
		{"one_64KiB_event", "data: " + strings.Repeat("x", 64<<10) + "\n\n"},
		{"event_of_100_lines", strings.Repeat("data: "+chunk+"\n", 100) + "\n"},
	}
	for _, s := range streams {
		b.Run("Reader/"+s.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(s.in)))
			for range b.N {
				r := NewReader(strings.NewReader(s.in), 0)
				for {
					if _, err := r.Next(); err != nil {
						break
					}
				}
			}
		})
		b.Run("baseline/"+s.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(s.in)))
			for range b.N {
				r := newLineCapReader(strings.NewReader(s.in), 0)
				for {
					if _, err := r.Next(); err != nil {
						break
					}
				}
			}
		})
	}
}

var errLineTooLong = errors.New("sse: line too long")

// lineCapReader is Reader before issue 12, for BenchmarkReader.
type lineCapReader struct {
	r       *bufio.Reader
	maxLine int
	line    []byte
	data    []byte
}

// NewReader returns a Reader of src with lines capped at maxLine bytes (DefaultMaxEvent if
// zero).
func newLineCapReader(src io.Reader, maxLine int) *lineCapReader {
	if maxLine <= 0 {
		maxLine = DefaultMaxEvent
	}
	return &lineCapReader{r: bufio.NewReaderSize(src, 16<<10), maxLine: maxLine}
}

// Next returns the next event with a data field. Event.Data is valid until the next call.
// At the end of the stream it returns io.EOF; an event cut off by the end of the stream
// (no blank line after it) is returned with io.ErrUnexpectedEOF.
func (r *lineCapReader) Next() (Event, error) {
	var ev Event
	r.data = r.data[:0]
	hasData := false
	for {
		line, err := r.readLine()
		if err != nil {
			if err == io.EOF && (hasData || len(line) > 0) {
				return Event{}, io.ErrUnexpectedEOF
			}
			return Event{}, err
		}
		if len(line) == 0 { // blank line: dispatch
			if hasData {
				ev.Data = r.data
				return ev, nil
			}
			ev.Name = ""
			continue
		}
		if line[0] == ':' { // comment, used as keep-alive
			continue
		}
		field, value := line, []byte(nil)
		if i := bytes.IndexByte(line, ':'); i >= 0 {
			field, value = line[:i], line[i+1:]
			if len(value) > 0 && value[0] == ' ' {
				value = value[1:]
			}
		}
		switch string(field) {
		case "data":
			if hasData {
				r.data = append(r.data, '\n')
			}
			r.data = append(r.data, value...)
			hasData = true
		case "event":
			ev.Name = string(value)
		}
	}
}

// readLine returns one line without its terminator ("\n", "\r\n" or a lone "\r" before
// "\n" is not treated specially). At EOF with a partial line it returns the partial line
// and io.EOF.
func (r *lineCapReader) readLine() ([]byte, error) {
	r.line = r.line[:0]
	for {
		frag, err := r.r.ReadSlice('\n')
		if len(r.line)+len(frag) > r.maxLine+2 {
			return nil, fmt.Errorf("%w: over %d bytes", errLineTooLong, r.maxLine)
		}
		if err == bufio.ErrBufferFull {
			r.line = append(r.line, frag...)
			continue
		}
		var line []byte
		if len(r.line) == 0 {
			line = frag // no copy on the common path; valid until the next read
		} else {
			r.line = append(r.line, frag...)
			line = r.line
		}
		if err != nil {
			return line, err
		}
		line = line[:len(line)-1]
		if n := len(line); n > 0 && line[n-1] == '\r' {
			line = line[:n-1]
		}
		return line, nil
	}
}
