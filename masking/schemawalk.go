package masking

import (
	"bytes"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// schemaNode is what the renderer reads of one schema object.
type schemaNode struct {
	ref                  string
	hasRef               bool
	constV               []byte
	enum                 [][]byte
	hasEnum              bool
	anyOf                [][]byte
	allOf                [][]byte
	types                []string // nil when absent or malformed
	nullable             bool
	properties           []jsonMember
	hasProperties        bool
	required             []string
	additional           []byte // nil when absent
	patternProperties    bool
	items                []byte   // a schema
	itemsTuple           [][]byte // items as an array (drafts 4–7)
	prefixItems          [][]byte
	hasPrefixItems       bool
	additionalItems      []byte
	minItems, maxItems   int    // -1 when absent
	minLength, maxLength int    // -1 when absent
	other                bool   // a keyword that constrains and is not rendered
	grammar              []byte // x-grammar: a string's grammar
	pattern              []byte // pattern, as written (rendered for answers only)
	minimum, exclMinimum []byte // lower bounds, as written (rendered for answers only)
	maximum              []byte // upper bound, as written (an answer's integer's safe bound only)
}

func parseNode(members []jsonMember) *schemaNode {
	n := &schemaNode{minItems: -1, maxItems: -1, minLength: -1, maxLength: -1}
	for _, m := range members {
		v := m.val
		switch m.key {
		case "$ref":
			n.ref, n.hasRef = jsonString(v)
		case "const":
			n.constV = v
		case "enum":
			n.enum, n.hasEnum = arrayElems(v)
		case "anyOf", "oneOf":
			if n.anyOf == nil { // both: either one is wider than the two
				if alts, ok := arrayElems(v); ok && len(alts) > 0 {
					n.anyOf = alts
				}
			}
		case "allOf":
			n.allOf, _ = arrayElems(v)
		case "type":
			if s, ok := jsonString(v); ok {
				n.types = []string{s}
			} else if ts, ok := arrayElems(v); ok {
				n.types = []string{}
				for _, t := range ts {
					s, ok := jsonString(t)
					if !ok {
						n.types = nil
						break
					}
					n.types = append(n.types, s)
				}
			}
		case "nullable":
			n.nullable = string(bytes.TrimSpace(v)) == "true"
		case "properties":
			n.properties, n.hasProperties = objectMembers(v)
		case "required":
			if rs, ok := arrayElems(v); ok {
				for _, r := range rs {
					if s, ok := jsonString(r); ok {
						n.required = append(n.required, s)
					}
				}
			}
		case "additionalProperties":
			n.additional = v
		case "patternProperties":
			ms, _ := objectMembers(v)
			n.patternProperties = len(ms) > 0
		case "items":
			if jsonKind(v) == '[' {
				n.itemsTuple, _ = arrayElems(v)
			} else {
				n.items = v
			}
		case "prefixItems":
			n.prefixItems, n.hasPrefixItems = arrayElems(v)
		case "additionalItems":
			n.additionalItems = v
		case "minItems":
			if c, ok := jsonCount(v); ok {
				n.minItems = c
			}
		case "maxItems":
			if c, ok := jsonCount(v); ok {
				n.maxItems = c
			}
		case "minLength":
			if c, ok := jsonCount(v); ok {
				n.minLength = c
			}
		case "maxLength":
			if c, ok := jsonCount(v); ok {
				n.maxLength = c
			}
		case GrammarKeyword:
			n.grammar = v
		case "pattern":
			n.pattern = v
		case "minimum":
			n.minimum = v
		case "exclusiveMinimum":
			n.exclMinimum = v
		case "maximum":
			n.maximum = v
		}
	}
	return n
}

// visit returns a GBNF term (a rule name or a literal) for schema s at the
// path hint. slot, unless -1, is the rule reserved for s (a $ref target):
// the rule s needs is written there, or made an alias of the term.
func (w *argRules) visit(s []byte, hint string, depth, slot int) string {
	members, ok := objectMembers(s)
	if !ok || depth > maxSchemaDepth {
		// true, false (no instance: the widest rule, as for anything the
		// renderer cannot express) or not a schema at all.
		switch t := string(bytes.TrimSpace(s)); {
		case depth > maxSchemaDepth:
			w.refuse("nesting", hint, fmt.Sprintf("subschemas deeper than %d levels are not rendered", maxSchemaDepth))
		case t == "false":
			w.refuse("false", hint, "a schema no value satisfies is not rendered")
		case t != "true":
			w.refuse("schema", hint, "it is not a schema (an object or a boolean)")
		}
		return w.alias(slot, "json-value")
	}
	n := parseNode(members)
	w.checkStrict(n, members, hint)
	switch {
	case n.hasRef:
		return w.alias(slot, w.ref(n.ref, depth))
	case n.constV != nil:
		if lit, ok := canonicalJSON(n.constV); ok {
			return w.alias(slot, w.literal(lit))
		}
		w.refuse("const", hint, "its value is not JSON")
		return w.alias(slot, "json-value")
	case n.hasEnum:
		return w.enum(n, hint, slot)
	case n.anyOf != nil:
		return w.union(hint, slot, w.alternatives(n.anyOf, hint, depth))
	case len(n.allOf) == 1 && n.types == nil && !n.hasProperties && n.items == nil && !n.hasPrefixItems:
		// One conjunct and nothing else that says what the value is
		// (pydantic's {"allOf": [{"$ref": …}], "description": …}): the
		// conjunct. Otherwise allOf is dropped, which is wider.
		return w.visit(n.allOf[0], hint, depth+1, slot)
	}
	types := n.types
	if types == nil {
		types = impliedTypes(n)
	}
	if len(types) == 0 {
		return w.alias(slot, "json-value")
	}
	if n.nullable && !slices.Contains(types, "null") {
		types = append(slices.Clip(types), "null")
	}
	if len(types) == 1 {
		return w.typed(n, types[0], hint, depth, slot)
	}
	var alts []string
	for _, t := range types {
		alts = append(alts, w.typed(n, t, ruleHint(hint, t), depth, -1))
	}
	return w.union(hint, slot, alts)
}

// impliedTypes is the type a schema without "type" takes from its keywords,
// as llama.cpp infers it: properties or a restricting additionalProperties
// make an object, items or prefixItems an array. Nil when nothing implies a
// type: any value.
func impliedTypes(n *schemaNode) []string {
	switch {
	case n.hasProperties || (n.additional != nil && string(bytes.TrimSpace(n.additional)) != "true"):
		return []string{"object"}
	case n.items != nil || n.itemsTuple != nil || n.hasPrefixItems:
		return []string{"array"}
	}
	return nil
}

func (w *argRules) literal(json string) string {
	var b strings.Builder
	writeGBNFLiteral(&b, json)
	return b.String()
}

// enum is the alternatives of an enum's values, less those its "type" rules
// out.
func (w *argRules) enum(n *schemaNode, hint string, slot int) string {
	var alts []string
	for _, v := range n.enum {
		if n.types != nil && !typeAdmits(n.types, n.nullable, jsonKind(v)) {
			continue
		}
		lit, ok := canonicalJSON(v)
		if !ok {
			w.refuse("enum", hint, "a value is not JSON")
			return w.alias(slot, "json-value")
		}
		alts = append(alts, w.literal(lit))
	}
	return w.union(hint, slot, alts)
}

// typeAdmits says whether a value starting with byte k may have one of types.
func typeAdmits(types []string, nullable bool, k byte) bool {
	for _, t := range types {
		switch {
		case t == "string" && k == '"',
			(t == "number" || t == "integer") && (k == '-' || k >= '0' && k <= '9'),
			t == "boolean" && (k == 't' || k == 'f'),
			t == "null" && k == 'n',
			t == "object" && k == '{',
			t == "array" && k == '[':
			return true
		}
	}
	return nullable && k == 'n'
}

// union joins alternatives, dropping repeats (an ambiguous grammar makes
// llama.cpp track each parse). None left means no value can be valid: the
// widest rule then, as for anything not expressed.
func (w *argRules) union(hint string, slot int, alts []string) string {
	var uniq []string
	for _, a := range alts {
		if a == "json-value" {
			return w.alias(slot, a)
		}
		if !slices.Contains(uniq, a) {
			uniq = append(uniq, a)
		}
	}
	switch len(uniq) {
	case 0:
		w.refuse("enum", hint, "no value is left that the schema admits")
		return w.alias(slot, "json-value")
	case 1:
		return w.alias(slot, uniq[0])
	}
	if slot < 0 {
		slot = w.reserve(hint)
	}
	w.rules[slot].alts = uniq
	return w.rules[slot].name
}

func (w *argRules) alternatives(schemas [][]byte, hint string, depth int) []string {
	out := make([]string, len(schemas))
	for i, s := range schemas {
		out[i] = w.visit(s, ruleHint(hint, strconv.Itoa(i)), depth+1, -1)
	}
	return out
}

// ref is the rule of a same-document $ref, rendered once (a recursive schema
// refers to its rule by name); other references (remote, anchors) admit any
// value.
func (w *argRules) ref(ref string, depth int) string {
	if name, ok := w.refs[ref]; ok {
		return name
	}
	target, ok := jsonPointer(w.doc, ref)
	if !ok {
		w.refuse("$ref", ref, "only references into the schema itself (#/…) are rendered")
		return "json-value"
	}
	hint := "ref"
	if i := strings.LastIndexByte(ref, '/'); i >= 0 && i+1 < len(ref) {
		hint = ruleHint("ref", ref[i+1:])
	}
	i := w.reserve(hint)
	w.refs[ref] = w.rules[i].name
	return w.visit(target, hint, depth+1, i)
}

// typed renders n as a value of one type.
func (w *argRules) typed(n *schemaNode, t, hint string, depth, slot int) string {
	switch t {
	case "string":
		if n.grammar != nil {
			if term, ok := w.grammarString(n.grammar, hint, slot); ok {
				return term
			}
			w.refuse(GrammarKeyword, hint, "the grammar does not translate")
		}
		if n.pattern != nil && w.strict {
			return w.patternString(n, hint, slot)
		}
		if n.minLength < 0 && n.maxLength < 0 {
			return w.alias(slot, "json-string")
		}
		lo, hi := max(n.minLength, 0), n.maxLength
		if hi >= 0 && hi < lo {
			hi = lo // no instance: the widest rule of the two bounds
		}
		return w.define(slot, hint, `"\"" `+repeat("json-char", lo, hi)+` "\""`)
	case "integer", "number":
		if w.strict && t == "integer" && safeBounds(n) {
			return w.safeInteger(n, hint, slot)
		}
		if w.strict && (n.minimum != nil || n.exclMinimum != nil) {
			return w.numberFloor(n, t, hint, slot)
		}
		if t == "integer" {
			return w.alias(slot, "json-int")
		}
		return w.alias(slot, "json-number")
	case "boolean":
		return w.alias(slot, "json-bool")
	case "null":
		return w.alias(slot, `"null"`)
	case "object":
		return w.object(n, hint, depth, slot)
	case "array":
		return w.array(n, hint, depth, slot)
	}
	w.refuse("type", hint, fmt.Sprintf("%q is not a JSON Schema type", t))
	return w.alias(slot, "json-value")
}
