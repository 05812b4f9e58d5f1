package vllm

import (
	"bytes"
	"context"
	"encoding/json"

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

// New returns a Backend; o is as for openaicompat (BaseURL with /v1).
func New(o openaicompat.Options) (*Backend, error) {
	o.ReportsCache = true // with --enable-prompt-tokens-details
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

// ChatCompletion adds the constraint when the request has tools, then forwards.
func (b *Backend) ChatCompletion(ctx context.Context, req *backends.Request) (*backends.Response, error) {
	body, constrained, err := constrain(req.Body, req.Allowed, func(raw []byte) ([]oai.ToolSchema, error) { return b.schemas.Get(req.ToolsID, raw) })
	if err != nil {
		return nil, err
	}
	out := *req
	out.Body = body
	resp, err := b.inner.ChatCompletion(ctx, &out)
	if err == nil && constrained {
		resp.Strategy = "mask"
	}
	return resp, err
}

// Constrain returns body with the structural tag for allowed (nil: every tool of the
// request) and tool_choice "auto", or body unchanged when it has no tools or its
// tool_choice is "none". It edits only those two members.
func Constrain(body []byte, allowed []string) ([]byte, bool, error) {
	return constrain(body, allowed, oai.ToolSchemas)
}

func constrain(body []byte, allowed []string, schemas func([]byte) ([]oai.ToolSchema, error)) ([]byte, bool, error) {
	obj, err := oai.ParseObject(body)
	if err != nil {
		return nil, false, &oai.RequestError{Message: err.Error()}
	}
	rawTools, ok := obj.Get("tools")
	if !ok || string(rawTools) == "null" {
		return body, false, nil
	}
	tools, err := schemas(rawTools)
	if err != nil {
		return nil, false, &oai.RequestError{Message: "tools: " + err.Error(), Param: "tools"}
	}
	if len(tools) == 0 {
		return body, false, nil
	}
	choice, _ := obj.Get("tool_choice")
	mode, named, none, err := masking.ParseToolChoice(choice)
	if err != nil {
		return nil, false, &oai.RequestError{Message: err.Error(), Param: "tool_choice"}
	}
	if none {
		return body, false, nil
	}
	params := make(map[string]json.RawMessage, len(tools))
	var names []string
	for _, t := range tools {
		params[t.Name] = t.Parameters
		names = append(names, t.Name)
	}
	if allowed != nil {
		names = allowed
	}
	if named != nil {
		if names = masking.Narrow(names, named); len(names) == 0 {
			return nil, false, &oai.RequestError{Message: "tool_choice names no tool the model may call", Param: "tool_choice"}
		}
	}
	tag, err := masking.StructuralTag(masking.Spec{Format: masking.Hermes(), Allowed: names, Mode: mode}, params)
	if err != nil {
		return nil, false, &oai.RequestError{Message: err.Error(), Param: "tools"}
	}
	var so bytes.Buffer
	enc := json.NewEncoder(&so)
	enc.SetEscapeHTML(false) // keep <tool_call> readable in logs; the bytes are fixed either way
	if err := enc.Encode(struct {
		StructuralTag string `json:"structural_tag"`
	}{string(tag)}); err != nil {
		return nil, false, err
	}
	return obj.Edit(oai.Edit{Key: "structured_outputs", Value: bytes.TrimSuffix(so.Bytes(), []byte("\n"))},
		oai.Edit{Key: "tool_choice", Value: []byte(`"auto"`)}), true, nil
}
