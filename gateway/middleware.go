package gateway

import (
	"bufio"
	"context"
	"crypto/rand"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"runtime/debug"
	"strings"
	"time"
)

// HeaderRequestID carries the request's id: the client's own when it sent a usable one,
// else one the gateway made. Every answer has it, every log line of the request names
// it, and an internal error's message quotes it. An upstream's own request id is passed
// on as X-Upstream-Request-Id.
const (
	HeaderRequestID         = "X-Request-Id"
	HeaderUpstreamRequestID = "X-Upstream-Request-Id"
)

type requestIDKey struct{}

// requestID returns the id of the request ctx belongs to, or "".
func requestID(ctx context.Context) string {
	id, _ := ctx.Value(requestIDKey{}).(string)
	return id
}

// newRequestID keeps a client's id when it is short and plain (it is logged and echoed),
// else makes one.
func newRequestID(client string) string {
	if n := len(client); n > 0 && n <= 128 && strings.IndexFunc(client, func(c rune) bool {
		return !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.ContainsRune("-_.:", c))
	}) < 0 {
		return client
	}
	return "req_" + rand.Text()
}

// ServeHTTP serves one request under the gateway's guards: a request id, the body's
// time limit, a deadline on every write to the client (writedeadline.go), the
// cancellation of Stop, and the recovery of a panic as a 500 (or, once
// a stream has begun, an error event) naming the request id.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	id := newRequestID(r.Header.Get(HeaderRequestID))
	w.Header().Set(HeaderRequestID, id)
	if s.stopping.Err() != nil {
		writeErrorAs(w, s.log, ErrShuttingDown, envelopeFor(r))
		return
	}
	ctx, cancel := context.WithCancelCause(context.WithValue(r.Context(), requestIDKey{}, id))
	defer cancel(nil)
	stop := context.AfterFunc(s.stopping, func() { cancel(ErrShuttingDown) })
	defer stop()
	r = r.WithContext(ctx)
	if r.Body != nil && r.Body != http.NoBody {
		r.Body = s.paceBody(w, r.Body)
	}
	dw := newDeadlineWriter(w, s.opt.WriteTimeout, s.slowReader(r, cancel))
	defer dw.done()
	tw := &trackingWriter{ResponseWriter: dw}
	defer s.recoverPanic(tw, r)
	s.mux.ServeHTTP(tw, r)
}

// recoverPanic turns a handler's panic into a 500 in the envelope, or an error event
// when a stream has begun, counted and logged with the stack under the request id. A
// whole answer already under way cannot be mended: the connection is aborted.
func (s *Server) recoverPanic(w *trackingWriter, r *http.Request) {
	v := recover()
	if v == nil {
		return
	}
	if v == http.ErrAbortHandler {
		panic(v)
	}
	s.metrics.panics.Inc()
	id := requestID(r.Context())
	s.log.Error("panic serving a request", "request_id", id, "path", r.URL.Path, "panic", v, "stack", string(debug.Stack()))
	ae := &apiError{Status: http.StatusInternalServerError, Type: "server_error"}
	switch {
	case !w.wrote:
		writeErrorAs(w, s.log, ae, envelopeFor(r))
	case strings.HasPrefix(w.Header().Get("Content-Type"), "text/event-stream"):
		_, _ = w.Write(sseData)
		_, _ = w.Write(envelope(forClient(ae, id)))
		_, _ = w.Write(sseEnd)
	default:
		panic(http.ErrAbortHandler)
	}
}

// trackingWriter records whether the response has begun.
type trackingWriter struct {
	http.ResponseWriter
	wrote bool
}

func (t *trackingWriter) WriteHeader(code int) {
	if code >= 200 {
		t.wrote = true
	}
	t.ResponseWriter.WriteHeader(code)
}

func (t *trackingWriter) Write(p []byte) (int, error) {
	t.wrote = true
	return t.ResponseWriter.Write(p)
}

// Hijack hands the connection to a WebSocket (gorilla/websocket asks the writer itself).
func (t *trackingWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	t.wrote = true
	return http.NewResponseController(t.ResponseWriter).Hijack()
}

// Unwrap lets http.ResponseController reach the connection (Flush, deadlines).
func (t *trackingWriter) Unwrap() http.ResponseWriter { return t.ResponseWriter }

// errBodyTooSlow is a request body that missed its deadline (408).
var errBodyTooSlow = errors.New("request body arrived too slowly")

// paceBody puts a read deadline on the body: BodyTimeout from now, pushed back by
// each byte at MinBodyRate, so a body must arrive within BodyTimeout + size/MinBodyRate.
// The deadline is lifted when the body ends, since the connection's later reads only
// watch for the client going away while the answer streams.
func (s *Server) paceBody(w http.ResponseWriter, body io.ReadCloser) io.ReadCloser {
	rc := http.NewResponseController(w)
	p := &pacedBody{ReadCloser: body, rc: rc, start: s.now(), base: s.opt.BodyTimeout, rate: s.opt.MinBodyRate}
	if rc.SetReadDeadline(p.start.Add(p.base)) != nil {
		return body // a writer without deadlines (tests' recorders): nothing to pace
	}
	return p
}

type pacedBody struct {
	io.ReadCloser
	rc    *http.ResponseController
	start time.Time
	base  time.Duration
	rate  int64
	n     int64
	ended bool
}

func (p *pacedBody) Read(b []byte) (int, error) {
	if p.ended {
		return p.ReadCloser.Read(b)
	}
	n, err := p.ReadCloser.Read(b)
	p.n += int64(n)
	switch {
	case err == nil:
		if n > 0 {
			allowed := p.base + time.Duration(float64(p.n)/float64(p.rate)*float64(time.Second))
			_ = p.rc.SetReadDeadline(p.start.Add(allowed))
		}
	case errors.Is(err, os.ErrDeadlineExceeded):
		p.ended = true
		return n, errBodyTooSlow
	default: // the end, or another failure: later reads are the server's, not ours
		p.ended = true
		_ = p.rc.SetReadDeadline(time.Time{})
	}
	return n, err
}
