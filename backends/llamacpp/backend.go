package llamacpp

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/maskgate/maskgate/backends"
	"github.com/maskgate/maskgate/backends/chatlayer"
	"github.com/maskgate/maskgate/backends/openaicompat"
	"github.com/maskgate/maskgate/backends/toolcall"
	"github.com/maskgate/maskgate/masking"
)

// GrammarFunc builds the grammar members of a /completion body for one request: a JSON
// object whose members (grammar, grammar_lazy, grammar_triggers, preserved_tokens; see
// llama.cpp's tools/server/README.md, "POST /completion") are merged into the body after
// the ones this package writes. The grammar must be for the wire format of
// Options.Format (the function is configured with the backend, so it knows it). The
// result must be deterministic for equal requests, and must not repeat a member this
// package writes; preserved_tokens it may write, and the package adds the format's
// markers to them.
type GrammarFunc func(GrammarRequest) (fields json.RawMessage, err error)

// GrammarRequest is what one request's grammar constrains.
type GrammarRequest struct {
	// Allowed are the tools the model may call; Required says it must call one of them.
	Allowed  []string
	Required bool
	// OneCall says the client sent parallel_tool_calls false: at most one call.
	OneCall bool
	// Tools is the request's tools array, the client's bytes, from which the grammar reads
	// each allowed tool's parameters (JSON Schema) to constrain its arguments.
	Tools json.RawMessage
	// ToolsID is backends.Request.ToolsID: when set, requests with one ToolsID carry
	// byte-identical Tools, so the function may keep what it derives from them.
	ToolsID string
	// Definitions is backends.Request.Definitions (strategy index): an OpenAI tools
	// array of allowed tools that Tools leaves out, whose schemas hold their calls'
	// arguments as Tools' schemas hold theirs. They change from request to request, so
	// nothing derived from them may be kept under ToolsID. Nil under other strategies.
	Definitions json.RawMessage
	// Answer is the request's structured output (response_format), or nil. Unless a
	// call is required, the grammar must then admit either the allowed calls or this
	// answer (masking.Catalog.GBNFOrAnswer), never lazy.
	Answer *masking.Answer
}

// Options configure a Backend. The zero value of each field is its default.
type Options struct {
	// Name is the backend's name in the configuration, used in errors and logs.
	Name string
	// BaseURL is the llama-server root (e.g. http://127.0.0.1:8080), without /v1.
	// Required.
	BaseURL string
	// Transport makes the upstream calls. If nil, a transport private to this backend
	// with the standard library's defaults is used.
	Transport http.RoundTripper
	// Timeout bounds the wait for each upstream response's headers. llama-server sends the
	// headers of a /completion without "stream" with the whole answer, so there it bounds
	// the whole generation; a stream may run for as long as it produces. If zero,
	// 10 minutes.
	Timeout time.Duration
	// Now is the clock for the responses' "created". If nil, time.Now.
	Now func() time.Time
	// Grammar constrains tool calls to the allowed set. If nil, no grammar is sent, the
	// model may call any tool in the prompt, and ConstrainsTools reports false.
	Grammar GrammarFunc
	// IdleTimeout bounds each pause of an answer once it has begun: between the bytes of
	// a whole answer, between the events of a stream. If zero, backends.DefaultIdleTimeout.
	IdleTimeout time.Duration
	// MaxEventBytes caps one SSE event from the upstream (its lines together). If zero,
	// sse.DefaultMaxEvent.
	MaxEventBytes int
	// MaxResponseBytes caps a non-streaming response body. If zero, 64 MiB.
	MaxResponseBytes int64
	// Format is the tool-call wire format of the served model's chat template, one of
	// toolcall.Names ("hermes", "llama3", "mistral", "harmony", "deepseek"); toolcall.Detect
	// tells it from ChatTemplate. Calls are parsed from the completion text in it, and its
	// markers are sent as preserved_tokens. If empty, "hermes".
	Format string
}

// Backend translates OpenAI chat completions to llama-server's /apply-template and
// /completion.
type Backend struct {
	opt             Options
	up              backends.Upstream
	v1              *openaicompat.Backend      // llama-server's own /v1, for the endpoints it passes (PassEndpoint)
	newID           func(prefix string) string // tests make ids predictable
	mediaCache                                 // what /props said of images (images.go)
	lateSystemCache                            // whether the template refuses a late system message (systemmerge.go)
}

