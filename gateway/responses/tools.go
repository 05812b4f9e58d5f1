package responses

import (
	"errors"
	"fmt"

	"github.com/maskgate/maskgate/gateway/door"
	"github.com/maskgate/maskgate/gateway/pdftext"
	"github.com/maskgate/maskgate/masking"
	"github.com/maskgate/maskgate/masking/lark"
)

// decoder translates one request's tools, tool_choice and input.
type decoder struct {
	r   *Request
	opt Options
	c   conv
	pdf *pdftext.Budget // what the request's PDFs may still cost
}

func indexed(param string, i int) string { return fmt.Sprintf("%s[%d]", param, i) }

// hostedTools are the tool types OpenAI runs on its side; the gateway cannot.
var hostedTools = map[string]bool{
	"web_search": true, "web_search_preview": true, "web_search_preview_2025_03_11": true,
	"web_search_2025_08_26": true, "file_search": true, "code_interpreter": true,
	"computer_use_preview": true, "computer": true, "computer_use": true, "image_generation": true,
	"mcp": true, "programmatic_tool_calling": true,
}

// CustomParameters is the chat function a custom tool becomes: one free-text input
// (the Chat door's custom tools too).
const CustomParameters = `{"type":"object","properties":{"input":{"type":"string"}},"required":["input"],"additionalProperties":false}`

// GrammarParameters are the parameters of a custom tool with a grammar: its input
// held to the format, as sent, under masking.GrammarKeyword, which the engines'
// grammars and structural tags enforce while decoding (and the prompt shows the
// model).
func GrammarParameters(format []byte) []byte {
	const head = `{"type":"object","properties":{"input":{"type":"string","` + masking.GrammarKeyword + `":`
	const tail = `}},"required":["input"],"additionalProperties":false}`
	return append(append(append(make([]byte, 0, len(head)+len(format)+len(tail)), head...), format...), tail...)
}

// grammarFormat says a custom tool's format (checked) is a grammar, not text.
func grammarFormat(format []byte) bool {
	ff, e := object(format, "format")
	if e != nil {
		return false
	}
	ft, _ := ff.str("type")
	return ft == "grammar"
}

// toolSearchParameters are a client tool search's parameters when it declares none.
const toolSearchParameters = `{"type":"object","properties":{"query":{"type":"string","description":"What the tools to load should do."}},"required":["query"],"additionalProperties":false}`

const toolSearchDescription = "Search for tools to load, by what they should do. The tools found become callable."

// ToolSearchName is the chat function name of a client-executed tool_search tool.
const ToolSearchName = "tool_search"

