package backends

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/maskgate/maskgate/backends/oai"
)

// Upstream is the HTTP exchange every HTTP backend shares: one request, a deadline on
// the first byte of the answer and an idle limit between its bytes after that (a stream
// may run as long as it produces), and the classification of failures into what the
// client should see.
type Upstream struct {
	// Name is the backend's configured name, for errors.
	Name string
	// Base is prepended to every path (no trailing slash).
	Base string
	// Client sends the requests.
	Client *http.Client
	// Timeout bounds the wait for the response headers and the first byte of the body.
	// Zero: no limit.
	Timeout time.Duration
	// IdleTimeout bounds each wait for more of the body once it has begun. Zero: no
	// limit (backends default it to DefaultIdleTimeout).
	IdleTimeout time.Duration
	// Authorize, if set, adds credentials to each request.
	Authorize func(*http.Request)
}

// maxStaleRetries bounds the sends again after a stale kept-alive connection in one
// exchange (staleConn).
const maxStaleRetries = 4

// ErrHeaderTimeout is the cancellation cause of an exchange whose upstream was too slow
// to send its response headers and the first byte of its answer.
var ErrHeaderTimeout = errors.New("upstream did not answer in time")

// Open sends one request (GET when body is nil, else a JSON POST) and returns the
// response once its headers are in and its status is a success; its body is watched
// (Watch), so a read fails once the upstream stalls. The caller closes the body and then
// calls cancel. An error status becomes ResponseError's error.
func (u *Upstream) Open(parent context.Context, path string, body []byte, accept string) (*http.Response, context.CancelCauseFunc, error) {
	return u.OpenWith(parent, path, body, accept, nil)
}

// OpenWith is Open with extra request headers (a client's own, passed on); the
// upstream's credentials (Authorize) are set after them, so a client cannot replace them.
// A BodyTracker in parent's context (TrackBody) counts the writes of body under way.
func (u *Upstream) OpenWith(parent context.Context, path string, body []byte, accept string, header http.Header) (*http.Response, context.CancelCauseFunc, error) {
	ctx, cancel := context.WithCancelCause(parent)
	watch := StartWatch(cancel, u.Timeout, u.IdleTimeout)
	bt, _ := parent.Value(bodyTrackerKey{}).(*BodyTracker)
	if len(body) == 0 {
		bt = nil // nothing to read
	}
	var reused bool
	trace := &httptrace.ClientTrace{GotConn: func(ci httptrace.GotConnInfo) { reused = ci.Reused }}
	if bt != nil {
		trace.WroteRequest = func(httptrace.WroteRequestInfo) { bt.writes.Add(-1) }
	}
	traced := httptrace.WithClientTrace(ctx, trace)
	var resp *http.Response
	for attempt := 0; ; attempt++ {
		req, err := u.newRequest(traced, path, body, bt, accept, header)
		if err != nil {
			watch.Stop()
			cancel(nil)
			return nil, nil, err
		}
		reused = false
		resp, err = u.Client.Do(req)
		if err == nil {
			break
		}
		if attempt < maxStaleRetries && reused && ctx.Err() == nil && staleConn(err) {
			// The server's idle timeout closes its kept-alive connections together, so
			// the next idle one may be stale too: go on while the failed connection was
			// a kept-alive one (the server never saw the request), until a new one is
			// tried. The pool is the transport's, shared by every backend, so it is not
			// emptied for this one.
			continue
		}
		watch.Stop()
		cause := context.Cause(ctx)
		cancel(nil)
		return nil, nil, u.TransportError(parent, cause, err)
	}
	resp.Body = watch.Body(ctx, resp.Body)
	if resp.StatusCode >= 300 { // its body is read under the watch too
		defer cancel(nil)
		defer resp.Body.Close()
		return nil, nil, ResponseError(u.Name, path, resp)
	}
	return resp, cancel, nil
}

