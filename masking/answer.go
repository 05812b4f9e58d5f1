package masking

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/maskgate/maskgate/masking/lark"
)

// Answer is a structured output's JSON Schema (a Chat Completions
// response_format) rendered as GBNF rules for the whole answer, with the
// renderer the tools' arguments use, but strictly: where the arguments
// grammar would widen a keyword it does not express (the client checks
// arguments after decoding), an answer's schema is refused with a
// *SchemaError naming the keyword, since the answer's grammar is the only
// check there is. Build one per request; it is immutable.
type Answer struct {
	block argBlock
}

// SchemaError is a keyword of a structured output's schema the grammar cannot
// hold the answer to.
type SchemaError struct {
	// Keyword is the JSON Schema keyword (or "false", "$ref" for a
	// reference outside the document, "nesting" past 64 levels).
	Keyword string
	// At is the subschema's place, as property names and indexes joined by
	// "-" (the rule-name path; empty at the root).
	At string
	// Why says what the grammar cannot do.
	Why string
}

func (e *SchemaError) Error() string {
	at := "at the schema's root"
	if e.At != "" {
		at = "at " + e.At
	}
	return fmt.Sprintf("JSON Schema keyword %q %s cannot be enforced by the grammar: %s", e.Keyword, at, e.Why)
}

// AnyObject is the schema of response_format json_object: any JSON object.
const AnyObject = anyObject

// NewAnswer renders schema (JSON) for an answer. A keyword the renderer
// does not express is a *SchemaError; a schema that is not JSON an error.
func NewAnswer(schema []byte) (*Answer, error) {
	if !json.Valid(schema) {
		return nil, fmt.Errorf("masking: the answer's schema is not JSON")
	}
	w := &argRules{doc: schema, names: map[string]bool{}, refs: map[string]string{}, strict: true}
	term := w.visit(schema, "", 0, -1)
	w.breakLeftRecursion()
	if w.refused != nil {
		return nil, w.refused
	}
	return &Answer{block: argBlock{term: term, rules: w.text(), grammar: w.grammars > 0}}, nil
}

// answerPrefix names the answer's rules in a grammar: ans, ans-name-kv, …
// (a tool's are a0…, the call's call, tool, tn0…).
const answerPrefix = "ans"

// GBNF is the grammar of an answer alone: root is the schema's value, with
// nothing before or after it (the end of generation follows), then its
// rules and the JSON primitives.
func (a *Answer) GBNF() string {
	var b strings.Builder
	b.WriteString("root ::= ")
	writeBlock(&b, a.block.term, []byte(answerPrefix))
	b.WriteByte('\n')
	writeBlock(&b, a.block.rules, []byte(answerPrefix))
	b.WriteString(gbnfJSONRules)
	return b.String()
}

// GBNFOrAnswer is the grammar of an output that is either the calls GBNF(spec)
// allows, from the format's Lead (never lazy: the choice is made at the
// first token), or the answer: root ::= calls | answer. spec.Mode must be
// ModeAuto (a required call leaves no room for an answer: use GBNF). With no
// allowed tool it is the answer alone, which keeps every call out.
func (c *Catalog) GBNFOrAnswer(spec Spec, a *Answer) (Grammar, error) {
	if spec.Mode != ModeAuto {
		return Grammar{}, fmt.Errorf("masking: an answer beside calls needs tool_choice auto")
	}
	r, err := c.gbnfRender(spec)
	if err == ErrNoCallAllowed {
		return Grammar{Grammar: a.GBNF()}, nil
	}
	if err != nil {
		return Grammar{}, err
	}
	var b strings.Builder
	b.Grow(r.size() + len(a.block.rules) + 64)
	b.WriteString("root ::= calls | ")
	writeBlock(&b, a.block.term, []byte(answerPrefix))
	b.WriteString("\ncalls ::= ")
	r.writeCalls(&b, true)
	b.WriteString("\ncall ::= ")
	r.writeCall(&b, r.parts.open) // ends with the JSON primitives
	writeBlock(&b, a.block.rules, []byte(answerPrefix))
	return Grammar{Grammar: b.String(), PreservedTokens: r.parts.special}, nil
}

