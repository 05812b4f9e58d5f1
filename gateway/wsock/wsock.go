package wsock

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"runtime/debug"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gorilla/websocket"

	"github.com/maskgate/maskgate/gateway/door"
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

// closeSpec is why and how a connection closes.
type closeSpec struct {
	code   int
	reason string
	frame  bool  // send a close frame with code and reason
	peer   bool  // the client closed first (our frame is the echo)
	err    error // the cause, nil when the close is normal
}

type conn struct {
	ws     *websocket.Conn
	opt    Options
	handle Handler
	ctx    context.Context
	cancel context.CancelCauseFunc

	q          *outQueue
	pongs      chan string
	writerDone chan struct{}
	done       chan struct{}

	closeOnce sync.Once
	closing   chan struct{}
	cs        closeSpec // set once, before closing is closed
	sendErr   error     // what Send returns once closing

	// dlMu orders read-deadline changes: while draining, the reader no longer extends
	// its deadline.
	dlMu     sync.Mutex
	draining bool

	// lanes
	lmu          sync.Mutex
	laneMap      map[string]*lane
	waiting      []*lane
	running      int
	pending      int
	pendingBytes int64
	lanes        sync.WaitGroup

	// active counts messages queued or running; lastActive is the last client message
	// or handler end, Unix nanoseconds.
	active     atomic.Int64
	lastActive atomic.Int64

	unnamed *Session

	slotMu sync.Mutex
	slot   any
}

type lane struct {
	sess *Session
	msgs [][]byte
}

func newConn(parent context.Context, ws *websocket.Conn, opt Options, handle Handler) *conn {
	c := &conn{
		ws:         ws,
		opt:        opt,
		handle:     handle,
		q:          newOutQueue(opt.SendQueue, opt.SendQueueBytes),
		pongs:      make(chan string, 1),
		writerDone: make(chan struct{}),
		done:       make(chan struct{}),
		closing:    make(chan struct{}),
		laneMap:    map[string]*lane{},
	}
	c.ctx, c.cancel = context.WithCancelCause(parent)
	c.unnamed = newSession(c, "")
	c.touch()
	// gorilla's wire-level backstop: a frame announcing more than this is refused at
	// its header (1009 without reason, from gorilla); the exact limit, with a reason,
	// is applied to the decompressed message in readLoop.
	ws.SetReadLimit(2*opt.MaxMessageBytes + 64<<10)
	ws.SetPingHandler(func(data string) error {
		select {
		case c.pongs <- data:
		default: // a pong is already due
		}
		return nil
	})
	ws.SetPongHandler(func(string) error {
		c.armRead()
		return nil
	})
	// The reader reports the close; the writer echoes it.
	ws.SetCloseHandler(func(int, string) error { return nil })
	return c
}

func (c *conn) touch() { c.lastActive.Store(time.Now().UnixNano()) }

func (c *conn) isClosing() bool {
	select {
	case <-c.closing:
		return true
	default:
		return false
	}
}

func (c *conn) closeGrace() time.Duration { return min(c.opt.WriteTimeout, maxCloseGrace) }

// closeWith starts closing the connection, once: handlers are cancelled, queued events
// dropped, the writer sends the close frame (when s.frame) and the reader waits for the
// client's, within a bound.
func (c *conn) closeWith(s closeSpec) {
	c.closeOnce.Do(func() {
		c.cs = s
		c.sendErr = ErrClosed
		if errors.Is(s.err, ErrSlowReader) {
			c.sendErr = ErrSlowReader
		}
		close(c.closing)
		cause := s.err
		if cause == nil {
			cause = ErrClosed
		}
		c.cancel(cause)
		c.q.close()
		c.dlMu.Lock()
		c.draining = true
		if s.frame && !s.peer {
			c.ws.SetReadDeadline(time.Now().Add(c.opt.WriteTimeout + c.closeGrace()))
		} else {
			c.ws.SetReadDeadline(time.Now())
		}
		c.dlMu.Unlock()
	})
}

func closeCause(code int, reason string) error {
	switch code {
	case websocket.CloseNormalClosure, websocket.CloseGoingAway, websocket.CloseNoStatusReceived:
		return nil
	}
	return &websocket.CloseError{Code: code, Text: reason}
}

func (c *conn) result() error {
	s := c.cs
	if s.err == nil {
		return nil
	}
	code := s.code
	if !s.frame {
		code = websocket.CloseAbnormalClosure
	}
	return &CloseError{Code: code, Reason: s.reason, ByPeer: s.peer, Err: s.err}
}

// armRead sets the read deadline a pong or message earns, unless closing.
func (c *conn) armRead() {
	c.dlMu.Lock()
	defer c.dlMu.Unlock()
	if c.draining || c.opt.PingInterval < 0 {
		return
	}
	c.ws.SetReadDeadline(time.Now().Add(2 * c.opt.PingInterval))
}