// tool translates one Responses tool definition into chat functions: none when it is a
// hosted tool dropped, several for a namespace.
func (d *decoder) tool(raw []byte, param, ns string) ([]chatTool, *door.Error) {
	f, e := object(raw, param)
	if e != nil {
		return nil, e
	}
	typ, e := f.need("type")
	if e != nil {
		return nil, e
	}
	switch typ {
	case "function", "custom":
		nameRaw, e := f.rawStr("name")
		if e != nil {
			return nil, e
		}
		name, e := f.need("name")
		if e != nil {
			return nil, e
		}
		desc, e := f.rawStr("description")
		if e != nil {
			return nil, e
		}
		chatName := name
		if ns != "" {
			chatName = ns + "." + name
			nameRaw = quote(chatName)
		}
		fn := newObj(len(raw)+64).raw("name", nameRaw)
		if desc != nil {
			fn.raw("description", desc)
		}
		t := chatTool{name: chatName, kind: ToolName{Kind: typ, Namespace: ns, Name: name}, param: param}
		if deferred, e := f.boolean("defer_loading", false); e != nil {
			return nil, e
		} else {
			t.deferred = deferred
		}
		if typ == "function" {
			params, e := f.rawObject("parameters")
			if e != nil {
				return nil, e
			}
			strict, e := f.rawBool("strict")
			if e != nil {
				return nil, e
			}
			if params != nil {
				fn.raw("parameters", params)
			}
			if strict != nil {
				fn.raw("strict", strict)
			}
		} else {
			format, e := f.rawObject("format")
			if e != nil {
				return nil, e
			}
			if format != nil {
				ff, _ := object(format, f.param("format"))
				ft, e := ff.need("type")
				if e != nil {
					return nil, e
				}
				if ft != "text" && ft != "grammar" {
					return nil, invalid(ff.param("type"), "Invalid value for '%s': %q; expected text or grammar.", ff.param("type"), ft)
				}
				if ft == "grammar" {
					if e := checkGrammar(ff); e != nil {
						return nil, e
					}
				}
				t.grammar = format
			}
			if t.grammar != nil && grammarFormat(t.grammar) {
				fn.raw("parameters", GrammarParameters(t.grammar))
			} else {
				fn.raw("parameters", []byte(CustomParameters))
			}
		}
		t.def = newObj(len(raw)+96).str("type", "function").raw("function", fn.done()).done()
		return []chatTool{t}, nil
	case "namespace":
		if ns != "" {
			return nil, unsupported(f.param("type"), "A namespace cannot hold another namespace ('%s').", f.param("type"))
		}
		name, e := f.need("name")
		if e != nil {
			return nil, e
		}
		if _, e := f.rawStr("description"); e != nil {
			return nil, e
		}
		tools, e := f.rawArray("tools")
		if e != nil {
			return nil, e
		}
		if tools == nil {
			return nil, missing(f.param("tools"))
		}
		var out []chatTool
		for j, t := range elements(tools) {
			p := indexed(f.param("tools"), j)
			tf, e := object(t, p)
			if e != nil {
				return nil, e
			}
			if typ, _ := tf.str("type"); typ != "function" && typ != "custom" {
				return nil, unsupported(tf.param("type"), "A namespace holds function and custom tools, not %q.", typ)
			}
			ts, e := d.tool(t, p, name)
			if e != nil {
				return nil, e
			}
			if nsDeferred, _ := f.boolean("defer_loading", false); nsDeferred {
				for k := range ts {
					ts[k].deferred = true
				}
			}
			out = append(out, ts...)
		}
		return out, nil
	case "tool_search":
		exec, e := f.str("execution")
		if e != nil {
			return nil, e
		}
		if exec != "client" {
			return d.hosted(typ, f.param("type"))
		}
		desc, e := f.rawStr("description")
		if e != nil {
			return nil, e
		}
		params, e := f.rawObject("parameters")
		if e != nil {
			return nil, e
		}
		if desc == nil {
			desc = quote(toolSearchDescription)
		}
		if params == nil {
			params = []byte(toolSearchParameters)
		}
		fn := newObj(len(raw)+64).str("name", ToolSearchName).raw("description", desc).raw("parameters", params).done()
		return []chatTool{{
			name:  ToolSearchName,
			def:   newObj(len(fn)+32).str("type", "function").raw("function", fn).done(),
			kind:  ToolName{Kind: "tool_search", Name: ToolSearchName},
			param: param,
		}}, nil
	}
	if builtinTools[typ] {
		return []chatTool{builtin(typ, param)}, nil
	}
	if hostedTools[typ] {
		return d.hosted(typ, f.param("type"))
	}
	return nil, invalid(f.param("type"), "Unknown tool type %q at '%s'.", typ, param)
}

// hosted drops or refuses a hosted tool (or a hosted tool's item).
func (d *decoder) hosted(typ, param string) ([]chatTool, *door.Error) {
	if d.opt.refuse() {
		return nil, unsupported(param, "'%s' is a tool OpenAI hosts; this gateway cannot run it. Leave it out, or declare a function tool the client runs.", typ)
	}
	d.r.drop(typ)
	return nil, nil
}

