package masking

import (
	"encoding/json"
	"slices"
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
// at_least_one is true in ModeRequired and ModeSpecified, where xgrammar
// then starts the output with a call. The trigger is the format's Trigger in
// every mode, since every call (not only the first) starts with it. Each
// begin is the call's fixed text up to the arguments and each end what
// follows them (empty for Mistral, whose calls have no end marker). Each
// schema is params[name] compacted (key order kept, so the bytes follow the
// input bytes), or {"type":"object"} when absent or null. An invalid schema
// is an error naming the tool. ModeAuto with no name gives ErrNoCallAllowed.
//
// A format whose output holds one call (Llama 3, harmony), and under
// spec.OneCall (parallel_tool_calls: false) Hermes and Mistral, has
// "stop_after_first":true: the output ends with that call, as the grammar's
// does. DeepSeek under OneCall still allows parallel calls: its calls end
// with <｜tool▁calls▁end｜> after the last, which no tag's end carries. A required call in a format with a Lead (harmony's
// `<|channel|>commentary `, DeepSeek's `<｜tool▁calls▁begin｜>`) is a
// sequence: the Lead as a const_string, then the triggered tags, since
// at_least_one alone would make the model skip the Lead and emit a call
// its engine's parser does not read (vLLM's DeepSeek V3.1 parser looks for
// `<｜tool▁calls▁begin｜>`):
//
//	{"type":"structural_tag","format":{"type":"sequence","elements":[
//	 {"type":"const_string","value":"<｜tool▁calls▁begin｜>"},
//	 {"type":"triggered_tags",...,"at_least_one":true}]}}
//
// Every field used is in xgrammar 0.1.27 and 0.1.29 (the version vLLM pins)
// alike: structural_tag, sequence, const_string, triggered_tags (triggers,
// tags, at_least_one, stop_after_first), tag (begin, content, end) and
// json_schema.
//
// It compacts the allowed tools' schemas on every call; a caller that
// renders many subsets of one catalog builds a [Catalog] once instead.
func StructuralTag(spec Spec, params map[string]json.RawMessage) ([]byte, error) {
	names, err := spec.names()
	if err != nil {
		return nil, err
	}
	parts, err := partsOf(spec.Format)
	if err != nil {
		return nil, err
	}
	if len(names) == 0 {
		return nil, ErrNoCallAllowed
	}
	c := newCatalog(names, params)
	ids := make([]int32, len(names))
	for i := range ids {
		ids[i] = int32(i)
	}
	return c.renderTag(nil, spec, parts, ids, nil)
}

// renderTag appends to dst the structural tag of the tools ids, in that
// order; see Catalog.allowed for ids past the catalog's tools, which have
// no schema. It renders every tag from the schemas: it is the reference the
// catalog's pieces (Catalog.AppendStructuralTag) are checked against, and
// the cheaper path for a catalog used once.
func (c *Catalog) renderTag(dst []byte, spec Spec, parts callParts, ids []int32, extra []string) ([]byte, error) {
	// The fixed parts are escaped once; each tag's begin is written from
	// them and the name without building the string.
	ep := escapeParts(parts)
	per := len(ep.open) + len(ep.mid) + len(ep.end) + len(tagFixed)
	size := 160
	for _, id := range ids {
		if int(id) >= len(c.names) {
			size += per + 2*len(extra[int(id)-len(c.names)]) + len(anyObject)
			continue
		}
		if err := c.schemaErr[id]; err != nil {
			return nil, err
		}
		size += per + len(c.jname[id]) + len(c.schema[id]) + len(c.content[id])
	}
	lead := spec.Mode != ModeAuto && parts.lead != ""
	if lead {
		size += len(parts.lead) + 80
	}
	out := slices.Grow(dst, size)
	out = appendTagHead(out, spec, parts)
	for i, id := range ids {
		if i > 0 {
			out = append(out, ',')
		}
		if int(id) >= len(c.names) {
			out = ep.appendTag(out, appendJSONChars(nil, extra[int(id)-len(c.names)]), anyObject, "")
			continue
		}
		out = ep.appendTag(out, c.jname[id], c.schema[id], c.content[id])
	}
	return appendTagTail(out, spec, parts), nil
}

// tagParts are a format's fixed parts of one tag, escaped for JSON: begin
// is open NAME mid, inside one string; end is a whole string.
type tagParts struct{ open, mid, end []byte }

func escapeParts(parts callParts) tagParts {
	return tagParts{
		open: appendJSONChars(nil, parts.open),
		mid:  appendJSONChars(nil, parts.mid),
		end:  appendJSONString(nil, parts.end),
	}
}

// appendTag appends one entry of "tags": the tag of the tool whose name,
// escaped, is jname, with schema as its arguments, or content (a whole
// content object) when it is not empty.
func (ep tagParts) appendTag(out, jname []byte, schema, content string) []byte {
	out = append(out, `{"type":"tag","begin":"`...)
	out = append(out, ep.open...)
	out = append(out, jname...)
	out = append(out, ep.mid...)
	if content != "" {
		out = append(out, `","content":`...)
		out = append(out, content...)
		out = append(out, `,"end":`...)
	} else {
		out = append(out, `","content":{"type":"json_schema","json_schema":`...)
		out = append(out, schema...)
		out = append(out, `},"end":`...)
	}
	out = append(out, ep.end...)
	return append(out, '}')
}

// appendTagHead appends what precedes the first entry of "tags".
func appendTagHead(out []byte, spec Spec, parts callParts) []byte {
	out = append(out, `{"type":"structural_tag","format":`...)
	if spec.Mode != ModeAuto && parts.lead != "" {
		out = append(out, `{"type":"sequence","elements":[{"type":"const_string","value":`...)
		out = appendJSONString(out, parts.lead)
		out = append(out, `},`...)
	}
	out = append(out, `{"type":"triggered_tags","triggers":[`...)
	out = appendJSONString(out, spec.Format.Trigger)
	return append(out, `],"tags":[`...)
}

// appendTagTail appends what follows the last entry of "tags".
func appendTagTail(out []byte, spec Spec, parts callParts) []byte {
	out = append(out, `],"at_least_one":`...)
	if spec.Mode == ModeAuto {
		out = append(out, "false"...)
	} else {
		out = append(out, "true"...)
	}
	if stopsAfterFirst(spec, parts) {
		out = append(out, `,"stop_after_first":true`...)
	}
	if spec.Mode != ModeAuto && parts.lead != "" {
		out = append(out, "}]"...)
	}
	return append(out, "}}"...)
}

// stopsAfterFirst says whether a tag ends the output at its first call: always in a
// format of one call per message, and under OneCall in a format whose calls need
// nothing after the last (DeepSeek's closing <｜tool▁calls▁end｜> is not in any tag's
// end, so there the tag cannot stop at the first call without cutting it off).
func stopsAfterFirst(spec Spec, parts callParts) bool {
	return !parts.multi || spec.OneCall && parts.tail == ""
}

// tagFixed is the fixed text of one tag, for sizing the output.
const tagFixed = `,{"type":"tag","begin":"","content":{"type":"json_schema","json_schema":},"end":}`
