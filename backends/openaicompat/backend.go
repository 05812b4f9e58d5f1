package openaicompat

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/maskgate/maskgate/backends"
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
	// Timeout bounds the wait for the upstream's response headers and the first byte of
	// its answer; a stream may then run for as long as it produces. If zero, 10 minutes.
	Timeout time.Duration
	// IdleTimeout bounds each pause of an answer once it has begun: between the bytes of
	// a whole answer, between the events of a stream. If zero, backends.DefaultIdleTimeout.
	IdleTimeout time.Duration
	// MaxEventBytes caps one SSE event from the upstream (its lines together). If zero,
	// sse.DefaultMaxEvent.
	MaxEventBytes int
	// MaxResponseBytes caps a non-streaming response body. If zero, 64 MiB.
	MaxResponseBytes int64
	// ReportsCache declares that the upstream puts prompt_tokens_details.cached_tokens in
	// its usage (OpenAI, vLLM with --enable-prompt-tokens-details, SGLang, llama-server).
	// A stream's X-Maskgate-Cache header is sent before its usage arrives, so it rests on
	// this; a whole response is judged by its usage.
	ReportsCache bool
	// Format is the model's tool-call wire format (hermes, llama3, mistral, harmony,
	// deepseek) for the backends that constrain on top of this one (vLLM, SGLang); the
	// pass-through itself ignores it. If empty, hermes.
	Format string
}

// Backend forwards chat completions to an OpenAI-compatible upstream.
type Backend struct {
	opt Options
	up  backends.Upstream
}

var (
	_ backends.Backend     = (*Backend)(nil)
	_ backends.ModelLister = (*Backend)(nil)
	_ backends.Pinger      = (*Backend)(nil)

	_ backends.EndpointPasser = (*Backend)(nil)
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
	if o.IdleTimeout == 0 {
		o.IdleTimeout = backends.DefaultIdleTimeout
	}
	if o.MaxResponseBytes == 0 {
		o.MaxResponseBytes = 64 << 20
	}
	b := &Backend{opt: o}
	b.up = backends.Upstream{Name: o.Name, Base: strings.TrimRight(o.BaseURL, "/"),
		Client: &http.Client{Transport: o.Transport}, Timeout: o.Timeout, IdleTimeout: o.IdleTimeout, Authorize: b.authorize}
	return b, nil
}

// ChatCompletion sends req to POST {base}/chat/completions.
func (b *Backend) ChatCompletion(parent context.Context, req *backends.Request) (*backends.Response, error) {
	return b.send(parent, "/chat/completions", req)
}

// PassesEndpoint: an OpenAI-compatible server is taken to serve every endpoint; one
// that does not answers 404 itself, and the client sees its message.
func (b *Backend) PassesEndpoint(endpoint string) bool { return Serves(endpoint) }

// Serves reports whether endpoint is one of the endpoints an OpenAI-compatible server
// may serve besides chat completions (backends.EndpointEmbeddings, ...).
func Serves(endpoint string) bool {
	switch endpoint {
	case backends.EndpointEmbeddings, backends.EndpointCompletions, backends.EndpointRerank, backends.EndpointScore:
		return true
	}
	return false
}

// PassEndpoint sends req to POST {base}/{endpoint}, as ChatCompletion sends a chat
// completion: its bytes as they are, the answer whole or as its events' data.
func (b *Backend) PassEndpoint(ctx context.Context, endpoint string, req *backends.Request) (*backends.Response, error) {
	if !Serves(endpoint) {
		return nil, fmt.Errorf("backend %q: no endpoint %q", b.opt.Name, endpoint)
	}
	return b.send(ctx, "/"+endpoint, req)
}

// send posts req to path and reads the answer whole, or as a stream for req.Stream.
func (b *Backend) send(parent context.Context, path string, req *backends.Request) (*backends.Response, error) {
	accept := "application/json"
	if req.Stream {
		accept = "text/event-stream"
	}
	resp, cancel, err := b.up.Open(parent, path, req.Body, accept)
	if err != nil {
		return nil, err
	}
	out := &backends.Response{Header: passHeaders(resp.Header)}
	if req.Stream && isEventStream(resp.Header.Get("Content-Type")) {
		out.Stream = newStream(parent, resp.Body, cancel, b.opt.MaxEventBytes, b.opt.Name, b.opt.APIKey)
		if b.opt.ReportsCache {
			out.Cache = backends.CacheReported
		}
		return out, nil
	}
	defer cancel(nil)
	defer resp.Body.Close()
	body, err := backends.ReadAnswer(b.opt.Name, parent, resp.Body, b.opt.MaxResponseBytes)
	if err != nil {
		return nil, err
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

// Open sends body to path under the base URL (with its credentials and limits) and
// returns the upstream's success response as it is, for an API other than chat
// completions that the backend's owner passes through (backends.DoorPasser).
func (b *Backend) Open(ctx context.Context, path string, body []byte, header http.Header) (*http.Response, context.CancelCauseFunc, error) {
	return b.up.OpenWith(ctx, path, body, "application/json, text/event-stream", header)
}
