// Package sse reads Server-Sent Events as upstream engines write them.
//
// It owns framing only: lines, fields, events, and a cap on an event's size (all its
// lines together, so one event split over many data lines is capped too) so a broken or
// hostile upstream cannot make the gateway buffer without bound. What an event means is
// the caller's business.
package sse

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
)

// DefaultMaxEvent is the largest event a Reader accepts when its cap is zero. A chunk
// with a whole tool call's arguments fits many times over; a runaway event does not.
const DefaultMaxEvent = 8 << 20

// ErrTooLarge is returned for an event whose lines together exceed the reader's cap.
var ErrTooLarge = errors.New("sse: event too large")

// Event is one dispatched event. Data joins the event's data lines with "\n".
type Event struct {
	Name string
	Data []byte
}

// Reader reads events from an SSE stream.
type Reader struct {
	r    *bufio.Reader
	max  int
	line []byte
	data []byte
}

// NewReader returns a Reader of src whose events are capped at max bytes: the lines
// between two blank lines, terminators excluded, comments and unknown fields included.
// If max is zero, DefaultMaxEvent.
func NewReader(src io.Reader, max int) *Reader {
	if max <= 0 {
		max = DefaultMaxEvent
	}
	return &Reader{r: bufio.NewReaderSize(src, 16<<10), max: max}
}

// Next returns the next event with a data field. Event.Data is valid until the next call.
// At the end of the stream it returns io.EOF; an event cut off by the end of the stream
// (no blank line after it) is returned with io.ErrUnexpectedEOF; an event over the cap,
// as soon as its lines pass it, with an error wrapping ErrTooLarge.
func (r *Reader) Next() (Event, error) {
	var ev Event
	r.data = r.data[:0]
	hasData := false
	size := 0 // bytes of the event's lines so far
	for {
		line, err := r.readLine(r.max - size)
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
			size = 0
			continue
		}
		size += len(line)
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
			r.data = r.grow(r.data, len(value)+1)
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

// Ready reports whether the next event has arrived whole, so that Next returns it without
// reading from the source: the buffered bytes begin with a data line and hold the blank
// line that ends it. It looks only at what is buffered and says false when unsure (an
// event after a comment, or a blank line written as CR LF CR LF), never true when Next
// would wait.
func (r *Reader) Ready() bool {
	b, _ := r.r.Peek(r.r.Buffered())
	return bytes.HasPrefix(b, dataField) && bytes.Contains(b, blankLine)
}

var (
	dataField = []byte("data:")
	blankLine = []byte("\n\n")
)

// grow makes room for n more bytes in b, by half again (append grows large slices by
// a quarter, which for an event at the cap allocates five times the cap on the way),
// never past the cap and a newline.
func (r *Reader) grow(b []byte, n int) []byte {
	if len(b)+n <= cap(b) {
		return b
	}
	c := min(max(cap(b)+cap(b)/2, len(b)+n), r.max+1)
	nb := make([]byte, len(b), max(c, len(b)+n))
	copy(nb, b)
	return nb
}

// readLine returns one line of at most max bytes without its terminator ("\n" or
// "\r\n"). At EOF with a partial line it returns the partial line and io.EOF; a longer
// line is an error wrapping ErrTooLarge, returned once the cap is passed, without
// reading the rest.
func (r *Reader) readLine(max int) ([]byte, error) {
	r.line = r.line[:0]
	for {
		frag, err := r.r.ReadSlice('\n')
		if len(r.line)+len(frag) > max+2 { // +2: the terminator is not counted
			return nil, fmt.Errorf("%w: over %d bytes", ErrTooLarge, r.max)
		}
		if err == bufio.ErrBufferFull {
			r.line = append(r.grow(r.line, len(frag)), frag...)
			continue
		}
		var line []byte
		if len(r.line) == 0 {
			line = frag // no copy on the common path; valid until the next read
		} else {
			r.line = append(r.grow(r.line, len(frag)), frag...)
			line = r.line
		}
		if err != nil {
			if len(line) > max {
				return nil, fmt.Errorf("%w: over %d bytes", ErrTooLarge, r.max)
			}
			return line, err
		}
		line = line[:len(line)-1]
		if n := len(line); n > 0 && line[n-1] == '\r' {
			line = line[:n-1]
		}
		if len(line) > max {
			return nil, fmt.Errorf("%w: over %d bytes", ErrTooLarge, r.max)
		}
		return line, nil
	}
}
