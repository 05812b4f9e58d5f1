package wsock

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/gorilla/websocket"
)

// Options tune one connection. The zero value of every field means its default.
type Options struct {
	// MaxMessageBytes is the largest client message, counted after decompression
	// (default 16 MiB). A larger one closes the connection with 1009 and a reason.
	MaxMessageBytes int64
	// SendQueue is how many events may wait for the writer (default 1024).
	SendQueue int
	// SendQueueBytes is how many bytes of events may wait for the writer (default 8 MiB).
	SendQueueBytes int64
	// SlowReaderWait is how long Send waits for room in a full queue before the client
	// is cut with 1008 "slow reader" (default WriteTimeout/2, so that the cut comes
	// while the writer's current write may still finish and the close frame be sent).
	SlowReaderWait time.Duration
	// PingInterval is the time between the server's pings (default 20s); a client that
	// sends nothing, pongs included, for twice that is dropped. Negative: no pings and
	// no read deadline.
	PingInterval time.Duration
	// WriteTimeout bounds each frame's write (default 10s).
	WriteTimeout time.Duration
	// IdleTimeout closes the connection (1000 "idle timeout") after this long without a
	// client message and with no handler running or queued (default 10 min). Pongs do
	// not count as activity. Negative: never.
	IdleTimeout time.Duration
	// DisableCompression refuses permessage-deflate; by default it is negotiated when the
	// client offers it (gorilla: no context takeover) and used for events of 512 bytes
	// or more.
	DisableCompression bool
	// CheckOrigin decides whether to accept the request's Origin. Default: accept
	// requests without Origin (SDKs, CLIs) and browser origins whose host equals the
	// request's Host.
	CheckOrigin func(*http.Request) bool
	// MaxStreams is how many lanes (distinct stream_id values, the unnamed lane counted)
	// run handlers at once on one connection (default 8).
	MaxStreams int
	// MaxPending is how many received messages may wait for their lane (default 64).
	MaxPending int
	// MaxPendingBytes is how many bytes of received messages may wait for their lane
	// (default 2×MaxMessageBytes; one message is always let in when none waits).
	MaxPendingBytes int64
}

const (
	defaultMaxMessage   = 16 << 20
	defaultSendQueue    = 1024
	defaultSendBytes    = 8 << 20
	defaultPingInterval = 20 * time.Second
	defaultWriteTimeout = 10 * time.Second
	defaultIdleTimeout  = 10 * time.Minute
	defaultMaxStreams   = 8
	defaultMaxPending   = 64
	// compressMin is the smallest event worth deflating: without context takeover a
	// short delta only grows.
	compressMin = 512
	// writeBatch is how many events the writer sends before it looks at its timers.
	writeBatch = 32
	// maxCloseGrace bounds the wait for the client's close frame after ours.
	maxCloseGrace = 2 * time.Second
)

func (o Options) withDefaults() Options {
	if o.MaxMessageBytes <= 0 {
		o.MaxMessageBytes = defaultMaxMessage
	}
	if o.SendQueue <= 0 {
		o.SendQueue = defaultSendQueue
	}
	if o.SendQueueBytes <= 0 {
		o.SendQueueBytes = defaultSendBytes
	}
	if o.PingInterval == 0 {
		o.PingInterval = defaultPingInterval
	}
	if o.WriteTimeout <= 0 {
		o.WriteTimeout = defaultWriteTimeout
	}
	if o.SlowReaderWait <= 0 {
		o.SlowReaderWait = o.WriteTimeout / 2
	}
	if o.IdleTimeout == 0 {
		o.IdleTimeout = defaultIdleTimeout
	}
	if o.MaxStreams <= 0 {
		o.MaxStreams = defaultMaxStreams
	}
	if o.MaxPending <= 0 {
		o.MaxPending = defaultMaxPending
	}
	if o.MaxPendingBytes <= 0 {
		o.MaxPendingBytes = 2 * o.MaxMessageBytes
	}
	return o
}

// Handler runs one client message, a JSON object (the transport has checked that much,
// and nothing of its "type": the handler answers an unknown type itself); msg is the
// handler's to keep.
// Messages of one lane — the same stream_id, or none — run one at a time, in the order
// they arrived; different lanes run concurrently, at most Options.MaxStreams at once.
// The handler sends its events through s and returns when its response is done. ctx is
// cancelled when the connection closes: the handler should then stop its upstream work
// and return.
type Handler func(ctx context.Context, msg []byte, s *Session)

// IsUpgrade reports whether r asks for a WebSocket upgrade.
func IsUpgrade(r *http.Request) bool {
	return r.Method == http.MethodGet && websocket.IsWebSocketUpgrade(r)
}

// CloseError is what Serve returns when a connection did not end normally: Code and
// Reason are the close frame sent or received (1006 when none could be), ByPeer tells
// whether the client closed, Err is the cause.
type CloseError struct {
	Code   int
	Reason string
	ByPeer bool
	Err    error
}

func (e *CloseError) Error() string {
	who := "server"
	if e.ByPeer {
		who = "client"
	}
	return fmt.Sprintf("wsock: closed by %s, code %d %q: %v", who, e.Code, e.Reason, e.Err)
}

func (e *CloseError) Unwrap() error { return e.Err }

// Serve upgrades r (already authenticated by the caller) and runs the connection until
// it closes: it reads client messages and runs handle on them, writes their events from
// one writer goroutine, pings the client and enforces the limits of opt. It returns
// after the connection is closed, every handler it started has returned and its
// goroutines have ended: nil when the connection ended normally (a client close with
// 1000, 1001 or no code; the server's idle timeout or shutdown), a *CloseError
// otherwise, or the upgrade's error (gorilla has then answered with an HTTP error).
func Serve(w http.ResponseWriter, r *http.Request, opt Options, handle Handler) error {
	return serve(w, r, opt, handle, nil)
}

func serve(w http.ResponseWriter, r *http.Request, opt Options, handle Handler, reg *Registry) error {
	opt = opt.withDefaults()
	if reg != nil && reg.refusing() {
		w.Header().Set("Connection", "close")
		http.Error(w, "server shutting down", http.StatusServiceUnavailable)
		return ErrShuttingDown
	}
	up := websocket.Upgrader{
		HandshakeTimeout:  opt.WriteTimeout,
		EnableCompression: !opt.DisableCompression,
		CheckOrigin:       opt.CheckOrigin,
	}
	ws, err := up.Upgrade(w, r, nil)
	if err != nil {
		return err
	}
	c := newConn(r.Context(), ws, opt, handle)
	if reg != nil && !reg.add(c) {
		c.closeWith(closeSpec{code: websocket.CloseGoingAway, reason: shutdownReason, frame: true})
	}
	stop := context.AfterFunc(r.Context(), func() {
		c.closeWith(closeSpec{code: websocket.CloseGoingAway, reason: shutdownReason, frame: true})
	})
	go c.writeLoop()
	c.readLoop()
	stop()
	c.lanes.Wait()
	<-c.writerDone
	ws.Close()
	c.cancel(nil)
	if reg != nil {
		reg.remove(c)
	}
	close(c.done)
	return c.result()
}