// patternString renders, for an answer, a string held to its pattern: a regular
// expression anchored at both ends (^…$; JSON Schema's pattern searches, and an
// unanchored one is refused rather than rendered as a search) in the subset masking/lark
// translates, the string's other keywords absent. What it cannot render is refused.
func (w *argRules) patternString(n *schemaNode, hint string, slot int) string {
	src, ok := jsonString(n.pattern)
	switch {
	case !ok:
		w.refuse("pattern", hint, "it is not a string")
	case n.minLength >= 0 || n.maxLength >= 0 || n.grammar != nil:
		w.refuse("pattern", hint, "a pattern is rendered only without minLength, maxLength or x-grammar beside it")
	case !strings.HasPrefix(src, "^") || !strings.HasSuffix(src, "$") || strings.HasSuffix(src, `\$`):
		w.refuse("pattern", hint, "only a pattern anchored at both ends (^…$) is rendered")
	default:
		g, err := lark.Regex(src)
		if err != nil {
			w.refuse("pattern", hint, err.Error())
			break
		}
		if term, ok := w.grammarRules(g, hint, slot); ok {
			return term
		}
		w.refuse("pattern", hint, "it does not render")
	}
	return w.alias(slot, "json-string")
}

// numberFloor renders, for an answer, an integer or number held to the lower bounds the
// grammar spells without arithmetic: an integer of at least 0 (minimum 0,
// exclusiveMinimum -1) or at least 1 (minimum 1, exclusiveMinimum 0) — pydantic's
// NonNegativeInt and PositiveInt, ge=0, gt=0 — and a number of at least 0 (minimum 0).
// Any other bound is refused.
func (w *argRules) numberFloor(n *schemaNode, t, hint string, slot int) string {
	const digits = `[1-9] [0-9]{0,15}`
	floor, ok := math.Inf(-1), true
	if n.minimum != nil {
		v, err := strconv.ParseFloat(string(bytes.TrimSpace(n.minimum)), 64)
		ok = ok && err == nil
		floor = max(floor, v)
	}
	keyword := "minimum"
	if n.exclMinimum != nil {
		keyword = "exclusiveMinimum"
		v, err := strconv.ParseFloat(string(bytes.TrimSpace(n.exclMinimum)), 64)
		ok = ok && err == nil && t == "integer" && v == math.Trunc(v)
		floor = max(floor, v+1)
	}
	switch {
	case !ok:
		w.refuse(keyword, hint, "only an integer's exclusiveMinimum, a whole number, is rendered")
	case t == "integer" && floor == 0:
		return w.define(slot, hint, `"0" | `+digits)
	case t == "integer" && floor == 1:
		return w.define(slot, hint, digits)
	case t == "number" && floor == 0 && n.exclMinimum == nil:
		return w.define(slot, hint, `( "0" | `+digits+` ) ( "." [0-9]+ )? ( [eE] [-+]? [0-9]{1,15} )?`)
	default:
		w.refuse(keyword, hint, "only the lower bounds 0 and 1 (integers) and 0 (numbers) are rendered")
	}
	return w.alias(slot, "json-number")
}

// maxSafe is 2^53-1, the largest integer a JSON number holds exactly: zod's int()
// (the AI SDK's, LangChain's and the Agents SDK's schemas) writes it as an integer's
// maximum, and its negative as the minimum when none is set.
const maxSafe = 1<<53 - 1

