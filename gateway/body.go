package gateway

import (
	"io"
	"sync"
)

// bodyReader reads request bodies into buffers that grow with what arrives, never from
// Content-Length, and are recycled: a request holds its buffer until serve has answered
// and recorded it (release), and the next request reads into it. Once the pool is warm a
// body costs no allocation and no copy; a 318 KB pass-through request spent a third of
// the gateway's time copying its body out of the scratch buffer.
//
// So whatever outlives a request copies what it keeps of the body: the tools caches
// (knownTools, toolCache), stored responses (responsesDoor.keep), thread splices (every
// state.Store copies). A transport may still be sending the body upstream after its
// answer came (backends.BodyTracker): serve then leaves the buffer to the collector.
// Race builds, which the test command runs, never recycle: they fill a released buffer
// with poisonByte, so a test that reads what something kept reads garbage and fails.
type bodyReader struct {
	scratch sync.Pool // *[]byte
}

const (
	// maxPooledBody is the largest buffer kept for reuse; larger bodies are rare and
	// their buffers go back to the garbage collector.
	maxPooledBody = 4 << 20
	// editSlack is spare room a body's buffer keeps past its end, so a pass-through edit
	// that adds one small member at the end writes in place (oai.Object.SetEnd).
	editSlack = 64
	// A body under a quarter of its recycled buffer is copied out instead of holding the
	// buffer: a long stream would otherwise keep megabytes for a few kilobytes.
	minHeldShare = 4
	minHeldCap   = 64 << 10
)

// read returns the body of rd and the buffer it lives in, for release once the request
// has ended (nil when the body has a buffer of its own). The buffer doubles from 4 KiB,
// never to more than twice what has arrived, whatever Content-Length (size, -1 when
// unknown) announces, so a client that announces 16 MB and sends a byte costs 4 KiB; size
// only spares the last growth its slack. The limit is rd's (http.MaxBytesReader).
func (br *bodyReader) read(rd io.Reader, size int64) ([]byte, *[]byte, error) {
	if size >= 0 && size < 4<<10 { // small: straight into its own buffer (and the byte that reads the end)
		b, err := readInto(rd, make([]byte, 0, size+1+editSlack), size)
		return b, nil, err
	}
	sp, _ := br.scratch.Get().(*[]byte)
	if sp == nil {
		sp = new([]byte)
		*sp = make([]byte, 0, 4<<10)
	}
	buf, err := readInto(rd, (*sp)[:0], size)
	*sp = buf[:0]
	switch {
	case err != nil:
		br.release(sp)
		return nil, nil, err
	case cap(buf) > maxPooledBody:
		return buf, nil, nil // the collector's, with the request
	case cap(buf) >= minHeldCap && len(buf) < cap(buf)/minHeldShare:
		out := append(make([]byte, 0, len(buf)+editSlack), buf...)
		br.release(sp)
		return out, nil, nil
	}
	return buf, sp, nil
}

// release takes back a buffer read returned, once nothing reads the body in it.
func (br *bodyReader) release(sp *[]byte) {
	if sp == nil {
		return
	}
	if !recycleBodies {
		b := (*sp)[:cap(*sp)]
		for i := range b {
			b[i] = poisonByte
		}
		return
	}
	*sp = (*sp)[:0]
	br.scratch.Put(sp)
}

// readInto reads rd to its end into buf, growing it as read says.
func readInto(rd io.Reader, buf []byte, size int64) ([]byte, error) {
	for {
		if len(buf) == cap(buf) {
			next := max(2*int64(cap(buf)), 4<<10)
			if size+1 <= next+1 && size+1 > int64(len(buf)) {
				next = size + 1 + editSlack // the rest, the byte that reads the end, the slack
			}
			nb := make([]byte, len(buf), next)
			copy(nb, buf)
			buf = nb
		}
		n, err := rd.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return buf, err
		}
	}
}
