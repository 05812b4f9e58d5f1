package ollama

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/ollama/ollama/api"

	"github.com/maskgate/maskgate/backends"
	"github.com/maskgate/maskgate/backends/openaicompat"
	"github.com/maskgate/maskgate/kvcache"
)

// Options configure a Backend. The zero value of each field is its default.
type Options struct {
	// Name is the backend's name in the configuration, used in errors and logs.
	Name string
	// BaseURL is the Ollama server root, as Ollama's own clients write it
	// (e.g. http://127.0.0.1:11434), without /v1 or /api. Required.
	BaseURL string
	// Transport makes the upstream calls. If nil, a transport private to this backend
	// with the standard library's defaults is used.
	Transport http.RoundTripper
	// Timeout bounds the wait for Ollama's response headers and first line, which for a
	// first request includes loading the model; a stream may then run for as long as it
	// produces. Ollama sends the headers of a request without "stream" with the whole
	// answer, so there it bounds the whole generation. If zero, 10 minutes.
	Timeout time.Duration
	// IdleTimeout bounds each pause of an answer once it has begun. If zero,
	// backends.DefaultIdleTimeout.
	IdleTimeout time.Duration
	// Now is the clock for the responses' "created". If nil, time.Now.
	Now func() time.Time
	// Estimator estimates cached prompt tokens, which Ollama does not report. Share one
	// between backends only if they are the same Ollama server. If nil, one private to
	// this backend holding one prompt per model (Ollama's default of one parallel request
	// per model, OLLAMA_NUM_PARALLEL=1) in kvcache.DefaultPrefixCapacity bytes.
	Estimator *kvcache.PrefixEstimator
}

// Backend translates OpenAI chat completions to Ollama's /api/chat.
type Backend struct {
	opt    Options
	client *api.Client           // model lists and pings
	chat   *chatter              // answers
	v1     *openaicompat.Backend // Ollama's own /v1, for the endpoints it passes (PassEndpoint)
	vision visionCache           // which models read images (images.go)
}

var (
	_ backends.Backend     = (*Backend)(nil)
	_ backends.ModelLister = (*Backend)(nil)
	_ backends.Pinger      = (*Backend)(nil)

	_ backends.EndpointPasser = (*Backend)(nil)
)

// PassesEndpoint: Ollama serves OpenAI's /v1/embeddings and /v1/completions itself
// (no rerank or score).
func (b *Backend) PassesEndpoint(endpoint string) bool {
	return endpoint == backends.EndpointEmbeddings || endpoint == backends.EndpointCompletions
}

// PassEndpoint forwards req to Ollama's POST /v1/{endpoint} as the client wrote it.
func (b *Backend) PassEndpoint(ctx context.Context, endpoint string, req *backends.Request) (*backends.Response, error) {
	if !b.PassesEndpoint(endpoint) {
		return nil, fmt.Errorf("backend %q: Ollama has no endpoint %q", b.opt.Name, endpoint)
	}
	return b.v1.PassEndpoint(ctx, endpoint, req)
}