func (c *conn) readLoop() {
	for {
		c.armRead()
		mt, rd, err := c.ws.NextReader()
		if err != nil {
			c.readFailed(err)
			return
		}
		if c.isClosing() {
			continue // draining until the client's close frame; NextReader skips the rest
		}
		c.touch()
		if mt != websocket.TextMessage {
			c.rejectMessage(c.unnamed, door.Error{Status: http.StatusBadRequest, Type: "invalid_request_error",
				Code: "unsupported_message", Message: "binary messages are not supported: send each event as a JSON text message"})
			continue
		}
		msg, tooBig, err := readLimited(rd, c.opt.MaxMessageBytes)
		if err != nil {
			c.readFailed(err)
			return
		}
		if tooBig {
			c.closeWith(closeSpec{code: websocket.CloseMessageTooBig,
				reason: fmt.Sprintf("message too big: the limit is %d bytes", c.opt.MaxMessageBytes),
				frame:  true, err: errors.New("wsock: client message over MaxMessageBytes")})
			continue
		}
		c.dispatch(msg)
	}
}

// readLimited reads a message of at most limit bytes; tooBig reports a longer one,
// of which it read limit+1 bytes.
func readLimited(r io.Reader, limit int64) (msg []byte, tooBig bool, err error) {
	var buf bytes.Buffer
	n, err := buf.ReadFrom(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, false, err
	}
	if n > limit {
		return nil, true, nil
	}
	return buf.Bytes(), false, nil
}

func (c *conn) readFailed(err error) {
	if c.isClosing() {
		return // the drain ended: the client's close frame, EOF or the grace deadline
	}
	var ce *websocket.CloseError
	switch {
	case errors.As(err, &ce):
		c.closeWith(closeSpec{code: ce.Code, reason: ce.Text, frame: true, peer: true,
			err: closeCause(ce.Code, ce.Text)})
	case errors.Is(err, websocket.ErrReadLimit):
		// gorilla has sent 1009 itself
		c.closeWith(closeSpec{code: websocket.CloseMessageTooBig, reason: "message too big",
			err: fmt.Errorf("wsock: client frame over the read limit: %w", err)})
	case isTimeout(err):
		c.closeWith(closeSpec{code: websocket.CloseAbnormalClosure, reason: "ping timeout",
			err: fmt.Errorf("wsock: no pong or message within %v: %w", 2*c.opt.PingInterval, err)})
	default:
		c.closeWith(closeSpec{code: websocket.CloseAbnormalClosure, reason: "connection lost",
			err: fmt.Errorf("wsock: read: %w", err)})
	}
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// rejectMessage answers a message with an error event on s's lane.
func (c *conn) rejectMessage(s *Session, e door.Error) {
	s.Send(ErrorEvent(e))
}

// dispatch hands msg to its lane, starting the lane when a slot is free.
func (c *conn) dispatch(msg []byte) {
	var env struct {
		StreamID json.RawMessage `json:"stream_id"`
	}
	if err := json.Unmarshal(msg, &env); err != nil {
		e := door.Error{Status: http.StatusBadRequest, Type: "invalid_request_error", Code: "invalid_json",
			Message: "each message must be one JSON object: " + err.Error()}
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) && te.Field == "" {
			e.Message = "each message must be one JSON object, not a JSON " + te.Value
		}
		c.rejectMessage(c.unnamed, e)
		return
	}
	var id string
	if len(env.StreamID) > 0 && string(env.StreamID) != "null" {
		if err := json.Unmarshal(env.StreamID, &id); err != nil {
			c.rejectMessage(c.unnamed, door.Error{Status: http.StatusBadRequest, Type: "invalid_request_error",
				Code: "invalid_type", Param: "stream_id", Message: "stream_id must be a string"})
			return
		}
	}

	c.lmu.Lock()
	if c.isClosing() {
		c.lmu.Unlock()
		return
	}
	l := c.laneMap[id]
	if l != nil || c.running >= c.opt.MaxStreams {
		size := int64(len(msg))
		if c.pending >= c.opt.MaxPending || (c.pending > 0 && c.pendingBytes+size > c.opt.MaxPendingBytes) {
			c.lmu.Unlock()
			s := c.unnamed
			if l != nil {
				s = l.sess
			} else if id != "" {
				s = newSession(c, id)
			}
			c.rejectMessage(s, door.Error{Status: http.StatusTooManyRequests, Type: "invalid_request_error",
				Code: "too_many_pending_requests", Message: fmt.Sprintf(
					"too many requests waiting on this connection (at most %d): wait for a response to finish", c.opt.MaxPending)})
			return
		}
		c.pending++
		c.pendingBytes += size
		c.active.Add(1)
		if l == nil {
			l = &lane{sess: c.laneSession(id)}
			c.laneMap[id] = l
			c.waiting = append(c.waiting, l)
		}
		l.msgs = append(l.msgs, msg)
		c.lmu.Unlock()
		return
	}
	l = &lane{sess: c.laneSession(id)}
	c.laneMap[id] = l
	c.running++
	c.active.Add(1)
	c.lanes.Add(1)
	c.lmu.Unlock()
	go c.runLane(l, msg)
}

