package wsock

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gorilla/websocket"
)

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