// New returns a Backend for o, or an error naming what is wrong.
func New(o Options) (*Backend, error) {
	if o.BaseURL == "" {
		return nil, fmt.Errorf("backend %q: url is required (the Ollama server root, e.g. http://127.0.0.1:11434)", o.Name)
	}
	base, err := url.Parse(o.BaseURL)
	if err != nil || (base.Scheme != "http" && base.Scheme != "https") || base.Host == "" {
		return nil, fmt.Errorf("backend %q: url %q must be an http:// or https:// server root, e.g. http://127.0.0.1:11434", o.Name, o.BaseURL)
	}
	if p := strings.TrimRight(base.Path, "/"); strings.HasSuffix(p, "/v1") || strings.HasSuffix(p, "/api") {
		return nil, fmt.Errorf("backend %q: url %q must be the Ollama server root; drop %q (use kind openai for Ollama's /v1)", o.Name, o.BaseURL, p[strings.LastIndex(p, "/"):])
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
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Estimator == nil {
		o.Estimator = kvcache.NewPrefixEstimator(kvcache.PrefixOptions{PerModel: 1})
	}
	hc := &http.Client{Transport: &watchTransport{rt: o.Transport, first: o.Timeout, idle: o.IdleTimeout}}
	v1, err := openaicompat.New(openaicompat.Options{Name: o.Name, BaseURL: strings.TrimRight(o.BaseURL, "/") + "/v1",
		Transport: o.Transport, Timeout: o.Timeout, IdleTimeout: o.IdleTimeout})
	if err != nil {
		return nil, err
	}
	return &Backend{opt: o, client: api.NewClient(base, hc), chat: &chatter{hc: hc, base: base, name: o.Name}, v1: v1}, nil
}

// ChatCompletion translates req, sends it to POST /api/chat and translates the answer.
// For a stream it returns once Ollama has sent its first line, so that a failure before
// then is still a plain error.
func (b *Backend) ChatCompletion(ctx context.Context, req *backends.Request) (*backends.Response, error) {
	sent, img := b.images(ctx, req.Body, req.Model)
	t, err := translateRequest(sent, req.Model)
	if err == nil && img != nil {
		err = attachImages(t.req.Messages, img.Data)
	}
	if err != nil {
		return nil, err
	}
	stream := req.Stream
	t.req.Stream = &stream
	m := meta{
		id:        "chatcmpl-" + rand.Text(),
		created:   b.opt.Now().Unix(),
		model:     t.req.Model,
		newCallID: newCallID,
	}
	acct := newAccounting(b.opt.Estimator, t)
	out := &backends.Response{Cache: backends.CacheEstimated, Strategy: t.strategy}
	if stream {
		s, err := b.startStream(ctx, t, m, acct)
		if err != nil {
			return nil, err
		}
		out.Stream = s
		return out, nil
	}

	var r reply
	cctx, note := withNote(ctx)
	err = b.chat.Chat(cctx, t.req, func(resp api.ChatResponse) error {
		r.add(&resp)
		return nil
	})
	if err != nil {
		return nil, b.classify(ctx, t.req.Model, err)
	}
	if !r.done {
		return nil, b.incomplete(ctx, note, false)
	}
	c, err := t.completion(&r, m, acct.settle(&r))
	if err != nil {
		return nil, err
	}
	body, err := json.Marshal(c)
	if err != nil {
		return nil, fmt.Errorf("backend %q: encode response: %w", b.opt.Name, err)
	}
	out.Body = body
	return out, nil
}

// incomplete is the error for an answer that ended without "done": the client went
// away, the upstream stalled or broke the connection (the note says), or it stopped
// early.
func (b *Backend) incomplete(ctx context.Context, note *readNote, stream bool) error {
	if ctx.Err() != nil {
		return fmt.Errorf("backend %q: %w", b.opt.Name, context.Cause(ctx))
	}
	if err := note.get(); err != nil {
		return backends.ReadError(b.opt.Name, ctx, err, stream)
	}
	return fmt.Errorf("backend %q: %w", b.opt.Name, backends.ErrTruncated)
}

func newCallID() string {
	return "call_" + rand.Text()
}

// ListModels asks GET /api/tags.
func (b *Backend) ListModels(ctx context.Context) ([]string, error) {
	list, err := b.client.List(ctx)
	if err != nil {
		return nil, b.classify(ctx, "", err)
	}
	names := make([]string, 0, len(list.Models))
	for _, m := range list.Models {
		name := m.Name
		if name == "" {
			name = m.Model
		}
		if name != "" {
			names = append(names, name)
		}
	}
	return names, nil
}

// Ping succeeds when GET /api/version answers, which a server that is not Ollama
// rarely does.
func (b *Backend) Ping(ctx context.Context) error {
	if _, err := b.client.Version(ctx); err != nil {
		return b.classify(ctx, "", err)
	}
	return nil
}