// safeBounds says n is an integer whose upper bound is at least 2^53-1 and whose lower
// bound, if any, is at most -(2^53-1), 0 or 1: bounds an integer of at most 15 digits
// (below 10^15, under 2^53-1) keeps, so safeInteger renders them exactly enough (within
// them, never wider).
func safeBounds(n *schemaNode) bool {
	if n.maximum == nil || n.exclMinimum != nil || (n.types != nil && !slices.Equal(n.types, []string{"integer"})) {
		return false
	}
	hi, err := strconv.ParseFloat(string(bytes.TrimSpace(n.maximum)), 64)
	if err != nil || hi < maxSafe {
		return false
	}
	if n.minimum == nil {
		return true
	}
	lo, err := strconv.ParseFloat(string(bytes.TrimSpace(n.minimum)), 64)
	return err == nil && (lo <= -maxSafe || lo == 0 || lo == 1)
}

// safeInteger renders an integer within safe bounds (safeBounds): at most 15 digits,
// at least 0 or 1 where the minimum says so.
func (w *argRules) safeInteger(n *schemaNode, hint string, slot int) string {
	const digits = `[1-9] [0-9]{0,14}`
	lo := math.Inf(-1)
	if n.minimum != nil {
		lo, _ = strconv.ParseFloat(string(bytes.TrimSpace(n.minimum)), 64) // safeBounds read it
	}
	switch lo {
	case 0:
		return w.define(slot, hint, `"0" | `+digits)
	case 1:
		return w.define(slot, hint, digits)
	}
	return w.define(slot, hint, `"-"? ( "0" | `+digits+` )`)
}

