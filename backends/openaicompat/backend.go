package openaicompat

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

// Options configure a Backend. The zero value of each field is its default.
type Options struct {
	// Name is the backend's name in the configuration, used in errors and logs.
	Name string
	// BaseURL is the OpenAI SDK base URL of the upstream, with its /v1
	// (e.g. http://127.0.0.1:8000/v1). Required.
	BaseURL string
	// APIKey is sent as "Authorization: Bearer". Empty sends no credential.
	APIKey string
	// Transport makes the upstream calls. If nil, a transport private to this backend
	// with the standard library's defaults is used.
	Transport http.RoundTripper
	// Timeout bounds the wait for the upstream's response headers; a stream may then run
	// for as long as it produces. If zero, 10 minutes.
	Timeout time.Duration
	// MaxLine caps one SSE line from the upstream. If zero, sse.DefaultMaxLine.
	MaxLine int
	// MaxResponseBytes caps a non-streaming response body. If zero, 64 MiB.
	MaxResponseBytes int64
	// ReportsCache declares that the upstream puts prompt_tokens_details.cached_tokens in
	// its usage (OpenAI, vLLM with --enable-prompt-tokens-details, SGLang, llama-server).
	// A stream's X-Maskgate-Cache header is sent before its usage arrives, so it rests on
	// this; a whole response is judged by its usage.
	ReportsCache bool
}

// Backend forwards chat completions to an OpenAI-compatible upstream.
type Backend struct {
	opt    Options
	client *http.Client
	base   string
}

var (
	_ backends.Backend     = (*Backend)(nil)
	_ backends.ModelLister = (*Backend)(nil)
	_ backends.Pinger      = (*Backend)(nil)
)

// New returns a Backend for o, or an error naming what is missing.
func New(o Options) (*Backend, error) {
	if o.BaseURL == "" {
		return nil, fmt.Errorf("backend %q: url is required", o.Name)
	}
	if !strings.HasPrefix(o.BaseURL, "http://") && !strings.HasPrefix(o.BaseURL, "https://") {
		return nil, fmt.Errorf("backend %q: url %q must start with http:// or https://", o.Name, o.BaseURL)
	}
	if o.Transport == nil {
		o.Transport = http.DefaultTransport.(*http.Transport).Clone()
	}
	if o.Timeout == 0 {
		o.Timeout = 10 * time.Minute
	}
	if o.MaxResponseBytes == 0 {
		o.MaxResponseBytes = 64 << 20
	}
	return &Backend{
		opt:    o,
		client: &http.Client{Transport: o.Transport},
		base:   strings.TrimRight(o.BaseURL, "/"),
	}, nil
}

// errHeaderTimeout is the cancellation cause when the upstream is too slow to answer.
var errHeaderTimeout = errors.New("upstream response headers timed out")

