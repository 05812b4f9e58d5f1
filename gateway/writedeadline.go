package gateway

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"strings"
	"time"
)

// errSlowReader is the cause of a request whose client took no bytes for WriteTimeout:
// a client gone (499), counted as maskgate_client_aborts_total{reason="slow_reader"}.
var errSlowReader = fmt.Errorf("client took no bytes within server.write_timeout: %w", errClientGone)

// Reasons of maskgate_client_aborts_total.
const abortSlowReader = "slow_reader"

// writePiece is the most one write to the connection carries under one deadline: a
// client must take this much within WriteTimeout, so a large whole answer going to a
// slow but reading client has its deadline pushed back as its bytes are taken.
const writePiece = 16 << 10

// deadlineWriter is every door's way to its client: each write and flush must complete
// within WriteTimeout, or the request is cut (its context cancelled with errSlowReader,
// which cancels the upstream request and closes the connection). It is the only place
// that sets a client write deadline, except for handlers that set their own (the
// operator's event stream) and sockets taken over by a WebSocket, whose writer sets
// its own per frame.
//
// The deadline is renewed when an eighth of WriteTimeout has passed since the last
// renewal, so a write always has at least seven eighths of it and a busy stream does
// not pay for a deadline per event.
type deadlineWriter struct {
	http.ResponseWriter
	rc      *http.ResponseController // on the connection's own writer
	timeout time.Duration
	renewed time.Time // when the deadline was last set to renewed+timeout
	// own: the handler manages its deadline (it called SetWriteDeadline), or the
	// connection was hijacked; nothing is set here any more.
	own bool
	// off: the writer has no deadlines (test recorders): writes pass as they are.
	off   bool
	cut   func() // called once, at the first write that missed its deadline
	was   bool   // cut already
	stale bool   // the last renewal failed
}

func newDeadlineWriter(w http.ResponseWriter, timeout time.Duration, cut func()) *deadlineWriter {
	d := &deadlineWriter{ResponseWriter: w, rc: http.NewResponseController(w), timeout: timeout, cut: cut}
	d.renew(true) // a keep-alive connection still has the last request's deadline
	return d
}

// renew pushes the deadline back to now+timeout when it is due (always if force).
func (d *deadlineWriter) renew(force bool) {
	if d.own || d.off {
		return
	}
	now := time.Now() // a connection deadline is the kernel's clock, not an injected one
	if !force && now.Sub(d.renewed) < d.timeout/8 {
		return
	}
	if err := d.rc.SetWriteDeadline(now.Add(d.timeout)); err != nil {
		d.off = errors.Is(err, http.ErrNotSupported)
		d.stale = true // the connection is closing: a later failure is not the deadline's
		return
	}
	d.renewed, d.stale = now, false
}

// failed records a write error: one that hit the deadline cuts the request.
func (d *deadlineWriter) failed(err error) {
	if err == nil || d.was || d.own || d.off {
		return
	}
	if errors.Is(err, os.ErrDeadlineExceeded) || !d.stale && !time.Now().Before(d.renewed.Add(d.timeout)) {
		d.was = true
		d.cut()
	}
}

func (d *deadlineWriter) Write(p []byte) (int, error) {
	if d.own || d.off {
		return d.ResponseWriter.Write(p)
	}
	n := 0
	for len(p) > 0 {
		k := min(len(p), writePiece)
		d.renew(n > 0)
		m, err := d.ResponseWriter.Write(p[:k])
		n += m
		if err != nil {
			d.failed(err)
			return n, err
		}
		p = p[k:]
	}
	return n, nil
}

func (d *deadlineWriter) WriteHeader(code int) {
	d.renew(false)
	d.ResponseWriter.WriteHeader(code)
}

// FlushError is what http.ResponseController.Flush calls.
func (d *deadlineWriter) FlushError() error {
	d.renew(false)
	err := d.rc.Flush()
	d.failed(err)
	return err
}

// Flush serves callers that ask for an http.Flusher.
func (d *deadlineWriter) Flush() { _ = d.FlushError() }

// SetWriteDeadline hands the deadline to a handler that sets its own.
func (d *deadlineWriter) SetWriteDeadline(t time.Time) error {
	d.own = true
	return d.rc.SetWriteDeadline(t)
}

// Hijack hands the connection over; its new owner sets its own deadlines, starting
// from none.
func (d *deadlineWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	c, rw, err := d.rc.Hijack()
	if err == nil {
		d.own = true
		_ = c.SetWriteDeadline(time.Time{})
	}
	return c, rw, err
}

// Unwrap lets http.ResponseController reach the connection (read deadlines).
func (d *deadlineWriter) Unwrap() http.ResponseWriter { return d.ResponseWriter }

// done gives net/http's own last writes (buffered bytes, the chunked stream's end)
// a whole WriteTimeout once the handler has returned.
func (d *deadlineWriter) done() { d.renew(true) }

// slowReader cuts the request of ctx whose client stopped reading: its upstream request
// is cancelled at once (cancel), the abort counted and logged (never the prompt).
func (s *Server) slowReader(r *http.Request, cancel context.CancelCauseFunc) func() {
	return func() {
		cancel(errSlowReader)
		s.metrics.clientAborts.WithLabelValues(abortSlowReader).Inc()
		s.log.Warn("client took no bytes for server.write_timeout: request cut",
			"request_id", requestID(r.Context()), "door", doorOfPath(r.URL.Path), "write_timeout", s.opt.WriteTimeout)
	}
}

// doorOfPath names the door of a request path for logs ("other" for the rest).
func doorOfPath(p string) string {
	switch {
	case p == "/v1/chat/completions":
		return "chat_completions"
	case p == "/v1/responses" || strings.HasPrefix(p, "/v1/responses/"):
		return "responses"
	case p == "/v1/messages" || strings.HasPrefix(p, "/v1/messages/"):
		return "messages"
	}
	return "other"
}