// newRequest builds one attempt of an exchange: a fresh reader over body (counted by bt,
// and so is each the transport asks for to send it again), the client's headers, then
// the upstream's credentials.
func (u *Upstream) newRequest(ctx context.Context, path string, body []byte, bt *BodyTracker, accept string, header http.Header) (*http.Request, error) {
	method, rd := http.MethodGet, io.Reader(nil)
	if body != nil {
		method, rd = http.MethodPost, bytes.NewReader(body) // a reader net/http knows: headers and body in one write
	}
	req, err := http.NewRequestWithContext(ctx, method, u.Base+path, rd)
	if err != nil {
		return nil, fmt.Errorf("backend %q: build request: %w", u.Name, err)
	}
	if bt != nil {
		bt.writes.Add(1)
		req.GetBody = func() (io.ReadCloser, error) {
			bt.writes.Add(1)
			return io.NopCloser(bytes.NewReader(body)), nil
		}
	}
	for k, vs := range header {
		req.Header[k] = append([]string(nil), vs...)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", accept)
	if u.Authorize != nil {
		u.Authorize(req)
	}
	return req, nil
}

// A BodyTracker counts the request-body writes under way in the upstream exchanges made
// under its context (TrackBody). net/http may still be writing a request's body after
// RoundTrip has returned (an upstream that answered before it read it all; see
// http.RoundTripper), and a caller that recycles the buffer the body is in must wait for
// that: Idle says no write is under way, nor can one start. A write counts from the
// reader made for it until net/http reports it written (httptrace's WroteRequest); one
// that never began (no connection) counts for ever, so Idle errs towards false, never
// towards true. A transport that reports no writes (not net/http's) leaves it false.
type BodyTracker struct {
	writes atomic.Int32
}

type bodyTrackerKey struct{}

// TrackBody returns ctx with a new BodyTracker for the exchanges made under it.
func TrackBody(ctx context.Context) (context.Context, *BodyTracker) {
	bt := new(BodyTracker)
	return context.WithValue(ctx, bodyTrackerKey{}, bt), bt
}

// Idle reports whether no write of a tracked body is under way.
func (bt *BodyTracker) Idle() bool { return bt.writes.Load() == 0 }

// staleConn says whether err is what a kept-alive connection the upstream had already
// closed gives: the connection ends (EOF, reset, broken pipe, closed under the writer)
// before any answer. A
// server closes an idle connection on its own schedule (llama-server's cpp-httplib after
// 5 s, "Keep-Alive: timeout=5"), and a request sent on it in that instant never reached
// the server's handler. net/http retries such a request itself only when its method is
// idempotent; a POST to an engine is safe to send again, because nothing was answered,
// as long as each failure was on a kept-alive connection (they went idle together, so
// several may be stale, up to maxStaleRetries). A connection that was new is never
// retried: its failure is the upstream's.
func staleConn(err error) bool {
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return false
	}
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) ||
		// The transport read the server's close and closed the connection under the
		// body's writer: "use of closed network connection".
		errors.Is(err, net.ErrClosed) ||
		strings.Contains(err.Error(), "server closed idle connection") // net/http's errServerClosedIdle, unexported
}

// TransportError classifies a request that got no answer: the client went away (parent,
// the caller's context, is done: its error is returned and the gateway reports 499), the
// upstream was too slow (504), or it could not be reached (502). cause is the
// cancellation cause of the exchange's own context.
func (u *Upstream) TransportError(parent context.Context, cause, err error) error {
	if errors.Is(cause, ErrHeaderTimeout) || errors.Is(err, ErrHeaderTimeout) {
		return Timeout(u.Name, err)
	}
	if parent.Err() != nil {
		return fmt.Errorf("backend %q: %w", u.Name, context.Cause(parent))
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return Timeout(u.Name, err)
	}
	return Unreachable(u.Name, err)
}

// ResponseError turns an upstream's error answer into the error the client sees: a 4xx
// keeps its status and message (Redact'ed, with the credentials of resp.Request); 429 and 503 keep their status (and Retry-After) so
// clients retry; 501 (llama-server asked for an endpoint it was not started for:
// embeddings without --embeddings) is a 404 unsupported_endpoint with its message, no
// failure of the upstream and the same on every replica; other 5xx become 502 naming the
// backend. A numeric code (llama-server repeats the status there) is dropped.
func ResponseError(name, path string, resp *http.Response) *Error {
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	d, ok := oai.ParseErrorBody(body)
	msg := d.Message
	if !ok {
		msg = strings.TrimSpace(string(body))
		if msg == "" {
			msg = http.StatusText(resp.StatusCode)
		}
	}
	var sent []string // the credentials the gateway sent, which the answer may echo
	if resp.Request != nil {
		sent = Credentials(resp.Request.Header)
	}
	msg = Redact(msg, sent...)
	if len(msg) > 512 {
		msg = msg[:512] + "…"
	}
	e := &Error{Status: resp.StatusCode, Message: msg, Type: d.Type,
		Err: fmt.Errorf("backend %q answered %s to %s", name, resp.Status, path)}
	if d.Param != nil {
		e.Param = *d.Param
	}
	if d.Code != nil && !isNumber(*d.Code) {
		e.Code = *d.Code
	}
	if o, over := oai.ParseOverflow(msg, body); over {
		return ContextOverflow(msg, o, e.Err)
	}
	switch {
	case resp.StatusCode < 500, resp.StatusCode == http.StatusTooManyRequests,
		resp.StatusCode == http.StatusServiceUnavailable:
		e.RetryAfter = resp.Header.Get("Retry-After")
	case resp.StatusCode == http.StatusNotImplemented:
		e.Status, e.Type, e.Code = http.StatusNotFound, "invalid_request_error", "unsupported_endpoint"
		e.Message = fmt.Sprintf("backend %q cannot serve this request: %s", name, msg)
	default:
		e.Status, e.Type, e.Code = http.StatusBadGateway, "upstream_error", ""
		e.Message = fmt.Sprintf("backend %q failed (%s): %s", name, resp.Status, msg)
	}
	return e
}

func isNumber(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}