// text is the rules as GBNF lines.
func (w *argRules) text() string {
	var b strings.Builder
	for _, r := range w.rules {
		b.WriteString(r.name)
		b.WriteString(" ::= ")
		if r.alts != nil {
			b.WriteString(strings.Join(r.alts, " | "))
		} else {
			b.WriteString(r.body)
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// refuse records, in strict rendering, the first keyword the grammar widens.
func (w *argRules) refuse(keyword, hint, why string) {
	if w.strict && w.refused == nil {
		w.refused = &SchemaError{Keyword: keyword, At: hint, Why: why}
	}
}

// unexpressed are the JSON Schema keywords that constrain a value and that
// the renderer does not express (see the package doc).
var unexpressed = map[string]string{
	"format":  "formats are not rendered",
	"maximum": "upper bounds are not rendered", "exclusiveMaximum": "upper bounds are not rendered",
	"multipleOf": "numeric bounds are not rendered", "minProperties": "member counts are not rendered",
	"maxProperties": "member counts are not rendered", "uniqueItems": "uniqueness is not rendered",
	"contains": "contains is not rendered", "minContains": "contains is not rendered", "maxContains": "contains is not rendered",
	"not": "negation is not rendered", "if": "conditionals are not rendered", "then": "conditionals are not rendered",
	"else": "conditionals are not rendered", "dependentSchemas": "dependencies are not rendered",
	"dependentRequired": "dependencies are not rendered", "dependencies": "dependencies are not rendered",
	"propertyNames": "key schemas are not rendered", "patternProperties": "key patterns are not rendered",
	"unevaluatedProperties": "unevaluated members are not rendered", "unevaluatedItems": "unevaluated items are not rendered",
	"$dynamicRef": "dynamic references are not rendered", "$recursiveRef": "dynamic references are not rendered",
}

// honoured are the constraining keywords the renderer reads, by the keyword
// that decides how a schema is rendered (visit's order: $ref, const, enum,
// anyOf/oneOf, a lone allOf, then the type's keywords); a constraining
// keyword beside them that the chosen rendering does not read is widened.
var honoured = map[string][]string{
	"$ref":  {"$ref"},
	"const": {"const", "type", "nullable"},
	"enum":  {"enum", "type", "nullable"},
	"anyOf": {"anyOf"},
	"oneOf": {"oneOf"},
	"allOf": {"allOf"},
	"": {"type", "nullable", "properties", "required", "additionalProperties", "items", "prefixItems",
		"additionalItems", "minItems", "maxItems", "minLength", "maxLength", GrammarKeyword, "pattern", "minimum", "exclusiveMinimum"},
}

// constraining is every keyword honoured names.
var constraining = func() map[string]bool {
	m := map[string]bool{}
	for _, ks := range honoured {
		for _, k := range ks {
			m[k] = true
		}
	}
	return m
}()

// checkStrict refuses, in strict rendering, what visit would widen in node n
// (members, its keywords): a keyword not expressed, a constraining keyword
// the chosen rendering drops, a count past maxRepeat, an unknown type.
func (w *argRules) checkStrict(n *schemaNode, members []jsonMember, hint string) {
	if !w.strict || w.refused != nil {
		return
	}
	rule := ""
	switch {
	case n.hasRef:
		rule = "$ref"
	case n.constV != nil:
		rule = "const"
	case n.hasEnum:
		rule = "enum"
	case n.anyOf != nil:
		if hasKey(members, "anyOf") && hasKey(members, "oneOf") {
			w.refuse("oneOf", hint, "anyOf and oneOf together are not rendered")
			return
		}
		rule = "anyOf"
		if hasKey(members, "oneOf") {
			rule = "oneOf"
		}
	case n.allOf != nil:
		if len(n.allOf) == 1 && n.types == nil && !n.hasProperties && n.items == nil && !n.hasPrefixItems {
			rule = "allOf"
		} else {
			w.refuse("allOf", hint, "allOf is rendered only as a lone wrapper of one schema")
			return
		}
	}
	for _, m := range members {
		if why, ok := unexpressed[m.key]; ok {
			if m.key == "uniqueItems" && string(bytes.TrimSpace(m.val)) == "false" {
				continue
			}
			if m.key == "maximum" && safeBounds(n) {
				continue // a safe integer's bound: safeInteger renders within it
			}
			w.refuse(m.key, hint, why)
			return
		}
		if constraining[m.key] && !hasString(honoured[rule], m.key) {
			w.refuse(m.key, hint, "it is dropped beside "+orType(rule))
			return
		}
	}
	if rule == "" && n.types == nil && impliedTypes(n) == nil {
		for _, m := range members {
			if m.key != "nullable" && constraining[m.key] {
				w.refuse(m.key, hint, "a schema without type that implies none is rendered as any value")
				return
			}
		}
	}
	if n.types == nil && hasKey(members, "type") {
		w.refuse("type", hint, "it is neither a type name nor a list of them")
		return
	}
	for _, t := range n.types {
		switch t {
		case "string", "integer", "number", "boolean", "null", "object", "array":
		default:
			w.refuse("type", hint, fmt.Sprintf("%q is not a JSON Schema type", t))
			return
		}
	}
	for _, c := range []struct {
		k string
		v int
	}{{"minItems", n.minItems}, {"maxItems", n.maxItems}, {"minLength", n.minLength}, {"maxLength", n.maxLength}} {
		if c.v > maxRepeat {
			w.refuse(c.k, hint, fmt.Sprintf("counts above %d are not rendered", maxRepeat))
			return
		}
	}
}

func orType(rule string) string {
	if rule == "" {
		return "type"
	}
	return rule
}

func hasKey(members []jsonMember, k string) bool {
	for _, m := range members {
		if m.key == k {
			return true
		}
	}
	return false
}

func hasString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// PrefixRoot returns grammar (GBNF whose first rule is root) with root preceded by the
// literal text: an output that must first close what the prompt opened (a reasoning
// block a template opens, "</think>\n\n") before the grammar's own language.
func PrefixRoot(grammar, text string) string {
	body, rest, ok := strings.Cut(strings.TrimPrefix(grammar, "root ::= "), "\n")
	if !ok || !strings.HasPrefix(grammar, "root ::= ") {
		return grammar
	}
	var b strings.Builder
	b.WriteString("root ::= ")
	writeGBNFLiteral(&b, text)
	b.WriteString(" ( ")
	b.WriteString(body)
	b.WriteString(" )\n")
	b.WriteString(rest)
	return b.String()
}