// ChatCompletion sends req to POST {base}/chat/completions.
func (b *Backend) ChatCompletion(parent context.Context, req *backends.Request) (*backends.Response, error) {
	ctx, cancel := context.WithCancelCause(parent)
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, b.base+"/chat/completions", bytes.NewReader(req.Body))
	if err != nil {
		cancel(nil)
		return nil, fmt.Errorf("backend %q: build request: %w", b.opt.Name, err)
	}
	hreq.Header.Set("Content-Type", "application/json")
	if req.Stream {
		hreq.Header.Set("Accept", "text/event-stream")
	} else {
		hreq.Header.Set("Accept", "application/json")
	}
	b.authorize(hreq)

	timer := time.AfterFunc(b.opt.Timeout, func() { cancel(errHeaderTimeout) })
	resp, err := b.client.Do(hreq)
	timer.Stop()
	if err != nil {
		cause := context.Cause(ctx)
		cancel(nil)
		return nil, b.transportError(parent, cause, err)
	}
	if resp.StatusCode >= 300 {
		defer cancel(nil)
		defer resp.Body.Close()
		return nil, upstreamError(b.opt.Name, resp)
	}
	out := &backends.Response{Header: passHeaders(resp.Header)}
	if req.Stream && isEventStream(resp.Header.Get("Content-Type")) {
		out.Stream = newStream(resp.Body, cancel, b.opt.MaxLine, b.opt.Name)
		if b.opt.ReportsCache {
			out.Cache = backends.CacheReported
		}
		return out, nil
	}
	defer cancel(nil)
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, b.opt.MaxResponseBytes+1))
	if err != nil {
		return nil, b.transportError(parent, context.Cause(ctx), err)
	}
	if int64(len(body)) > b.opt.MaxResponseBytes {
		return nil, &backends.Error{Status: http.StatusBadGateway, Type: "upstream_error", Code: "upstream_response_too_large",
			Message: fmt.Sprintf("backend %q sent a response over %d bytes", b.opt.Name, b.opt.MaxResponseBytes)}
	}
	if req.Stream {
		return nil, &backends.Error{Status: http.StatusBadGateway, Type: "upstream_error", Code: "upstream_not_streaming",
			Message: fmt.Sprintf("backend %q answered a streaming request with %q instead of an event stream", b.opt.Name, resp.Header.Get("Content-Type"))}
	}
	out.Body = body
	return out, nil
}

func (b *Backend) authorize(r *http.Request) {
	if b.opt.APIKey != "" {
		r.Header.Set("Authorization", "Bearer "+b.opt.APIKey)
	}
}

// transportError classifies a failed exchange: the client went away (parent, the
// caller's context, is done: its error is returned and the gateway reports 499), the
// upstream was too slow (504), or it could not be reached (502). cause is the
// cancellation cause of the exchange's own context.
func (b *Backend) transportError(ctx context.Context, cause, err error) error {
	if errors.Is(cause, errHeaderTimeout) {
		return backends.Timeout(b.opt.Name, err)
	}
	if ctx.Err() != nil {
		return fmt.Errorf("backend %q: %w", b.opt.Name, context.Cause(ctx))
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return backends.Timeout(b.opt.Name, err)
	}
	return backends.Unreachable(b.opt.Name, err)
}

// upstreamError turns an upstream's error response into the error the client sees: a
// 4xx keeps its status and message; 429 and 503 keep their status so clients retry;
// other 5xx become 502 naming the backend.
func upstreamError(name string, resp *http.Response) error {
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	d, ok := oai.ParseErrorBody(body)
	msg := d.Message
	if !ok {
		msg = strings.TrimSpace(string(body))
		if len(msg) > 512 {
			msg = msg[:512] + "…"
		}
		if msg == "" {
			msg = http.StatusText(resp.StatusCode)
		}
	}
	e := &backends.Error{Status: resp.StatusCode, Message: msg, Type: d.Type,
		Err: fmt.Errorf("backend %q answered %s", name, resp.Status)}
	if d.Param != nil {
		e.Param = *d.Param
	}
	if d.Code != nil {
		e.Code = *d.Code
	}
	switch {
	case resp.StatusCode < 500, resp.StatusCode == http.StatusTooManyRequests,
		resp.StatusCode == http.StatusServiceUnavailable:
		if ra := resp.Header.Get("Retry-After"); ra != "" {
			e.RetryAfter = ra
		}
	default:
		e.Status = http.StatusBadGateway
		e.Type = "upstream_error"
		e.Message = fmt.Sprintf("backend %q failed (%s): %s", name, resp.Status, msg)
	}
	return e
}

func isEventStream(ct string) bool {
	return strings.HasPrefix(strings.ToLower(strings.TrimSpace(ct)), "text/event-stream")
}

// passHeaders picks the upstream headers a client may want to see.
func passHeaders(h http.Header) http.Header {
	out := http.Header{}
	for _, k := range []string{"X-Request-Id", "Openai-Processing-Ms"} {
		if v := h.Get(k); v != "" {
			out.Set(k, v)
		}
	}
	return out
}