func (c *conn) laneSession(id string) *Session {
	if id == "" {
		return c.unnamed
	}
	return newSession(c, id)
}

// runLane runs msg and then the lane's queued messages; when the lane is empty it takes
// over the oldest waiting lane, or ends.
func (c *conn) runLane(l *lane, msg []byte) {
	defer c.lanes.Done()
	for {
		c.runOne(l.sess, msg)
		c.active.Add(-1)
		c.touch()

		c.lmu.Lock()
		if c.isClosing() {
			c.running--
			c.lmu.Unlock()
			return
		}
		if len(l.msgs) == 0 {
			delete(c.laneMap, l.sess.streamID)
			if len(c.waiting) == 0 {
				c.running--
				c.lmu.Unlock()
				return
			}
			l = c.waiting[0]
			c.waiting[0] = nil
			c.waiting = c.waiting[1:]
		}
		msg = l.msgs[0]
		l.msgs[0] = nil
		l.msgs = l.msgs[1:]
		c.pending--
		c.pendingBytes -= int64(len(msg))
		c.lmu.Unlock()
	}
}

func (c *conn) runOne(s *Session, msg []byte) {
	defer func() {
		if p := recover(); p != nil {
			c.closeWith(closeSpec{code: websocket.CloseInternalServerErr, reason: "internal server error", frame: true,
				err: fmt.Errorf("wsock: handler panic: %v\n%s", p, debug.Stack())})
		}
	}()
	c.handle(c.ctx, msg, s)
}

// writeLoop is the connection's only writer: events, pongs, pings, the close frame.
func (c *conn) writeLoop() {
	defer close(c.writerDone)
	var ping <-chan time.Time
	if c.opt.PingInterval > 0 {
		t := time.NewTicker(c.opt.PingInterval)
		defer t.Stop()
		ping = t.C
	}
	var idle <-chan time.Time
	var idleTimer *time.Timer
	if c.opt.IdleTimeout > 0 {
		idleTimer = time.NewTimer(c.opt.IdleTimeout)
		defer idleTimer.Stop()
		idle = idleTimer.C
	}
	for {
		if c.isClosing() {
			c.writeClose()
			return
		}
		select {
		case <-c.closing:
		case <-c.q.ready:
			for n := 1; ; n++ {
				b := c.q.pop()
				if b == nil {
					break
				}
				err := c.writeText(*b)
				putBuf(b)
				if err != nil {
					c.writeFailed(err)
					return
				}
				if n == writeBatch {
					// let a due ping or pong through: a client that only listens to a
					// long answer must still be pinged, or its read deadline passes
					select {
					case c.q.ready <- struct{}{}:
					default:
					}
					break
				}
			}
		case data := <-c.pongs:
			if err := c.ws.WriteControl(websocket.PongMessage, []byte(data), time.Now().Add(c.opt.WriteTimeout)); err != nil {
				c.writeFailed(err)
				return
			}
		case <-ping:
			if err := c.ws.WriteControl(websocket.PingMessage, nil, time.Now().Add(c.opt.WriteTimeout)); err != nil {
				c.writeFailed(err)
				return
			}
		case <-idle:
			wait := c.opt.IdleTimeout
			if c.active.Load() == 0 {
				since := time.Since(time.Unix(0, c.lastActive.Load()))
				if since >= c.opt.IdleTimeout {
					c.closeWith(closeSpec{code: websocket.CloseNormalClosure, reason: "idle timeout", frame: true})
					continue
				}
				wait -= since
			}
			idleTimer.Reset(wait)
		}
	}
}

func (c *conn) writeText(b []byte) error {
	c.ws.EnableWriteCompression(len(b) >= compressMin)
	c.ws.SetWriteDeadline(time.Now().Add(c.opt.WriteTimeout))
	return c.ws.WriteMessage(websocket.TextMessage, b)
}

func (c *conn) writeFailed(err error) {
	if isTimeout(err) {
		err = fmt.Errorf("%w: a write took over %v: %w", ErrSlowReader, c.opt.WriteTimeout, err)
	} else {
		err = fmt.Errorf("wsock: write: %w", err)
	}
	c.closeWith(closeSpec{code: websocket.CloseAbnormalClosure, reason: "write failed", err: err})
}

// writeClose sends the close frame, if the close wants one, and then gives the client
// a short grace to answer with its own.
func (c *conn) writeClose() {
	s := c.cs
	if !s.frame {
		return
	}
	reason := s.reason
	if len(reason) > 123 {
		reason = strings.ToValidUTF8(reason[:123], "")
	}
	c.ws.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(s.code, reason),
		time.Now().Add(c.opt.WriteTimeout))
	if !s.peer {
		c.dlMu.Lock()
		c.ws.SetReadDeadline(time.Now().Add(c.closeGrace()))
		c.dlMu.Unlock()
	}
}
