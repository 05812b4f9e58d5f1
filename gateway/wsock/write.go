package wsock

import (
	"fmt"
	"strings"
	"time"

	"github.com/gorilla/websocket"
)

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
