package wsock

import (
	"encoding/json"
	"errors"

	"github.com/maskgate/maskgate/gateway/door"
)

var (
	// ErrClosed is returned by Send once the connection is closing.
	ErrClosed = errors.New("wsock: connection closed")
	// ErrSlowReader is returned by Send when the client read too slowly: the send queue
	// stayed full for Options.SlowReaderWait (or a write timed out) and the connection
	// was cut with close code 1008 "slow reader".
	ErrSlowReader = errors.New("wsock: client reads too slowly")
)

// Session is a Handler's side of one connection: where it sends its events and keeps
// per-connection state. A handler running on a stream_id lane gets a Session that adds
// that "stream_id" to every event it sends; all of a connection's Sessions share its
// queue and its Store/Load slot. Its methods are safe for concurrent use.
type Session struct {
	c        *conn
	streamID string
	// laneKey is `"stream_id":"…"`, added to every event; nil on the unnamed lane.
	laneKey []byte
}

var _ door.Events = (*Session)(nil)

func newSession(c *conn, streamID string) *Session {
	s := &Session{c: c, streamID: streamID}
	if streamID != "" {
		id, _ := json.Marshal(streamID)
		s.laneKey = append([]byte(`"stream_id":`), id...)
	}
	return s
}

// StreamID is the stream_id of the lane this Session sends on, "" for the unnamed lane.
func (s *Session) StreamID() string { return s.streamID }

// Send queues one event, a JSON object, for the client; it copies event, which the
// caller may reuse at once. On a stream_id lane it adds "stream_id" as the object's
// first member (so event must not carry one). Events sent by one goroutine reach the
// client in order. When the queue is full Send waits up to Options.SlowReaderWait for
// room, then closes the connection (1008 "slow reader") and returns ErrSlowReader; once
// the connection is closing it returns ErrClosed (or ErrSlowReader if that was why).
func (s *Session) Send(event []byte) error {
	c := s.c
	if c.isClosing() {
		return c.sendErr
	}
	b := getBuf()
	*b = appendEvent((*b)[:0], event, s.laneKey)
	switch err := c.q.push(b, c.opt.SlowReaderWait); err {
	case nil:
		return nil
	case errQueueFull:
		putBuf(b)
		c.closeWith(closeSpec{code: 1008, reason: "slow reader", frame: true, err: ErrSlowReader})
		return c.sendErr
	default:
		putBuf(b)
		return c.sendErr
	}
}

// Event sends data, as Send does; name is ignored, the event's own "type" names it on a
// WebSocket. It makes *Session a door.Events.
func (s *Session) Event(name string, data []byte) error { return s.Send(data) }

// SendError sends e as a Responses WebSocket error event:
// {"type":"error","status":…,"error":{"type":…,"code":…,"message":…,"param":…}}.
// The connection stays open.
func (s *Session) SendError(e door.Error) error { return s.Send(ErrorEvent(e)) }

// Store sets the connection's state slot (shared by all its lanes), e.g. the last
// response's history for previous_response_id continuation.
func (s *Session) Store(v any) {
	s.c.slotMu.Lock()
	s.c.slot = v
	s.c.slotMu.Unlock()
}

// Load returns what Store last set on this connection, nil before.
func (s *Session) Load() any {
	s.c.slotMu.Lock()
	defer s.c.slotMu.Unlock()
	return s.c.slot
}

// Close closes the connection with code and reason (at most 123 bytes are sent), as
// the gateway may for a connection-lifetime limit: in-flight handlers are cancelled
// and queued events dropped. A code that may not be sent (1005, 1006, 1015, unassigned
// ones) becomes 1011.
func (s *Session) Close(code int, reason string) {
	if !sendableCode(code) {
		code = 1011
	}
	s.c.closeWith(closeSpec{code: code, reason: reason, frame: true, err: closeCause(code, reason)})
}

type wireError struct {
	Type   string    `json:"type"`
	Status int       `json:"status,omitempty"`
	Error  wireInner `json:"error"`
}

type wireInner struct {
	Type    string  `json:"type"`
	Code    *string `json:"code"`
	Message string  `json:"message"`
	Param   *string `json:"param"`
}

// ErrorEvent renders e as a Responses WebSocket error event (without stream_id, which
// a lane's Session adds): {"type":"error","status":400,"error":{"type":
// "invalid_request_error","code":"…","message":"…","param":null}}. An empty Code or
// Param is null; a zero Status is left out.
func ErrorEvent(e door.Error) []byte {
	w := wireError{Type: "error", Status: e.Status, Error: wireInner{Type: e.Type, Message: e.Message}}
	if w.Error.Type == "" {
		w.Error.Type = "server_error"
	}
	if e.Code != "" {
		w.Error.Code = &e.Code
	}
	if e.Param != "" {
		w.Error.Param = &e.Param
	}
	b, _ := json.Marshal(w)
	return b
}

// appendEvent appends event to dst, with key (`"stream_id":"…"`) as the first member
// of the object when key is set and event is an object.
func appendEvent(dst, event, key []byte) []byte {
	if len(key) == 0 {
		return append(dst, event...)
	}
	i := skipSpace(event, 0)
	if i >= len(event) || event[i] != '{' {
		return append(dst, event...)
	}
	dst = append(dst, event[:i+1]...)
	dst = append(dst, key...)
	if j := skipSpace(event, i+1); j < len(event) && event[j] != '}' {
		dst = append(dst, ',')
	}
	return append(dst, event[i+1:]...)
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// sendableCode reports whether code may appear in a close frame (RFC 6455 7.4).
func sendableCode(code int) bool {
	switch {
	case code >= 1000 && code <= 1003, code >= 1007 && code <= 1014, code >= 3000 && code <= 4999:
		return true
	}
	return false
}
