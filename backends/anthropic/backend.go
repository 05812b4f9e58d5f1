package anthropic

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/maskgate/maskgate/backends"
)

// Options configure a Backend. The zero value of each field is its default.
type Options struct {
	// Name is the backend's name in the configuration, used in errors and logs.
	Name string
	// BaseURL is the API root as Anthropic's own clients write it,
	// https://api.anthropic.com, without /v1. Required.
	BaseURL string
	// APIKey is sent as x-api-key. Empty sends none (for a proxy that adds it).
	APIKey string
	// Version is sent as anthropic-version. If empty, "2023-06-01".
	Version string
	// MaxTokens is max_tokens for a request that sets neither max_completion_tokens nor
	// max_tokens; the Messages API requires one. If zero, 4096, which every current model
	// accepts as an output limit.
	MaxTokens int
	// Transport makes the upstream calls. If nil, a transport private to this backend
	// with the standard library's defaults is used.
	Transport http.RoundTripper
	// Timeout bounds the wait for the response headers. Anthropic sends them for a
	// stream at once and for a whole answer only when it is complete, so it bounds the
	// generation of a request without "stream". If zero, 10 minutes.
	Timeout time.Duration
	// IdleTimeout bounds each pause of an answer once it has begun: between the bytes of
	// a whole answer, between the events of a stream. If zero, backends.DefaultIdleTimeout.
	IdleTimeout time.Duration
	// MaxEventBytes caps one SSE event from the upstream (its lines together). If zero,
	// sse.DefaultMaxEvent.
	MaxEventBytes int
	// MaxResponseBytes caps a whole (non-streaming) answer. If zero, 64 MiB.
	MaxResponseBytes int64
	// Now is the clock for the responses' "created". If nil, time.Now.
	Now func() time.Time
}

// Backend translates OpenAI chat completions to Anthropic's Messages API.
type Backend struct {
	opt Options
	up  backends.Upstream
}

var (
	_ backends.Backend     = (*Backend)(nil)
	_ backends.ModelLister = (*Backend)(nil)
	_ backends.Pinger      = (*Backend)(nil)
)

