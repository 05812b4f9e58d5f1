package openai

import (
	"context"
	"encoding/json"
	"net/http"

	"github.com/maskgate/maskgate/backends"
	"github.com/maskgate/maskgate/backends/openaicompat"
)

// Strategy is what Response.Strategy says when tool_choice carried the allowed set.
const Strategy = "allowed_tools"

// Options configure a Backend. The zero value of each field is its default.
type Options struct {
	// Options are the pass-through's: name, base URL with /v1, key, transport, limits.
	// ReportsCache is set by New: OpenAI reports cached tokens in every usage.
	openaicompat.Options
	// NoAllowedTools declares an OpenAI-compatible API that does not accept a
	// tool_choice of type allowed_tools. The backend is then no ToolConstrainer (the
	// gateway picks another strategy) and sends tool_choice as the client wrote it,
	// names mapped. If false, the right value for OpenAI itself, it constrains.
	NoAllowedTools bool
}

// Backend is OpenAI's chat completions API: the pass-through, plus the allowed set as
// tool_choice and tool names OpenAI accepts.
type Backend struct {
	opt   Options
	inner *openaicompat.Backend
}

var (
	_ backends.Backend         = (*Backend)(nil)
	_ backends.ToolConstrainer = (*Backend)(nil)
	_ backends.ModelLister     = (*Backend)(nil)
	_ backends.Pinger          = (*Backend)(nil)
)

// New returns a Backend for o, or an error naming what is missing.
func New(o Options) (*Backend, error) {
	o.ReportsCache = true
	inner, err := openaicompat.New(o.Options)
	if err != nil {
		return nil, err
	}
	return &Backend{opt: o, inner: inner}, nil
}

// ConstrainsTools: allowed_tools enforces Request.Allowed, unless the API lacks it.
func (b *Backend) ConstrainsTools() bool { return !b.opt.NoAllowedTools }

func (b *Backend) ListModels(ctx context.Context) ([]string, error) { return b.inner.ListModels(ctx) }

func (b *Backend) Ping(ctx context.Context) error { return b.inner.Ping(ctx) }

// ChatCompletion prepares the body (Prepare), forwards it, and maps tool names back in
// the answer, whole or streamed. A body with deferred tools (strategy index) goes to the
// Responses API instead (viaResponses).
func (b *Backend) ChatCompletion(ctx context.Context, req *backends.Request) (*backends.Response, error) {
	if !b.opt.NoAllowedTools && deferred(req.Body) {
		return b.viaResponses(ctx, req) // strategy index: deferred.go
	}
	p, err := Prepare(req.Body, req.Allowed, !b.opt.NoAllowedTools)
	if err != nil {
		return nil, err
	}
	out := *req
	out.Body = p.Body
	resp, err := b.inner.ChatCompletion(ctx, &out)
	if err != nil {
		return nil, err
	}
	if p.Constrained {
		resp.Strategy = Strategy
	}
	if resp.Stream != nil {
		resp.Stream = p.Names.Stream(resp.Stream)
		return resp, nil
	}
	if resp.Body, err = p.Names.Response(resp.Body); err != nil {
		return nil, err
	}
	if reportsCachedTokens(resp.Body) {
		resp.Cache = backends.CacheReported
	}
	return resp, nil
}

// reportsCachedTokens reports whether a whole answer's usage carries
// prompt_tokens_details.cached_tokens (OpenAI sends it, 0 on a miss).
func reportsCachedTokens(body []byte) bool {
	var r struct {
		Usage *struct {
			PromptTokensDetails *struct {
				CachedTokens *int `json:"cached_tokens"`
			} `json:"prompt_tokens_details"`
		} `json:"usage"`
	}
	return json.Unmarshal(body, &r) == nil && r.Usage != nil && r.Usage.PromptTokensDetails != nil &&
		r.Usage.PromptTokensDetails.CachedTokens != nil
}

var _ backends.EndpointPasser = (*Backend)(nil)

// PassesEndpoint: OpenAI serves embeddings and legacy completions; an OpenAI-compatible
// server behind this kind may serve rerank and score too, and refuses what it does not.
func (b *Backend) PassesEndpoint(endpoint string) bool { return b.inner.PassesEndpoint(endpoint) }

// PassEndpoint forwards req to POST {base}/{endpoint} as the client wrote it.
func (b *Backend) PassEndpoint(ctx context.Context, endpoint string, req *backends.Request) (*backends.Response, error) {
	return b.inner.PassEndpoint(ctx, endpoint, req)
}

var _ backends.DoorPasser = (*Backend)(nil)

// PassesDoor: OpenAI serves the Responses API.
func (b *Backend) PassesDoor(door string) bool { return door == "responses" }

// PassDoor sends a Responses request, as the client wrote it, to POST {base}/responses.
func (b *Backend) PassDoor(ctx context.Context, door, rawQuery string, header http.Header, body []byte) (*http.Response, context.CancelCauseFunc, error) {
	path := "/responses"
	if rawQuery != "" {
		path += "?" + rawQuery
	}
	return b.inner.Open(ctx, path, body, header)
}
