package replicas

import (
	"sync"

	"github.com/maskgate/maskgate/backends"
)

// committed is a replica's stream whose first chunk (or end) was read to decide that
// the replica answers; it gives that chunk back before reading on.
type committed struct {
	backends.Stream
	first    []byte
	firstErr error // io.EOF for a stream that ended at once, else nil
	pending  bool  // first has not been returned yet

	release   func() // ends the request's count in flight on its replica
	closeOnce sync.Once
}

func (s *committed) Next() ([]byte, error) {
	if s.pending {
		s.pending = false
		return s.first, s.firstErr
	}
	return s.Stream.Next()
}

func (s *committed) Close() error {
	s.closeOnce.Do(s.release)
	return s.Stream.Close()
}
