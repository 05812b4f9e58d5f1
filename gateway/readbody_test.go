package gateway

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/iotest"
)

func readBody(rd io.Reader, size int64) ([]byte, error) {
	b, _, err := new(bodyReader).read(rd, size)
	return b, err
}

// readBody returns the body whole, whether its length was announced, understated by
// nothing, unknown, or arrives a byte at a time; the limit still holds.
func TestReadBody_WholeWhateverTheLength(t *testing.T) {
	for _, n := range []int{0, 1, 4095, 4096, 4097, 10_000, 300_000} {
		body := bytes.Repeat([]byte("x"), n)
		for _, announced := range []int64{int64(n), -1} {
			for _, slow := range []bool{false, true} {
				var rd io.Reader = bytes.NewReader(body)
				if slow {
					rd = iotest.OneByteReader(rd)
				}
				got, err := readBody(rd, announced)
				if err != nil || !bytes.Equal(got, body) {
					t.Errorf("n %d announced %d slow %v: %d bytes, %v", n, announced, slow, len(got), err)
				}
				if limit := n + 1 + editSlack; announced < 0 {
					if limit = 2*n + editSlack; cap(got) > max(limit, 4<<10) {
						t.Errorf("n %d unannounced: capacity %d, want at most twice the body", n, cap(got))
					}
				} else if cap(got) > limit {
					t.Errorf("n %d announced: capacity %d, want the body's length, a byte and the edit slack (%d)", n, cap(got), limit)
				}
			}
		}
	}
	w := httptest.NewRecorder()
	r := httptest.NewRequest(http.MethodPost, "/", strings.NewReader(strings.Repeat("y", 5000)))
	_, err := readBody(http.MaxBytesReader(w, r.Body, 4000), r.ContentLength)
	var mbe *http.MaxBytesError
	if !errors.As(err, &mbe) {
		t.Errorf("over the limit: %v", err)
	}
}

// A body that announces more than it sends costs what was sent, not what was announced.
func TestReadBody_AnnouncedLengthIsNotAllocated(t *testing.T) {
	got := testing.Benchmark(func(b *testing.B) {
		b.ReportAllocs()
		for range b.N {
			readBody(io.LimitReader(strings.NewReader("{}"), 2), 16_000_000) // a fresh reader: no recycled buffer
		}
	})
	if per := got.AllocedBytesPerOp(); per > 8<<10 {
		t.Errorf("a 2-byte body announcing 16 MB allocated %d bytes, want at most 8 KiB", per)
	}
}

// readBodyPrealloc is readBody as it was before issue 12 (one allocation of the
// announced length), the baseline of BenchmarkReadBody.
func readBodyPrealloc(rd io.Reader, n int64) ([]byte, error) {
	if n > 0 {
		buf := make([]byte, n)
		if _, err := io.ReadFull(rd, buf); err != nil {
			return nil, err
		}
		var probe [1]byte
		if _, err := io.ReadFull(rd, probe[:]); err == io.EOF {
			return buf, nil
		} else if err != nil {
			return nil, err
		}
		rest, err := io.ReadAll(rd)
		return append(append(buf, probe[0]), rest...), err
	}
	return io.ReadAll(rd)
}

// BenchmarkReadBody reads request bodies of typical sizes, announced and chunked, with
// one bodyReader (as a Server does, its buffers recycled) and with the preallocating
// baseline, from a reader that gives at most 32 KiB a call as a connection does.
func BenchmarkReadBody(b *testing.B) {
	for _, size := range []int{2 << 10, 64 << 10, 1 << 20} {
		body := bytes.Repeat([]byte("x"), size)
		for _, announced := range []bool{true, false} {
			n := int64(size)
			if !announced {
				n = -1
			}
			for _, impl := range []struct {
				name string
				read func(io.Reader, int64) ([]byte, error)
			}{{"grow", recycling(new(bodyReader))}, {"baseline", readBodyPrealloc}} {
				b.Run(fmt.Sprintf("%s/%dKiB/announced=%v", impl.name, size>>10, announced), func(b *testing.B) {
					b.ReportAllocs()
					b.SetBytes(int64(size))
					for range b.N {
						rd := &chunky{r: bytes.NewReader(body), max: 32 << 10}
						if _, err := impl.read(rd, n); err != nil {
							b.Fatal(err)
						}
					}
				})
			}
		}
	}
}

// recycling reads as a Server does: each body's buffer released once its request is done.
func recycling(br *bodyReader) func(io.Reader, int64) ([]byte, error) {
	return func(rd io.Reader, n int64) ([]byte, error) {
		b, held, err := br.read(rd, n)
		br.release(held)
		return b, err
	}
}

// A released buffer is the next request's (recycled) — except in race builds, where it is
// poisoned and never reused, so that a slice of a body kept past its request shows.
func TestReadBody_ReleasedBufferIsRecycledOrPoisoned(t *testing.T) {
	br := new(bodyReader)
	first := bytes.Repeat([]byte("a"), 100<<10)
	got, held, err := br.read(bytes.NewReader(first), int64(len(first)))
	if err != nil || held == nil || !bytes.Equal(got, first) {
		t.Fatalf("read: %d bytes, held %v, %v", len(got), held != nil, err)
	}
	kept := got[:8] // what a careless cache would keep
	br.release(held)
	if !recycleBodies {
		if want := bytes.Repeat([]byte{poisonByte}, 8); !bytes.Equal(kept, want) {
			t.Errorf("race build: a released buffer reads %q, want poison", kept)
		}
		return
	}
	// The next body is read into the same buffer (sync.Pool may drop an item at a
	// collection, so a few tries).
	second := bytes.Repeat([]byte("b"), 100<<10)
	reused := false
	for range 10 {
		again, held2, err := br.read(bytes.NewReader(second), int64(len(second)))
		if err != nil || !bytes.Equal(again, second) {
			t.Fatalf("second read: %v", err)
		}
		reused = reused || &again[0] == &got[0]
		br.release(held2)
	}
	if !reused {
		t.Error("a released buffer was never read into again")
	}
}

// A small body in a large recycled buffer is copied out, and the buffer goes back at
// once: a long request does not hold megabytes for a few kilobytes.
func TestReadBody_SmallBodyDoesNotHoldALargeBuffer(t *testing.T) {
	br := new(bodyReader)
	big := bytes.Repeat([]byte("a"), 1<<20)
	_, held, err := br.read(bytes.NewReader(big), int64(len(big)))
	if err != nil {
		t.Fatal(err)
	}
	br.release(held)
	small := bytes.Repeat([]byte("b"), 8<<10)
	got, held, err := br.read(bytes.NewReader(small), -1)
	if err != nil || !bytes.Equal(got, small) {
		t.Fatalf("small read: %v", err)
	}
	if recycleBodies && held != nil {
		t.Errorf("an 8 KiB body holds a buffer of %d bytes", cap(*held))
	}
	if cap(got) > 2*len(small)+editSlack {
		t.Errorf("an 8 KiB body has capacity %d", cap(got))
	}
}

// chunky gives at most max bytes a Read.
type chunky struct {
	r   io.Reader
	max int
}

func (c *chunky) Read(p []byte) (int, error) { return c.r.Read(p[:min(len(p), c.max)]) }
