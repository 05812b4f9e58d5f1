package llamacpp

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/maskgate/maskgate/backends"
	"github.com/maskgate/maskgate/backends/oai"
)

// errHeaderTimeout is the cancellation cause when the upstream is too slow to answer.
var errHeaderTimeout = errors.New("upstream response headers timed out")

// open sends one request and returns the response once its headers are in and its status
// is a success; the caller must close the body and then call cancel. A nil body sends GET.
func (b *Backend) open(parent context.Context, path string, body []byte, stream bool) (*http.Response, context.CancelCauseFunc, error) {
	ctx, cancel := context.WithCancelCause(parent)
	method, rd := http.MethodGet, io.Reader(nil)
	if body != nil {
		method, rd = http.MethodPost, bytes.NewReader(body)
	}
	hreq, err := http.NewRequestWithContext(ctx, method, b.base+path, rd)
	if err != nil {
		cancel(nil)
		return nil, nil, fmt.Errorf("backend %q: build request: %w", b.opt.Name, err)
	}
	if body != nil {
		hreq.Header.Set("Content-Type", "application/json")
	}
	if stream {
		hreq.Header.Set("Accept", "text/event-stream")
	} else {
		hreq.Header.Set("Accept", "application/json")
	}
	timer := time.AfterFunc(b.opt.Timeout, func() { cancel(errHeaderTimeout) })
	resp, err := b.client.Do(hreq)
	fired := !timer.Stop()
	if err == nil && fired { // headers came as the timer fired: the body is already cancelled
		resp.Body.Close()
		err = errHeaderTimeout
	}
	if err != nil {
		cause := context.Cause(ctx)
		cancel(nil)
		return nil, nil, b.transportError(parent, cause, err)
	}
	if resp.StatusCode >= 300 {
		defer cancel(nil)
		defer resp.Body.Close()
		return nil, nil, upstreamError(b.opt.Name, path, resp)
	}
	return resp, cancel, nil
}

// post sends a JSON body and reads the whole answer.
func (b *Backend) post(ctx context.Context, path string, body []byte, stream bool) ([]byte, error) {
	resp, cancel, err := b.open(ctx, path, body, stream)
	if err != nil {
		return nil, err
	}
	defer cancel(nil)
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, b.opt.MaxResponseBytes+1))
	if err != nil {
		return nil, b.transportError(ctx, context.Cause(ctx), err)
	}
	if int64(len(raw)) > b.opt.MaxResponseBytes {
		return nil, &backends.Error{Status: http.StatusBadGateway, Type: "upstream_error", Code: "upstream_response_too_large",
			Message: fmt.Sprintf("backend %q sent a response over %d bytes", b.opt.Name, b.opt.MaxResponseBytes)}
	}
	return raw, nil
}

func (b *Backend) get(ctx context.Context, path string) ([]byte, error) {
	return b.post(ctx, path, nil, false)
}

// transportError classifies a failed exchange: the client went away (parent, the
// caller's context, is done: its error is returned and the gateway reports 499), the
// upstream was too slow (504), or it could not be reached (502). cause is the
// cancellation cause of the exchange's own context.
func (b *Backend) transportError(parent context.Context, cause, err error) error {
	if errors.Is(cause, errHeaderTimeout) || errors.Is(err, errHeaderTimeout) {
		return backends.Timeout(b.opt.Name, err)
	}
	if parent.Err() != nil {
		return fmt.Errorf("backend %q: %w", b.opt.Name, context.Cause(parent))
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return backends.Timeout(b.opt.Name, err)
	}
	return backends.Unreachable(b.opt.Name, err)
}

// upstreamError turns llama-server's error answer into the error the client sees: a 4xx
// keeps its status and message (llama-server sends the OpenAI envelope with a numeric
// code); 429 and 503 (a model still loading) keep their status so clients retry; other
// 5xx become 502 naming the backend; a 404 means the url is not a llama-server root.
func upstreamError(name, path string, resp *http.Response) error {
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	d, ok := oai.ParseErrorBody(body)
	msg := d.Message
	if !ok {
		msg = strings.TrimSpace(string(body))
		if msg == "" {
			msg = http.StatusText(resp.StatusCode)
		}
	}
	msg = clip(msg)
	e := &backends.Error{Status: resp.StatusCode, Message: msg, Type: d.Type,
		Err: fmt.Errorf("backend %q answered %s to %s", name, resp.Status, path)}
	if d.Param != nil {
		e.Param = *d.Param
	}
	if d.Code != nil && !isNumber(*d.Code) { // llama-server repeats the status as code
		e.Code = *d.Code
	}
	switch {
	case resp.StatusCode == http.StatusNotFound:
		e.Status, e.Type, e.Code = http.StatusBadGateway, "upstream_error", "upstream_not_found"
		e.Message = fmt.Sprintf("backend %q answered 404 to %s (%s); check that its url is the llama-server root", name, path, msg)
	case resp.StatusCode < 500, resp.StatusCode == http.StatusTooManyRequests,
		resp.StatusCode == http.StatusServiceUnavailable:
		e.RetryAfter = resp.Header.Get("Retry-After")
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

// clip keeps an upstream message short enough to show.
func clip(s string) string {
	const max = 512
	if len(s) <= max {
		return s
	}
	return s[:max] + "…"
}
