package masking

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// anyObject is the arguments schema for a tool without one: OpenAI clients
// expect arguments to be an object, so this is tighter than vLLM's own
// default for a tool without parameters (any JSON value).
const anyObject = `{"type":"object"}`

// StructuralTag renders spec as a vLLM / SGLang structural tag, the JSON
// text that goes, as a JSON string, into vLLM's
// `structured_outputs: {"structural_tag": "..."}` (or, as an object, into
// SGLang's response_format). Shape, per the vLLM structured outputs docs
// (docs.vllm.ai/en/latest/features/structured_outputs, "structural_tag",
// "XGrammar latest structural tag format") and xgrammar's structural tag
// tutorial (xgrammar.mlc.ai/docs/tutorials/structural_tag.html):
//
//	{"type":"structural_tag","format":{"type":"triggered_tags",
//	 "triggers":["<tool_call>"],
//	 "tags":[{"type":"tag","begin":"<tool_call>\n{\"name\": \"A\", \"arguments\": ",
//	          "content":{"type":"json_schema","json_schema":{...}},
//	          "end":"}\n</tool_call>"}],
//	 "at_least_one":false}}
//
// One tag per allowed name, in the spec's order after deduplication;
// at_least_one is true in ModeRequired and ModeSpecified. Each schema is
// params[name] compacted (key order kept, so the bytes follow the input
// bytes), or {"type":"object"} when absent or null. An invalid schema is an
// error naming the tool. ModeAuto with no name gives ErrNoCallAllowed.
func StructuralTag(spec Spec, params map[string]json.RawMessage) ([]byte, error) {
	names, err := spec.names()
	if err != nil {
		return nil, err
	}
	open, mid, end, err := callParts(spec.Format)
	if err != nil {
		return nil, err
	}
	if len(names) == 0 {
		return nil, ErrNoCallAllowed
	}

	// The fixed parts are escaped once; each tag's begin is written from
	// them and the name without building the string.
	openJ := appendJSONChars(nil, open)
	midJ := appendJSONChars(nil, mid)
	endJ := appendJSONString(nil, end)
	size := 160
	for _, n := range names {
		size += len(n) + len(openJ) + len(midJ) + len(endJ) + 128 + len(anyObject) + len(params[n])
	}
	out := make([]byte, 0, size)
	out = append(out, `{"type":"structural_tag","format":{"type":"triggered_tags","triggers":[`...)
	out = appendJSONString(out, spec.Format.Trigger)
	out = append(out, `],"tags":[`...)
	var schema bytes.Buffer
	for i, n := range names {
		if i > 0 {
			out = append(out, ',')
		}
		out = append(out, `{"type":"tag","begin":`...)
		out = append(out, '"')
		out = append(out, openJ...)
		out = appendJSONChars(out, n)
		out = append(out, midJ...)
		out = append(out, '"')
		out = append(out, `,"content":{"type":"json_schema","json_schema":`...)
		p := bytes.TrimSpace(params[n])
		if len(p) == 0 || string(p) == "null" {
			out = append(out, anyObject...)
		} else {
			schema.Reset()
			if err := json.Compact(&schema, p); err != nil {
				return nil, fmt.Errorf("masking: parameters of tool %q: %w", n, err)
			}
			out = append(out, schema.Bytes()...)
		}
		out = append(out, `},"end":`...)
		out = append(out, endJ...)
		out = append(out, '}')
	}
	out = append(out, `],"at_least_one":`...)
	if spec.Mode == ModeAuto {
		out = append(out, "false"...)
	} else {
		out = append(out, "true"...)
	}
	return append(out, "}}"...), nil
}