// toolChoice translates tool_choice into chat's.
func (d *decoder) toolChoice(raw []byte) *door.Error {
	if raw == nil {
		return nil
	}
	const param = "tool_choice"
	if raw[0] == '"' {
		s := unquote(raw)
		switch s {
		case "auto", "none", "required":
			d.r.ToolChoice = raw
			return nil
		}
		return invalid(param, "Invalid value for 'tool_choice': %q; expected auto, none, required or an object.", s)
	}
	f, e := object(raw, param)
	if e != nil {
		return typeErr(param, "a string or an object", raw)
	}
	typ, e := f.need("type")
	if e != nil {
		return e
	}
	switch typ {
	case "function", "custom":
		name, e := f.need("name")
		if e != nil {
			return e
		}
		d.r.ToolChoice = choiceOf(d.resolve(name))
		return nil
	case "allowed_tools":
		mode, e := f.need("mode")
		if e != nil {
			return e
		}
		if mode != "auto" && mode != "required" {
			return invalid(f.param("mode"), "Invalid value for 'tool_choice.mode': %q; expected auto or required.", mode)
		}
		tools, e := f.rawArray("tools")
		if e != nil {
			return e
		}
		if tools == nil {
			return missing(f.param("tools"))
		}
		var allowed [][]byte
		for j, t := range elements(tools) {
			tf, e := object(t, indexed(f.param("tools"), j))
			if e != nil {
				return e
			}
			tt, e := tf.need("type")
			if e != nil {
				return e
			}
			switch {
			case tt == "function" || tt == "custom":
				name, e := tf.need("name")
				if e != nil {
					return e
				}
				allowed = append(allowed, choiceOf(d.resolve(name)))
			case tt == "tool_search":
				allowed = append(allowed, choiceOf(ToolSearchName))
			case builtinTools[tt]:
				allowed = append(allowed, choiceOf(tt))
			case hostedTools[tt]:
				if _, e := d.hosted(tt, tf.param("type")); e != nil {
					return e
				}
			default:
				return invalid(tf.param("type"), "Unknown tool type %q in 'tool_choice.tools'.", tt)
			}
		}
		if len(allowed) == 0 {
			if mode == "required" {
				return invalid(f.param("tools"), "'tool_choice' requires one of its allowed tools, and none of them can run on this gateway.")
			}
			d.r.ToolChoice = []byte(`"none"`)
			return nil
		}
		inner := newObj(64).str("mode", mode).raw("tools", array(allowed)).done()
		d.r.ToolChoice = newObj(len(inner)+48).str("type", "allowed_tools").raw("allowed_tools", inner).done()
		return nil
	}
	if builtinTools[typ] {
		d.r.ToolChoice = choiceOf(typ)
		return nil
	}
	if hostedTools[typ] || typ == "tool_search" {
		return unsupported(f.param("type"), "'tool_choice' forces the hosted tool '%s', which this gateway cannot run.", typ)
	}
	return invalid(f.param("type"), "Unknown 'tool_choice' type %q.", typ)
}

// resolve maps a name from tool_choice to its chat function name: itself when a tool has
// that chat name, else the one namespaced tool with that name; otherwise the name as it
// is (the engine answers for a tool it does not know).
func (d *decoder) resolve(name string) string {
	if _, ok := d.r.Names[name]; ok {
		return name
	}
	found := ""
	for chat, t := range d.r.Names {
		if t.Namespace != "" && t.Name == name {
			if found != "" {
				return name // ambiguous: leave it for the engine to refuse
			}
			found = chat
		}
	}
	if found != "" {
		return found
	}
	return name
}

func choiceOf(name string) []byte {
	fn := newObj(len(name)+16).str("name", name).done()
	return newObj(len(fn)+32).str("type", "function").raw("function", fn).done()
}

// checkGrammar refuses a custom tool's grammar the gateway could not translate for an
// engine (masking/lark's subset), naming the construct, so that a grammar is never
// silently dropped.
func checkGrammar(ff fields) *door.Error {
	syntax, e := ff.need("syntax")
	if e != nil {
		return e
	}
	def, e := ff.need("definition")
	if e != nil {
		return e
	}
	var err error
	switch syntax {
	case "lark":
		_, err = lark.Parse(def)
	case "regex":
		_, err = lark.Regex(def)
	default:
		return invalid(ff.param("syntax"), "Invalid value for '%s': %q; expected lark or regex.", ff.param("syntax"), syntax)
	}
	var le *lark.Error
	if errors.As(err, &le) {
		return unsupported(ff.prefix, "The %s grammar in '%s' is outside the subset this gateway enforces: %v.", syntax, ff.param("definition"), le)
	}
	if err != nil {
		return invalid(ff.prefix, "The %s grammar in '%s' could not be read: %v.", syntax, ff.param("definition"), err)
	}
	return nil
}