// New returns a Backend for o, or an error naming what is wrong.
func New(o Options) (*Backend, error) {
	if o.BaseURL == "" {
		return nil, fmt.Errorf("backend %q: url is required (https://api.anthropic.com)", o.Name)
	}
	base, err := url.Parse(o.BaseURL)
	if err != nil || (base.Scheme != "http" && base.Scheme != "https") || base.Host == "" {
		return nil, fmt.Errorf("backend %q: url %q must be an https:// API root, e.g. https://api.anthropic.com", o.Name, o.BaseURL)
	}
	root := strings.TrimRight(o.BaseURL, "/")
	if strings.HasSuffix(root, "/v1") || strings.HasSuffix(root, "/v1/messages") {
		return nil, fmt.Errorf("backend %q: url %q must be the API root; drop the /v1 path (https://api.anthropic.com)", o.Name, o.BaseURL)
	}
	if o.Version == "" {
		o.Version = "2023-06-01"
	}
	if o.MaxTokens < 0 {
		return nil, fmt.Errorf("backend %q: max tokens %d must not be negative", o.Name, o.MaxTokens)
	}
	if o.MaxTokens == 0 {
		o.MaxTokens = 4096
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
	if o.Now == nil {
		o.Now = time.Now
	}
	b := &Backend{opt: o}
	b.up = backends.Upstream{Name: o.Name, Base: root, Timeout: o.Timeout, IdleTimeout: o.IdleTimeout, Authorize: b.authorize,
		Client: &http.Client{Transport: &errorTranslator{rt: o.Transport, name: o.Name}}}
	return b, nil
}

func (b *Backend) authorize(r *http.Request) {
	if b.opt.APIKey != "" {
		r.Header.Set("x-api-key", b.opt.APIKey)
	}
	r.Header.Set("anthropic-version", b.opt.Version)
}

// ChatCompletion translates req, sends it to POST {base}/v1/messages and translates the
// answer. For a stream it returns once the response headers are in; a failure before
// them is a plain error.
func (b *Backend) ChatCompletion(parent context.Context, req *backends.Request) (*backends.Response, error) {
	t, err := translateRequest(req.Body, req.Model, b.opt.MaxTokens)
	if err != nil {
		return nil, err
	}
	accept := "application/json"
	if req.Stream {
		accept = "text/event-stream"
	}
	var header http.Header
	if t.deferred {
		header = http.Header{"Anthropic-Beta": {betaToolSearch}}
	}
	resp, cancel, err := b.up.OpenWith(parent, "/v1/messages", t.body, accept, header)
	if err != nil {
		return nil, err
	}
	m := meta{created: b.opt.Now().Unix(), model: t.model}
	out := &backends.Response{Header: passHeaders(resp.Header), Cache: backends.CacheReported, Strategy: t.strategy}
	if req.Stream {
		if !strings.HasPrefix(strings.ToLower(resp.Header.Get("Content-Type")), "text/event-stream") {
			resp.Body.Close()
			cancel(nil)
			return nil, &backends.Error{Status: http.StatusBadGateway, Type: "upstream_error", Code: "upstream_not_streaming",
				Message: fmt.Sprintf("backend %q answered a streaming request with %q instead of an event stream", b.opt.Name, resp.Header.Get("Content-Type"))}
		}
		out.Stream = newStream(parent, resp.Body, cancel, b.opt.MaxEventBytes, newChunker(b.opt.Name, t.names, m))
		return out, nil
	}
	defer cancel(nil)
	defer resp.Body.Close()
	body, err := backends.ReadAnswer(b.opt.Name, parent, resp.Body, b.opt.MaxResponseBytes)
	if err != nil {
		return nil, err
	}
	if out.Body, err = completion(b.opt.Name, body, t.names, m); err != nil {
		return nil, err
	}
	return out, nil
}

// passHeaders picks the upstream headers a client may want to see.
func passHeaders(h http.Header) http.Header {
	out := http.Header{}
	if v := h.Get("Request-Id"); v != "" {
		out.Set("X-Request-Id", v)
	}
	return out
}

// ListModels asks GET {base}/v1/models, following its pages.
func (b *Backend) ListModels(ctx context.Context) ([]string, error) {
	var ids []string
	after := ""
	for page := 0; page < 20; page++ {
		path := "/v1/models?limit=1000"
		if after != "" {
			path += "&after_id=" + url.QueryEscape(after)
		}
		list, err := b.models(ctx, path)
		if err != nil {
			return nil, err
		}
		for _, m := range list.Data {
			if m.ID != "" {
				ids = append(ids, m.ID)
			}
		}
		if !list.HasMore || list.LastID == "" {
			break
		}
		after = list.LastID
	}
	return ids, nil
}

type modelList struct {
	Data []struct {
		ID string `json:"id"`
	} `json:"data"`
	HasMore bool   `json:"has_more"`
	LastID  string `json:"last_id"`
}

func (b *Backend) models(ctx context.Context, path string) (*modelList, error) {
	resp, cancel, err := b.up.Open(ctx, path, nil, "application/json")
	if err != nil {
		return nil, err
	}
	defer cancel(nil)
	defer resp.Body.Close()
	var list modelList
	if err := json.NewDecoder(io.LimitReader(resp.Body, 16<<20)).Decode(&list); err != nil {
		return nil, fmt.Errorf("backend %q: read model list: %w", b.opt.Name, err)
	}
	return &list, nil
}

// Ping succeeds when GET /v1/models?limit=1 answers, which also proves the key works
// and costs no tokens.
func (b *Backend) Ping(ctx context.Context) error {
	_, err := b.models(ctx, "/v1/models?limit=1")
	return err
}

var _ backends.DoorPasser = (*Backend)(nil)

// PassesDoor: Anthropic serves the Messages API.
func (b *Backend) PassesDoor(door string) bool { return door == "messages" }

// PassDoor sends a Messages request, as the client wrote it, to POST {base}/v1/messages
// with its query (?beta=true) and its anthropic-beta header; the version and key are
// the backend's.
func (b *Backend) PassDoor(ctx context.Context, door, rawQuery string, header http.Header, body []byte) (*http.Response, context.CancelCauseFunc, error) {
	path := "/v1/messages"
	if rawQuery != "" {
		path += "?" + rawQuery
	}
	return b.up.OpenWith(ctx, path, body, "application/json, text/event-stream", header)
}
