package sglang

import (
	"encoding/json"

	"github.com/maskgate/maskgate/backends/oai"
	"github.com/maskgate/maskgate/backends/openaicompat"
	"github.com/maskgate/maskgate/backends/vllm"
	"github.com/maskgate/maskgate/masking"
)

// Backend is vLLM's tagging backend with the tag in response_format.
type Backend = vllm.Backend

// ResponseFormat is SGLang's placement: the tag object as response_format. A client's
// own response_format json_schema or json_object joins the tag (vllm's answer tag: one
// allowed call or the answer); any other response_format of the client's goes alone and
// the request unconstrained.
//
// Loads is LoadNone: SGLang's tool-call parsers drop a call whose name is not in the
// request's tools array ("Model attempted to call undefined function",
// function_call/base_format_detector.py's parse_base_json, unless the server runs with
// SGLANG_FORWARD_UNKNOWN_TOOLS), so a loaded tool that only Request.Definitions carries
// would be constrained by the tag and then lost; the gateway serves remove instead.
var ResponseFormat = vllm.Placement{
	Tag: func(tag []byte) ([]oai.Edit, error) { return []oai.Edit{{Key: "response_format", Value: tag}}, nil },
	Conflict: func(obj *oai.Object) bool {
		rf, ok := obj.Get("response_format")
		return ok && !isText(rf)
	},
}

// New returns a Backend; o is as for openaicompat (BaseURL with /v1, e.g.
// http://127.0.0.1:30000/v1), and o.Format names the model's tool-call format.
func New(o openaicompat.Options) (*Backend, error) {
	o.ReportsCache = true // with --enable-cache-report
	return vllm.NewPlaced(o, ResponseFormat)
}

// Outcome says what Constrain did (vllm.Outcome: the tag is the same).
type Outcome = vllm.Outcome

const (
	Untouched     = vllm.Untouched
	Constrained   = vllm.Constrained
	Unconstrained = vllm.Unconstrained
)

// Constrain returns body with response_format set to the structural tag for allowed
// (nil: every tool of the request), in the Hermes format, and tool_choice "auto", or body
// unchanged when it has no tools, its tool_choice is "none", or it already has a
// response_format other than {"type":"text"}. It edits only those two members.
func Constrain(body []byte, allowed []string) ([]byte, Outcome, error) {
	return vllm.Place(body, allowed, masking.Hermes(), ResponseFormat, oai.ToolSchemas)
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
