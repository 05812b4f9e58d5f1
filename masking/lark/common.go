package lark

import (
	"fmt"
	"slices"
)

// commonSource is lark's grammars/common.lark (lark-parser 1.x) as far as it
// is in the subset, read by Parse's own parser. ESCAPED_STRING is written
// without common.lark's look-behind (/(?<!\\)(\\\\)*?/), matching the same
// strings: a quote, then characters other than a quote, a backslash or a
// newline, or a backslash and any character but a newline, then a quote.
// C_COMMENT (a lazy match up to "*/") has no grammar equivalent and is
// refused.
const commonSource = `
DIGIT: "0".."9"
HEXDIGIT: "a".."f"|"A".."F"|DIGIT
INT: DIGIT+
SIGNED_INT: ["+"|"-"] INT
DECIMAL: INT "." INT? | "." INT
_EXP: ("e"|"E") SIGNED_INT
FLOAT: INT _EXP | DECIMAL _EXP?
SIGNED_FLOAT: ["+"|"-"] FLOAT
NUMBER: FLOAT | INT
SIGNED_NUMBER: ["+"|"-"] NUMBER
ESCAPED_STRING: "\"" /([^"\\\n]|\\.)*/ "\""
LCASE_LETTER: "a".."z"
UCASE_LETTER: "A".."Z"
LETTER: UCASE_LETTER | LCASE_LETTER
WORD: LETTER+
CNAME: ("_"|LETTER) ("_"|LETTER|DIGIT)*
WS_INLINE: (" "|/\t/)+
WS: /[ \t\f\r\n]/+
CR: /\r/
LF: /\n/
NEWLINE: (CR? LF)+
SH_COMMENT: /#[^\n]*/
CPP_COMMENT: /\/\/[^\n]*/
SQL_COMMENT: /--[^\n]*/
start: ""
`

// commonPrefix names common's definitions that an import pulls in without
// naming them; Lark names never hold "__" followed by this.
const commonPrefix = "common__"

// addImports adds each imported terminal under its local name, and the
// common terminals it uses under commonPrefix names.
func (g *Grammar) addImports(imports map[string]string) error {
	if len(imports) == 0 {
		return nil
	}
	common, err := parseCommon()
	if err != nil {
		return err
	}
	// Sorted by local name so the rendering is the same on every call.
	locals := make([]string, 0, len(imports))
	for l := range imports {
		locals = append(locals, l)
	}
	slices.Sort(locals)
	var deps []string
	for _, local := range locals {
		name := imports[local]
		e, ok := common.defs[name]
		if !ok || name == "start" {
			return &Error{Msg: fmt.Sprintf("%%import common.%s: not a terminal of common.lark in the subset", name)}
		}
		if _, dup := g.defs[local]; dup {
			return &Error{Msg: fmt.Sprintf("%s is both defined and imported", local)}
		}
		g.names = append(g.names, local)
		g.defs[local] = renameRefs(e, commonPrefix)
		deps = append(deps, refsOf(e)...)
	}
	for len(deps) > 0 {
		name := deps[0]
		deps = deps[1:]
		local := commonPrefix + name
		if _, done := g.defs[local]; done {
			continue
		}
		e := common.defs[name]
		g.names = append(g.names, local)
		g.defs[local] = renameRefs(e, commonPrefix)
		deps = append(deps, refsOf(e)...)
	}
	return nil
}

func parseCommon() (*Grammar, error) {
	toks, err := lex(commonSource)
	if err != nil {
		return nil, err
	}
	p := &parser{toks: toks}
	g := &Grammar{defs: map[string]expr{}}
	for {
		p.skipNL()
		if p.peek().kind == tEOF {
			return g, nil
		}
		name, e, err := p.definition()
		if err != nil {
			return nil, fmt.Errorf("common.lark: %w", err)
		}
		g.names = append(g.names, name)
		g.defs[name] = e
	}
}

// refsOf lists the names e refers to, in order, with repeats.
func refsOf(e expr) []string {
	var out []string
	walk(e, func(x expr) {
		if r, ok := x.(ref); ok {
			out = append(out, string(r))
		}
	})
	return out
}

func walk(e expr, f func(expr)) {
	f(e)
	switch x := e.(type) {
	case seq:
		for _, y := range x {
			walk(y, f)
		}
	case alt:
		for _, y := range x {
			walk(y, f)
		}
	case rep:
		walk(x.x, f)
	}
}

func renameRefs(e expr, prefix string) expr {
	switch x := e.(type) {
	case ref:
		return ref(prefix + string(x))
	case seq:
		out := make(seq, len(x))
		for i, y := range x {
			out[i] = renameRefs(y, prefix)
		}
		return out
	case alt:
		out := make(alt, len(x))
		for i, y := range x {
			out[i] = renameRefs(y, prefix)
		}
		return out
	case rep:
		return rep{x: renameRefs(x.x, prefix), min: x.min, max: x.max}
	}
	return e
}