var (
	_ backends.Backend         = (*Backend)(nil)
	_ backends.ModelLister     = (*Backend)(nil)
	_ backends.Pinger          = (*Backend)(nil)
	_ backends.ToolConstrainer = (*Backend)(nil)
	_ backends.ToolLoader      = (*Backend)(nil)
	_ backends.EndpointPasser  = (*Backend)(nil)
)

// New returns a Backend for o, or an error naming what is wrong.
func New(o Options) (*Backend, error) {
	if o.BaseURL == "" {
		return nil, fmt.Errorf("backend %q: url is required (the llama-server root, e.g. http://127.0.0.1:8080)", o.Name)
	}
	u, err := url.Parse(o.BaseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("backend %q: url %q must be an http:// or https:// server root, e.g. http://127.0.0.1:8080", o.Name, o.BaseURL)
	}
	if p := strings.TrimRight(u.Path, "/"); strings.HasSuffix(p, "/v1") {
		return nil, fmt.Errorf("backend %q: url %q must be the llama-server root; drop \"/v1\" (use kind openai for its /v1)", o.Name, o.BaseURL)
	}
	if o.Transport == nil {
		o.Transport = http.DefaultTransport.(*http.Transport).Clone()
	}
	if o.Timeout == 0 {
		o.Timeout = 10 * time.Minute
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.IdleTimeout == 0 {
		o.IdleTimeout = backends.DefaultIdleTimeout
	}
	if o.MaxResponseBytes == 0 {
		o.MaxResponseBytes = 64 << 20
	}
	if o.Format == "" {
		o.Format = toolcall.Hermes
	}
	if !toolcall.IsFormat(o.Format) {
		return nil, fmt.Errorf("backend %q: tool-call format %q is not one of %s", o.Name, o.Format, strings.Join(toolcall.Names(), ", "))
	}
	v1, err := openaicompat.New(openaicompat.Options{Name: o.Name, BaseURL: strings.TrimRight(o.BaseURL, "/") + "/v1",
		Transport: o.Transport, Timeout: o.Timeout, IdleTimeout: o.IdleTimeout, MaxEventBytes: o.MaxEventBytes,
		MaxResponseBytes: o.MaxResponseBytes})
	if err != nil {
		return nil, err
	}
	return &Backend{
		opt: o,
		v1:  v1,
		up: backends.Upstream{Name: o.Name, Base: strings.TrimRight(o.BaseURL, "/"),
			Client: &http.Client{Transport: o.Transport}, Timeout: o.Timeout, IdleTimeout: o.IdleTimeout},
		newID: func(prefix string) string { return prefix + rand.Text() },
	}, nil
}

// PassesEndpoint: llama-server serves /v1/embeddings (started with --embeddings),
// /v1/completions and /v1/rerank (with --reranking) itself; a server started without
// the flag refuses the request, and the client sees its message.
func (b *Backend) PassesEndpoint(endpoint string) bool {
	switch endpoint {
	case backends.EndpointEmbeddings, backends.EndpointCompletions, backends.EndpointRerank:
		return true
	}
	return false
}

// PassEndpoint forwards req to llama-server's POST /v1/{endpoint} as the client wrote it.
func (b *Backend) PassEndpoint(ctx context.Context, endpoint string, req *backends.Request) (*backends.Response, error) {
	if !b.PassesEndpoint(endpoint) {
		return nil, fmt.Errorf("backend %q: llama-server has no endpoint %q", b.opt.Name, endpoint)
	}
	return b.v1.PassEndpoint(ctx, endpoint, req)
}

// ConstrainsTools reports whether the backend enforces Request.Allowed with a grammar.
func (b *Backend) ConstrainsTools() bool { return b.opt.Grammar != nil }

// LoadsTools: with a grammar the backend serves strategy index by definition: the
// grammar holds a call to a tool of Request.Definitions to its schema
// (GrammarRequest.Definitions), while /apply-template gets Body's tools only.
func (b *Backend) LoadsTools() backends.LoadKind {
	if b.opt.Grammar == nil {
		return backends.LoadNone
	}
	return backends.LoadByDefinition
}

// ChatCompletion renders the prompt with POST /apply-template, then generates with
// POST /completion. For a stream it returns once llama-server has sent its first event,
// so that a failure before any output is still a plain error.
func (b *Backend) ChatCompletion(ctx context.Context, req *backends.Request) (*backends.Response, error) {
	p, err := parseRequest(req.Body, req.Allowed)
	if err != nil {
		return nil, err
	}
	answer, err := chatlayer.Format(req.Body) // before any upstream work: a 400 costs nothing
	if err != nil {
		return nil, err
	}
	prompt, media, err := b.render(ctx, req.Body, func(body []byte) ([]byte, []string, error) {
		r := *req
		r.Body = body
		tmpl, err := templateBody(withEffort(&r), b.opt.Format, req.CatalogFirst)
		if err != nil {
			return nil, nil, err
		}
		return b.images(ctx, tmpl)
	})
	if err != nil {
		return nil, err
	}
	p.inside = thinks(b.opt.Format) && chatlayer.StartsInside(prompt)
	grammar, err := b.grammarFields(req, p, answer)
	if err != nil {
		return nil, err
	}
	body, err := completionBody(prompt, p, req.Stream, grammar)
	if err == nil && parses(p, b.opt.Format) {
		body, err = withPreservedTokens(body, toolcall.SpecialTokens(b.opt.Format))
	}
	if err == nil {
		body, err = withMedia(body, prompt, media)
	}
	if err != nil {
		return nil, fmt.Errorf("backend %q: %w", b.opt.Name, err)
	}
	m := meta{id: b.newID("chatcmpl-"), created: b.opt.Now().Unix(), model: req.Model, format: b.opt.Format}
	out := &backends.Response{Cache: backends.CacheReported}
	if req.Stream {
		s, err := b.startStream(ctx, body, p, m)
		if err != nil {
			return nil, err
		}
		out.Stream = s
		return out, nil
	}
	raw, err := b.post(ctx, "/completion", body, false)
	if err != nil {
		return nil, err
	}
	var r completionResult
	if err := json.Unmarshal(raw, &r); err != nil {
		return nil, b.badAnswer("/completion", err)
	}
	c := wholeCompletion(&r, p, m)
	out.Timings = engineTimings(&r)
	if out.Body, err = json.Marshal(c); err != nil {
		return nil, fmt.Errorf("backend %q: encode response: %w", b.opt.Name, err)
	}
	return out, nil
}

// applyTemplate asks llama-server for the prompt its chat template renders.
func (b *Backend) applyTemplate(ctx context.Context, body []byte) (string, error) {
	raw, err := b.post(ctx, "/apply-template", body, false)
	if err != nil {
		return "", err
	}
	var t struct {
		Prompt *string `json:"prompt"`
	}
	if err := json.Unmarshal(raw, &t); err != nil || t.Prompt == nil {
		if err == nil {
			err = fmt.Errorf("no \"prompt\" in %s", clip(string(raw)))
		}
		return "", b.badAnswer("/apply-template", err)
	}
	return *t.Prompt, nil
}

func (b *Backend) badAnswer(path string, err error) error {
	return &backends.Error{Status: http.StatusBadGateway, Type: "upstream_error", Code: "upstream_bad_response",
		Message: fmt.Sprintf("backend %q answered %s with something that is not llama-server's response; check that its url is a llama-server root", b.opt.Name, path),
		Err:     err}
}

// meta is what every response and chunk of one call shares.
type meta struct {
	id      string
	created int64
	model   string
	format  string // the tool-call wire format
}

// ListModels asks GET /v1/models.
func (b *Backend) ListModels(ctx context.Context) ([]string, error) {
	raw, err := b.get(ctx, "/v1/models")
	if err != nil {
		return nil, err
	}
	var list struct {
		Data []struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	if err := json.Unmarshal(raw, &list); err != nil {
		return nil, b.badAnswer("/v1/models", err)
	}
	ids := make([]string, 0, len(list.Data))
	for _, m := range list.Data {
		if m.ID != "" {
			ids = append(ids, m.ID)
		}
	}
	return ids, nil
}

// Ping asks GET /health, which answers 200 once the model is loaded and 503 while it
// loads (tools/server/README.md, "GET /health").
func (b *Backend) Ping(ctx context.Context) error {
	_, err := b.get(ctx, "/health")
	return err
}
