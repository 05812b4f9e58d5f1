package wsock

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"runtime/debug"
	"time"

	"github.com/gorilla/websocket"

	"github.com/maskgate/maskgate/gateway/door"
)

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
