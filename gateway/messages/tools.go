package messages

import (
	"strconv"

	"github.com/maskgate/maskgate/gateway/door"
	"github.com/maskgate/maskgate/gateway/pdftext"
)

// translator holds what one Decode has learnt so far.
type translator struct {
	opt Options
	r   *Request
	pdf *pdftext.Budget // what the request's PDFs may still cost
	// custom is the set of custom tool names; server maps a server tool's name to its type.
	custom map[string]bool
	server map[string]string
	// lastRole is the role of the last message read.
	lastRole string
	// historic says the message being read is history: an assistant message follows it.
	historic bool
}

func (t *translator) refuse() bool { return t.opt.Hosted == HostedRefuse }

// tools translates the tools array. A custom tool ("type" absent, null or "custom")
// becomes {"type":"function","function":{"name","description","parameters","strict"}}:
// name, description and input_schema (as parameters) are the client's bytes, and strict
// is copied when it is a boolean. cache_control, defer_loading (names kept in
// Request.Deferred), input_examples, allowed_callers and eager_input_streaming have no
// chat equivalent and are not sent. Any other "type" is a server tool: dropped (its type
// kept in Request.Dropped) or refused, per Options.Hosted.
func (t *translator) tools(raw []byte) *door.Error {
	list, ok := elements(raw)
	if !ok {
		return bad("tools", "must be an array of tools, got %s", kind(raw))
	}
	t.custom = make(map[string]bool, len(list))
	t.server = map[string]string{}
	var out [][]byte
	for i, el := range list {
		p := "tools." + strconv.Itoa(i)
		o, ok := object(el)
		if !ok {
			return bad(p, "each tool must be an object, got %s", kind(el))
		}
		if cc, ok := o.Get("cache_control"); ok && !isNull(cc) {
			t.r.CacheBreakpoints++
		}
		name, _ := o.Get("name")
		typ := ""
		if v, ok := o.Get("type"); ok && !isNull(v) {
			if !isString(v) {
				return bad(p+".type", "must be a string, got %s", kind(v))
			}
			typ = unquote(v)
		}
		if typ != "" && typ != "custom" {
			if t.refuse() {
				return bad(p+".type", "tool type %q is one of Anthropic's server tools, which this gateway does not run; send custom tools (name, description, input_schema) only", typ)
			}
			t.r.Dropped = append(t.r.Dropped, typ)
			if isString(name) {
				t.server[unquote(name)] = typ
			}
			continue
		}
		if !isString(name) || len(name) == 2 {
			return bad(p+".name", "Field required: a non-empty string")
		}
		n := unquote(name)
		if t.custom[n] {
			return bad(p+".name", "tool name %q is used by an earlier tool; tool names must be unique", n)
		}
		t.custom[n] = true
		schema, ok := o.Get("input_schema")
		if !ok || isNull(schema) {
			return bad(p+".input_schema", "Field required")
		}
		if !isObject(schema) {
			return bad(p+".input_schema", "must be a JSON schema object, got %s", kind(schema))
		}
		desc, _ := o.Get("description")
		if !isNull(desc) && !isString(desc) {
			return bad(p+".description", "must be a string, got %s", kind(desc))
		}
		var strict []byte
		if v, ok := o.Get("strict"); ok && !isNull(v) {
			if _, ok := boolean(v); !ok {
				return bad(p+".strict", "must be a boolean, got %s", kind(v))
			}
			strict = v
		}
		if v, ok := o.Get("defer_loading"); ok && !isNull(v) {
			d, ok := boolean(v)
			if !ok {
				return bad(p+".defer_loading", "must be a boolean, got %s", kind(v))
			}
			if d {
				t.r.Deferred = append(t.r.Deferred, n)
			}
		}
		b := make([]byte, 0, len(name)+len(desc)+len(schema)+64)
		b = append(b, `{"type":"function","function":{"name":`...)
		b = append(b, name...)
		if isString(desc) {
			b = append(b, `,"description":`...)
			b = append(b, desc...)
		}
		b = append(b, `,"parameters":`...)
		b = append(b, schema...)
		if strict != nil {
			b = append(b, `,"strict":`...)
			b = append(b, strict...)
		}
		out = append(out, append(b, "}}"...))
	}
	if len(out) > 0 {
		t.r.Tools = appendArray(nil, out)
	}
	return nil
}

// toolChoice maps tool_choice: auto → "auto", any → "required", none → "none", tool →
// {"type":"function","function":{"name"}}; disable_parallel_tool_use: true →
// parallel_tool_calls false. With no custom tools left, auto and none are left out and
// any and tool are refused, since no call could satisfy them.
func (t *translator) toolChoice(raw []byte) *door.Error {
	o, ok := object(raw)
	if !ok {
		return bad("tool_choice", "must be an object with a type (auto, any, tool or none), got %s", kind(raw))
	}
	typRaw, _ := o.Get("type")
	if !isString(typRaw) {
		return bad("tool_choice.type", "Field required: auto, any, tool or none")
	}
	if v, ok := o.Get("disable_parallel_tool_use"); ok && !isNull(v) {
		d, ok := boolean(v)
		if !ok {
			return bad("tool_choice.disable_parallel_tool_use", "must be a boolean, got %s", kind(v))
		}
		if d {
			f := false
			t.r.ParallelToolCalls = &f
		}
	}
	var choice []byte
	forced := false
	switch typ := unquote(typRaw); typ {
	case "auto":
		choice = []byte(`"auto"`)
	case "none":
		choice = []byte(`"none"`)
	case "any":
		choice, forced = []byte(`"required"`), true
	case "tool":
		name, _ := o.Get("name")
		if !isString(name) {
			return bad("tool_choice.name", "Field required: the name of the tool to call")
		}
		n := unquote(name)
		if st, ok := t.server[n]; ok && !t.custom[n] {
			return bad("tool_choice.name", "tool_choice names %q, a server tool (%s) this gateway does not run", n, st)
		}
		if !t.custom[n] {
			return bad("tool_choice.name", "tool_choice names %q, which is not in tools", n)
		}
		b := append([]byte(`{"type":"function","function":{"name":`), name...)
		choice, forced = append(b, "}}"...), true
	default:
		return bad("tool_choice.type", "must be auto, any, tool or none, got %q", typ)
	}
	if len(t.r.Tools) == 0 {
		if forced {
			return bad("tool_choice", "tool_choice requires a tool call, but the request has no tools this gateway can run")
		}
		return nil
	}
	t.r.ToolChoice = choice
	return nil
}
