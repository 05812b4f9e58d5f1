package gateway

import (
	"net/http"
	"strconv"
	"sync"
)

// DefaultSocketsPerKey is how many Responses WebSockets one identity may hold open at
// once when Options.SocketsPerKey is zero.
const DefaultSocketsPerKey = 32

// socketCap counts the open WebSockets of each identity: a socket lives for a whole
// session and is no request in flight (the key's max_concurrent counts the responses
// run on it), so without a cap of its own one key could hold every connection the
// server accepts.
type socketCap struct {
	mu   sync.Mutex
	open map[string]int
	max  int
}

func newSocketCap(max int) *socketCap {
	if max == 0 {
		max = DefaultSocketsPerKey
	}
	return &socketCap{open: map[string]int{}, max: max}
}

// take counts a new socket of identity, or refuses it (429 in OpenAI's envelope) when
// identity holds its cap already; release gives the place back when the socket closes.
func (c *socketCap) take(identity string) (release func(), err error) {
	if c == nil || c.max < 0 {
		return func() {}, nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.open[identity] >= c.max {
		return nil, &apiError{Status: http.StatusTooManyRequests, Type: "rate_limit_error", Code: "rate_limit_exceeded",
			Message: "this API key already has " + strconv.Itoa(c.max) + " WebSockets open, its limit; close one or send the session over one socket"}
	}
	c.open[identity]++
	return sync.OnceFunc(func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		if c.open[identity]--; c.open[identity] <= 0 {
			delete(c.open, identity)
		}
	}), nil
}
