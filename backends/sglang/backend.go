package sglang

import (
	"context"
	"encoding/json"

	"github.com/maskgate/maskgate/backends"
	"github.com/maskgate/maskgate/backends/oai"
	"github.com/maskgate/maskgate/backends/openaicompat"
	"github.com/maskgate/maskgate/backends/vllm"
	"github.com/maskgate/maskgate/masking"
)

// Backend adds a structural tag for the allowed tools to an OpenAI-compatible pass-through.
type Backend struct {
	inner   *openaicompat.Backend
	format  masking.Format
	schemas oai.SchemaCache // the whole catalog's schemas, read once per Request.ToolsID
}

var (
	_ backends.Backend         = (*Backend)(nil)
	_ backends.ToolConstrainer = (*Backend)(nil)
	_ backends.ModelLister     = (*Backend)(nil)
	_ backends.Pinger          = (*Backend)(nil)
)

// New returns a Backend; o is as for openaicompat (BaseURL with /v1, e.g.
// http://127.0.0.1:30000/v1), and o.Format names the model's tool-call format.
func New(o openaicompat.Options) (*Backend, error) {
	o.ReportsCache = true // with --enable-cache-report
	f, err := vllm.FormatOf(o.Format)
	if err != nil {
		return nil, err
	}
	inner, err := openaicompat.New(o)
	if err != nil {
		return nil, err
	}
	return &Backend{inner: inner, format: f}, nil
}

// ConstrainsTools: the structural tag enforces Request.Allowed.
func (b *Backend) ConstrainsTools() bool { return true }

func (b *Backend) ListModels(ctx context.Context) ([]string, error) { return b.inner.ListModels(ctx) }

func (b *Backend) Ping(ctx context.Context) error { return b.inner.Ping(ctx) }

// Outcome says what Constrain did (vllm.Outcome: the tag is the same).
type Outcome = vllm.Outcome

const (
	Untouched     = vllm.Untouched
	Constrained   = vllm.Constrained
	Unconstrained = vllm.Unconstrained
)

// ChatCompletion adds the constraint when the request has tools, then forwards. The
// strategy it reports is mask when the tag went out for an allowed set, validate when
// the gateway asked for one and the tag could not go out.
func (b *Backend) ChatCompletion(ctx context.Context, req *backends.Request) (*backends.Response, error) {
	body, outcome, err := constrain(req.Body, req.Allowed, b.format, func(raw []byte) ([]oai.ToolSchema, error) { return b.schemas.Get(req.ToolsID, raw) })
	if err != nil {
		return nil, err
	}
	out := *req
	out.Body = body
	resp, err := b.inner.ChatCompletion(ctx, &out)
	if err == nil {
		if st := vllm.StrategyFor(req.Allowed, outcome); st != "" {
			resp.Strategy = st
		}
	}
	return resp, err
}

// Constrain returns body with response_format set to the structural tag for allowed
// (nil: every tool of the request), in the Hermes format, and tool_choice "auto", or body
// unchanged when it has no tools, its tool_choice is "none", or it already has a
// response_format other than {"type":"text"} (SGLang takes one response_format, and the
// client's is the client's). It edits only those two members.
func Constrain(body []byte, allowed []string) ([]byte, Outcome, error) {
	return constrain(body, allowed, masking.Hermes(), oai.ToolSchemas)
}

func constrain(body []byte, allowed []string, format masking.Format, schemas vllm.SchemaFunc) ([]byte, Outcome, error) {
	clientFormat := func(obj *oai.Object) bool {
		rf, ok := obj.Get("response_format")
		return ok && !isText(rf)
	}
	t, err := vllm.BuildTag(body, allowed, format, schemas, clientFormat)
	if err != nil {
		return nil, Untouched, err
	}
	if t.Outcome != Constrained {
		return body, t.Outcome, nil
	}
	return t.Object.Edit(oai.Edit{Key: "response_format", Value: t.Tag}, oai.Edit{Key: "tool_choice", Value: []byte(`"auto"`)}), Constrained, nil
}

// isText reports a response_format that asks for nothing: null or {"type":"text"}.
func isText(rf []byte) bool {
	if string(rf) == "null" {
		return true
	}
	var f struct {
		Type string `json:"type"`
	}
	return json.Unmarshal(rf, &f) == nil && f.Type == "text"
}
