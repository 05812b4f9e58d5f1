package wsock

import (
	"context"
	"errors"
	"net/http"
	"sync"

	"github.com/gorilla/websocket"
)

// ErrShuttingDown is returned by Registry.Serve after Shutdown began; the request was
// answered 503 without an upgrade.
var ErrShuttingDown = errors.New("wsock: server shutting down")

const shutdownReason = "server shutting down"

// Registry tracks open connections, which http.Server.Shutdown does not (they are
// hijacked), so that a server can close them cleanly. The zero value is ready to use.
type Registry struct {
	mu       sync.Mutex
	conns    map[*conn]struct{}
	shutdown bool
}

// Serve is the package's Serve, with the connection tracked by g.
func (g *Registry) Serve(w http.ResponseWriter, r *http.Request, opt Options, handle Handler) error {
	return serve(w, r, opt, handle, g)
}

// Len is how many connections are open.
func (g *Registry) Len() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.conns)
}

// CloseAll closes every open connection with 1001 and reason ("server shutting down"
// when empty): their handlers are cancelled and their Serve calls return. Connections
// opened later are not affected; Shutdown also refuses them.
func (g *Registry) CloseAll(reason string) {
	if reason == "" {
		reason = shutdownReason
	}
	for _, c := range g.snapshot() {
		c.closeWith(closeSpec{code: websocket.CloseGoingAway, reason: reason, frame: true})
	}
}

// Shutdown refuses new connections (503), closes the open ones with 1001 "server
// shutting down" and waits until their Serve calls have returned. When ctx ends first it
// drops the remaining TCP connections and returns ctx's error; their Serve calls still
// wait for their handlers.
func (g *Registry) Shutdown(ctx context.Context) error {
	g.mu.Lock()
	g.shutdown = true
	g.mu.Unlock()
	g.CloseAll(shutdownReason)
	for {
		cs := g.snapshot()
		if len(cs) == 0 {
			return nil
		}
		select {
		case <-cs[0].done:
		case <-ctx.Done():
			for _, c := range g.snapshot() {
				c.ws.NetConn().Close()
			}
			return ctx.Err()
		}
	}
}

func (g *Registry) snapshot() []*conn {
	g.mu.Lock()
	defer g.mu.Unlock()
	cs := make([]*conn, 0, len(g.conns))
	for c := range g.conns {
		cs = append(cs, c)
	}
	return cs
}

func (g *Registry) refusing() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.shutdown
}

// add tracks c; false when shutting down (c is then to be closed at once).
func (g *Registry) add(c *conn) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.conns == nil {
		g.conns = map[*conn]struct{}{}
	}
	g.conns[c] = struct{}{}
	return !g.shutdown
}

func (g *Registry) remove(c *conn) {
	g.mu.Lock()
	defer g.mu.Unlock()
	delete(g.conns, c)
}
