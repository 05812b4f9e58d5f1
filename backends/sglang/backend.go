package sglang

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/maskgate/maskgate/backends"
	"github.com/maskgate/maskgate/backends/oai"
	"github.com/maskgate/maskgate/backends/openaicompat"
	"github.com/maskgate/maskgate/masking"
)

// Backend adds a structural tag for the allowed tools to an OpenAI-compatible pass-through.
type Backend struct {
	inner   *openaicompat.Backend
	schemas oai.SchemaCache // the whole catalog's schemas, read once per Request.ToolsID
}

var (
	_ backends.Backend         = (*Backend)(nil)
	_ backends.ToolConstrainer = (*Backend)(nil)
	_ backends.ModelLister     = (*Backend)(nil)
	_ backends.Pinger          = (*Backend)(nil)
)

// New returns a Backend; o is as for openaicompat (BaseURL with /v1, e.g.
// http://127.0.0.1:30000/v1).
func New(o openaicompat.Options) (*Backend, error) {
	o.ReportsCache = true // with --enable-cache-report
	inner, err := openaicompat.New(o)
	if err != nil {
		return nil, err
	}
	return &Backend{inner: inner}, nil
}

// ConstrainsTools: the structural tag enforces Request.Allowed.
func (b *Backend) ConstrainsTools() bool { return true }

func (b *Backend) ListModels(ctx context.Context) ([]string, error) { return b.inner.ListModels(ctx) }

func (b *Backend) Ping(ctx context.Context) error { return b.inner.Ping(ctx) }

// Outcome says what Constrain did.
type Outcome int

const (
	// Untouched: no tools, or tool_choice "none"; the body is as it came.
	Untouched Outcome = iota
	// Constrained: response_format carries the structural tag, tool_choice is "auto".
	Constrained
	// Unconstrained: the tag could not be added (the client's own response_format, or
	// nothing allowed in mode auto); the body is as it came and nothing stops a call
	// outside the allowed set but the gateway's own check afterwards.
	Unconstrained
)

// ChatCompletion adds the constraint when the request has tools, then forwards. The
// strategy it reports is mask when the tag went out for an allowed set, validate when
// the gateway asked for one and the tag could not go out.
func (b *Backend) ChatCompletion(ctx context.Context, req *backends.Request) (*backends.Response, error) {
	body, outcome, err := constrain(req.Body, req.Allowed, func(raw []byte) ([]oai.ToolSchema, error) { return b.schemas.Get(req.ToolsID, raw) })
	if err != nil {
		return nil, err
	}
	out := *req
	out.Body = body
	resp, err := b.inner.ChatCompletion(ctx, &out)
	if err != nil || req.Allowed == nil {
		return resp, err
	}
	switch outcome {
	case Constrained:
		resp.Strategy = "mask"
	case Unconstrained:
		resp.Strategy = "validate"
	}
	return resp, nil
}

// Constrain returns body with response_format set to the structural tag for allowed
// (nil: every tool of the request) and tool_choice "auto", or body unchanged when it has
// no tools, its tool_choice is "none", or it already has a response_format other than
// {"type":"text"} (SGLang takes one response_format, and the client's is the client's).
// It edits only those two members.
func Constrain(body []byte, allowed []string) ([]byte, Outcome, error) {
	return constrain(body, allowed, oai.ToolSchemas)
}

func constrain(body []byte, allowed []string, schemas func([]byte) ([]oai.ToolSchema, error)) ([]byte, Outcome, error) {
	obj, err := oai.ParseObject(body)
	if err != nil {
		return nil, Untouched, &oai.RequestError{Message: err.Error()}
	}
	rawTools, ok := obj.Get("tools")
	if !ok || string(rawTools) == "null" {
		return body, Untouched, nil
	}
	tools, err := schemas(rawTools)
	if err != nil {
		return nil, Untouched, &oai.RequestError{Message: "tools: " + err.Error(), Param: "tools"}
	}
	if len(tools) == 0 {
		return body, Untouched, nil
	}
	choice, _ := obj.Get("tool_choice")
	mode, narrow, none, err := masking.ParseToolChoice(choice)
	if err != nil {
		return nil, Untouched, &oai.RequestError{Message: err.Error(), Param: "tool_choice"}
	}
	if none {
		return body, Untouched, nil
	}
	if rf, ok := obj.Get("response_format"); ok && !isText(rf) {
		return body, Unconstrained, nil
	}
	params := make(map[string]json.RawMessage, len(tools))
	names := make([]string, 0, len(tools))
	for _, t := range tools {
		params[t.Name] = t.Parameters
		names = append(names, t.Name)
	}
	if allowed != nil {
		names = masking.Narrow(allowed, names) // a tag for a tool the prompt lacks helps no one
	}
	if narrow != nil {
		if names = masking.Narrow(names, narrow); len(names) == 0 && mode != masking.ModeAuto {
			return nil, Untouched, &oai.RequestError{Param: "tool_choice",
				Message: "tool_choice names no tool the model may call now; load it first (search_tools, load_tool) or choose another"}
		}
	}
	tag, err := masking.StructuralTag(masking.Spec{Format: masking.Hermes(), Allowed: names, Mode: mode}, params)
	if errors.Is(err, masking.ErrNoCallAllowed) {
		// No tag can say "no call"; tool_choice "none" would drop the tools from SGLang's
		// template and so move the prompt.
		return body, Unconstrained, nil
	}
	if err != nil {
		return nil, Untouched, &oai.RequestError{Message: err.Error(), Param: "tools"}
	}
	return obj.Edit(oai.Edit{Key: "response_format", Value: tag}, oai.Edit{Key: "tool_choice", Value: []byte(`"auto"`)}), Constrained, nil
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
