// Package sse reads Server-Sent Events as upstream engines write them.
//
// It owns framing only: lines, fields, events, and a cap on line size so a broken or
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

// DefaultMaxLine is the longest line a Reader accepts when MaxLine is zero. A chunk with a
// whole tool call's arguments fits many times over; a runaway line does not.
const DefaultMaxLine = 8 << 20

// ErrLineTooLong is returned for a line over the reader's cap.
var ErrLineTooLong = errors.New("sse: line too long")

// Event is one dispatched event. Data joins the event's data lines with "\n".
type Event struct {
	Name string
	Data []byte
}

// Reader reads events from an SSE stream.
type Reader struct {
	r       *bufio.Reader
	maxLine int
	line    []byte
	data    []byte
}

// NewReader returns a Reader of src with lines capped at maxLine bytes (DefaultMaxLine if
// zero).
func NewReader(src io.Reader, maxLine int) *Reader {
	if maxLine <= 0 {
		maxLine = DefaultMaxLine
	}
	return &Reader{r: bufio.NewReaderSize(src, 16<<10), maxLine: maxLine}
}

// Next returns the next event with a data field. Event.Data is valid until the next call.
// At the end of the stream it returns io.EOF; an event cut off by the end of the stream
// (no blank line after it) is returned with io.ErrUnexpectedEOF.
func (r *Reader) Next() (Event, error) {
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
func (r *Reader) readLine() ([]byte, error) {
	r.line = r.line[:0]
	for {
		frag, err := r.r.ReadSlice('\n')
		if len(r.line)+len(frag) > r.maxLine+2 {
			return nil, fmt.Errorf("%w: over %d bytes", ErrLineTooLong, r.maxLine)
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
