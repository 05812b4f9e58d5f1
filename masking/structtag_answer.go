package masking

import (
	"bytes"
	"fmt"
)

// StructuralTagOrAnswer turns a structural tag whose calls are required (StructuralTag
// in ModeRequired) into one whose output is one of those calls or an answer held to
// schema (JSON Schema, as the client sent it):
//
//	{"type":"structural_tag","format":{"type":"or","elements":[
//	 TAG_1, …, TAG_n, {"type":"json_schema","json_schema":SCHEMA}]}}
//
// with each allowed tool's tag as StructuralTag writes it, and, for a format with a
// Lead (harmony, DeepSeek), the calls as {"type":"sequence","elements":[LEAD,
// {"type":"or","elements":[TAG_1, …]}]} (DeepSeek's closing text, which no tag's end
// carries, as a third element: one call is the last). This is how a client's structured output and
// the gateway's allowed calls go to vLLM and SGLang as one constraint (vLLM takes one
// kind per request). xgrammar (0.1.27, as vLLM's 0.1.29) compiles "or" only over
// formats that end, so the free text and repetition of triggered_tags cannot sit in it:
// beside an answer the output is one call, never several. xgrammar's JSON Schema
// reading, not this package's renderer, holds the answer.
func StructuralTagOrAnswer(f Format, tag, schema []byte) ([]byte, error) {
	bad := fmt.Errorf("masking: %.80s is not a required calls' structural tag and a schema object", tag)
	format, ok := member(tag, "format")
	if !ok || jsonKind(schema) != '{' {
		return nil, bad
	}
	var lead []byte
	triggered := format
	if typ, _ := member(format, "type"); string(typ) == `"sequence"` {
		elems, _ := member(format, "elements")
		parts, ok := arrayElems(elems)
		if !ok || len(parts) != 2 {
			return nil, bad
		}
		lead, triggered = parts[0], parts[1]
	}
	tags, ok := member(triggered, "tags")
	if !ok {
		return nil, bad
	}
	list, ok := arrayElems(tags)
	if !ok || len(list) == 0 {
		return nil, bad
	}
	parts, err := partsOf(f)
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	b.Grow(len(tag) + len(schema) + 128)
	b.WriteString(`{"type":"structural_tag","format":{"type":"or","elements":[`)
	if lead != nil {
		b.WriteString(`{"type":"sequence","elements":[`)
		b.Write(lead)
		b.WriteString(`,{"type":"or","elements":`)
		b.Write(tags)
		b.WriteByte('}')
		if parts.tail != "" {
			b.WriteString(`,{"type":"const_string","value":`)
			b.Write(appendJSONString(nil, parts.tail))
			b.WriteByte('}')
		}
		b.WriteString(`]}`)
	} else {
		b.Write(bytes.TrimSpace(bytes.TrimSuffix(bytes.TrimPrefix(bytes.TrimSpace(tags), []byte("[")), []byte("]"))))
	}
	b.WriteString(`,{"type":"json_schema","json_schema":`)
	b.Write(bytes.TrimSpace(schema))
	b.WriteString(`}]}}`)
	return b.Bytes(), nil
}

// member is the value of key in the JSON object v.
func member(v []byte, key string) ([]byte, bool) {
	ms, ok := objectMembers(v)
	if !ok {
		return nil, false
	}
	for _, m := range ms {
		if m.key == key {
			return m.val, true
		}
	}
	return nil, false
}
