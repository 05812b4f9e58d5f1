package masking

import (
	"bytes"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// A tool's arguments are constrained to its parameters' JSON Schema by GBNF
// rules rendered here, after llama.cpp's common/json-schema-to-grammar.cpp
// (its keyword coverage and object layout) with rules of this package's own:
// values carry no trailing whitespace (the call's fixed text follows at
// once), whitespace is the bounded ws rule, and every keyword the renderer
// does not express falls back to a rule at least as wide as the schema. The
// package doc lists what is expressed and which forms are canonical.

const (
	// maxSchemaDepth bounds nesting; deeper subschemas admit any JSON value.
	maxSchemaDepth = 64
	// maxRepeat bounds the counted repetitions a grammar spells out
	// (llama.cpp expands x{0,n} into n nested rules): a larger maximum is
	// left unbounded and a larger minimum lowered to it, both wider.
	maxRepeat = 256
)

// rulePrefix stands for a tool's rule-name prefix in a rendered block, so a
// catalog renders each tool once and names its rules by the tool's place in
// each grammar. It cannot occur in GBNF text: literals escape control bytes.
const rulePrefix = '\x00'

// argRules renders one tool's parameters as GBNF rules. Rule names start
// with rulePrefix; the block's root rule is rulePrefix alone.
type argRules struct {
	doc   []byte            // the whole schema, for $ref
	names map[string]bool   // rule names taken
	refs  map[string]string // same-document $ref → its rule
	rules []gbnfRule        // in order of creation
	// grammars counts the strings held to an x-grammar.
	grammars int
}

// gbnfRule is one rule. alts is set for the rules that consume nothing
// before their alternatives (unions, $ref targets): the only places left
// recursion can arise.
type gbnfRule struct {
	name, body string
	alts       []string
}

// argBlock is one tool's arguments in GBNF: term, a primitive (json-object)
// or the root of rules, lines "NAME ::= BODY". Rule names in both start with
// rulePrefix.
type argBlock struct {
	term  string
	rules string
	// grammar is set when a string of the arguments is held to an
	// x-grammar: the structural tag then carries the block as a grammar,
	// since xgrammar's JSON Schema reading would drop the keyword.
	grammar bool
}

// renderArgRules renders a tool whose parameters are params, a JSON Schema
// (JSON; nil or null for none, which admits any object). It never fails on
// valid JSON: what it cannot express widens.
func renderArgRules(params []byte) argBlock {
	if p := bytes.TrimSpace(params); len(p) == 0 || string(p) == "null" {
		params = []byte(anyObject)
	}
	w := &argRules{doc: params, names: map[string]bool{}, refs: map[string]string{}}
	term := w.visit(params, "", 0, -1)
	w.breakLeftRecursion()
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
	return argBlock{term: term, rules: b.String(), grammar: w.grammars > 0}
}

// reserve takes a rule name from hint (the path to the subschema) and
// returns its index; the body is filled in later, so rules keep their order
// of creation whatever the recursion does.
func (w *argRules) reserve(hint string) int {
	base := string(rulePrefix)
	if hint != "" {
		base += "-" + hint
	}
	name := base
	for i := 2; w.names[name]; i++ {
		name = base + "-" + strconv.Itoa(i)
	}
	w.names[name] = true
	w.rules = append(w.rules, gbnfRule{name: name})
	return len(w.rules) - 1
}

// add makes a rule of body and returns its name.
func (w *argRules) add(hint, body string) string {
	return w.define(-1, hint, body)
}

// define gives body to rule slot, reserved by the caller for the schema at
// hand, or to a new rule when slot is -1, and returns the rule's name.
func (w *argRules) define(slot int, hint, body string) string {
	if slot < 0 {
		slot = w.reserve(hint)
	}
	w.rules[slot].body = body
	return w.rules[slot].name
}

// alias makes slot (when there is one) stand for term and returns the term
// the caller should use.
func (w *argRules) alias(slot int, term string) string {
	if slot < 0 {
		return term
	}
	if term == w.rules[slot].name {
		term = "json-value" // {"$ref": "#"}: it says nothing of the value
	}
	w.rules[slot].alts = []string{term}
	return w.rules[slot].name
}

// ruleHint turns a property name into rule-name characters (llama.cpp
// allows [a-zA-Z0-9-]); uniqueness is reserve's job.
func ruleHint(parent, key string) string {
	var b strings.Builder
	dash := false
	for _, r := range key {
		if r < 128 && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			b.WriteRune(r)
			dash = false
		} else if !dash && b.Len() > 0 {
			b.WriteByte('-')
			dash = true
		}
		if b.Len() >= 24 {
			break
		}
	}
	s := strings.TrimRight(b.String(), "-")
	if s == "" {
		s = "x"
	}
	if parent == "" {
		return s
	}
	return parent + "-" + s
}

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
		return w.alias(slot, "json-value")
	}
	n := parseNode(members)
	switch {
	case n.hasRef:
		return w.alias(slot, w.ref(n.ref, depth))
	case n.constV != nil:
		if lit, ok := canonicalJSON(n.constV); ok {
			return w.alias(slot, w.literal(lit))
		}
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

// breakLeftRecursion widens to any value each rule through which a rule can
// reach itself before consuming a character ({"$ref": "#"}, or anyOf
// alternatives that refer back): llama.cpp refuses left-recursive grammars,
// and such a schema constrains nothing along that cycle. Only rules with
// alts consume nothing first, so only their alternatives are edges. The
// walk is in rule order, so equal schemas break equal cycles.
func (w *argRules) breakLeftRecursion() {
	index := make(map[string]int, len(w.rules))
	for i, r := range w.rules {
		index[r.name] = i
	}
	const (
		unseen = iota
		onPath
		done
	)
	state := make([]int, len(w.rules))
	var walk func(i int)
	walk = func(i int) {
		state[i] = onPath
		for _, a := range w.rules[i].alts {
			j, ok := index[a]
			if !ok {
				continue
			}
			switch state[j] {
			case onPath:
				w.rules[i].alts = []string{"json-value"}
				state[i] = done
				return
			case unseen:
				walk(j)
			}
		}
		state[i] = done
	}
	for i := range w.rules {
		if state[i] == unseen && w.rules[i].alts != nil {
			walk(i)
		}
	}
}

// typed renders n as a value of one type.
func (w *argRules) typed(n *schemaNode, t, hint string, depth, slot int) string {
	switch t {
	case "string":
		if n.grammar != nil {
			if term, ok := w.grammarString(n.grammar, hint, slot); ok {
				return term
			}
		}
		if n.minLength < 0 && n.maxLength < 0 {
			return w.alias(slot, "json-string")
		}
		lo, hi := max(n.minLength, 0), n.maxLength
		if hi >= 0 && hi < lo {
			hi = lo // no instance: the widest rule of the two bounds
		}
		return w.define(slot, hint, `"\"" `+repeat("json-char", lo, hi)+` "\""`)
	case "integer":
		return w.alias(slot, "json-int")
	case "number":
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
	return w.alias(slot, "json-value")
}

// repeat is item{lo,hi} in GBNF (hi < 0: unbounded), within maxRepeat.
func repeat(item string, lo, hi int) string {
	lo = min(lo, maxRepeat)
	if hi > maxRepeat {
		hi = -1
	}
	switch {
	case lo == 0 && hi < 0:
		return item + "*"
	case lo == 1 && hi < 0:
		return item + "+"
	case lo == 0 && hi == 1:
		return item + "?"
	case hi == 0:
		return ""
	case lo == hi && lo == 1:
		return item
	case hi < 0:
		return fmt.Sprintf("%s{%d,}", item, lo)
	case lo == hi:
		return fmt.Sprintf("%s{%d}", item, lo)
	}
	return fmt.Sprintf("%s{%d,%d}", item, lo, hi)
}

// sep is what stands between the members of an object or the elements of an
// array.
const sep = `ws "," ws`

// object renders an object: its properties in the schema's order, the
// required ones first and always present, then any in-order subset of the
// optional ones, then extra keys where the schema allows them, as llama.cpp
// lays objects out. A required name the properties lack is a required
// property of any value. Extra keys are refused when the schema has
// "properties" and additionalProperties is absent or false (as llama.cpp and
// OpenAI's strict mode read it), unless patternProperties may admit them.
func (w *argRules) object(n *schemaNode, hint string, depth, slot int) string {
	type prop struct {
		key    string
		schema []byte // nil: any value
	}
	var reqProps, optProps []prop
	seen := map[string]bool{}
	req := map[string]bool{}
	for _, r := range n.required {
		req[r] = true
	}
	for _, m := range n.properties {
		if seen[m.key] {
			continue
		}
		seen[m.key] = true
		if req[m.key] {
			reqProps = append(reqProps, prop{m.key, m.val})
		} else {
			optProps = append(optProps, prop{m.key, m.val})
		}
	}
	for _, r := range n.required {
		if !seen[r] {
			seen[r] = true
			reqProps = append(reqProps, prop{r, nil})
		}
	}
	add := bytes.TrimSpace(n.additional)
	anyExtra := n.patternProperties || (n.additional == nil && !n.hasProperties) || string(add) == "true"
	if len(reqProps)+len(optProps) == 0 && anyExtra {
		return w.alias(slot, "json-object")
	}
	if slot < 0 {
		slot = w.reserve(hint) // the object's rule before its parts'
	}

	kv := func(p prop) string {
		h := ruleHint(hint, p.key)
		v := "json-value"
		if p.schema != nil {
			v = w.visit(p.schema, h, depth+1, -1)
		}
		return w.add(h+"-kv", w.key(p.key)+` ws ":" ws `+v)
	}
	var reqKVs, opt []string
	for _, p := range reqProps {
		reqKVs = append(reqKVs, kv(p))
	}
	for _, p := range optProps {
		opt = append(opt, kv(p))
	}
	extra := ""
	switch {
	case anyExtra:
		extra = "json-value"
	case jsonKind(add) == '{':
		extra = w.visit(add, ruleHint(hint, "additional"), depth+1, -1)
	}
	extraKV := ""
	if extra != "" {
		k := "json-string"
		if len(seen) > 0 {
			keys := make([]string, 0, len(seen))
			for _, p := range append(slices.Clip(reqProps), optProps...) {
				keys = append(keys, p.key)
			}
			k = w.add(ruleHint(hint, "extra-key"), notStrings(keys))
		}
		extraKV = w.add(ruleHint(hint, "extra-kv"), k+` ws ":" ws `+extra)
		opt = append(opt, extraKV)
	}
	if len(reqKVs) == 0 && len(opt) == 0 {
		return w.define(slot, hint, `"{" ws "}"`)
	}

	// rest[i] is any in-order subset of opt[i:], each member after a
	// separator; the extra-key member, last, may repeat. rest[0] is never
	// needed.
	rest := make([]string, len(opt)+1)
	restSlot := make([]int, len(opt))
	for i := 1; i < len(opt); i++ {
		restSlot[i] = w.reserve(ruleHint(hint, "rest"))
		rest[i] = w.rules[restSlot[i]].name
	}
	repeatOp := func(i int) string {
		if extraKV != "" && i == len(opt)-1 {
			return "*"
		}
		return "?"
	}
	for i := 1; i < len(opt); i++ {
		body := "( " + sep + " " + opt[i] + " )" + repeatOp(i)
		if rest[i+1] != "" {
			body += " " + rest[i+1]
		}
		w.rules[restSlot[i]].body = body
	}
	var alts []string
	for i := range opt {
		a := opt[i]
		if repeatOp(i) == "*" {
			a += " ( " + sep + " " + extraKV + " )*"
		}
		if rest[i+1] != "" {
			a += " " + rest[i+1]
		}
		alts = append(alts, a)
	}
	var b strings.Builder
	b.WriteString(`"{" ws `)
	if len(reqKVs) > 0 {
		b.WriteString(strings.Join(reqKVs, " "+sep+" "))
		if len(alts) > 0 {
			b.WriteString(" ( " + sep + " ( " + strings.Join(alts, " | ") + " ) )?")
		}
		b.WriteString(` ws "}"`)
	} else {
		b.WriteString("( ( " + strings.Join(alts, " | ") + ` ) ws )? "}"`)
	}
	return w.define(slot, hint, b.String())
}

// key is a property name as the JSON string literal a model writes.
func (w *argRules) key(k string) string {
	return w.literal(string(append(appendJSONChars([]byte{'"'}, k), '"')))
}

// notStrings is a JSON string other than each of keys, after llama.cpp's
// _not_strings: a trie of the keys as a model writes them (appendJSONChars:
// raw UTF-8, and \", \\, \n… where JSON needs an escape), where at each
// node the next character either follows a key further or leaves every key.
// A key spelled otherwise (\u0061 for a) is not recognised as a declared
// one, nor is a key holding a control character when written with a
// different \u escape.
func notStrings(keys []string) string {
	type node struct {
		kids []string // characters as written: one rune or one escape
		next map[string]*node
		end  bool
	}
	root := &node{next: map[string]*node{}}
	for _, k := range keys {
		cur := root
		for _, u := range jsonCharUnits(appendJSONChars(nil, k)) {
			nx, ok := cur.next[u]
			if !ok {
				nx = &node{next: map[string]*node{}}
				cur.next[u] = nx
				cur.kids = append(cur.kids, u) // in key order: deterministic
			}
			cur = nx
		}
		cur.end = true
	}
	var b strings.Builder
	var walk func(n *node)
	walk = func(n *node) {
		// After the prefix so far: one more character that continues a
		// key, or one that leaves them all (then anything), or, when the
		// prefix is not a key itself, nothing more.
		b.WriteString("( ")
		var raw []rune
		var esc []byte
		for _, u := range n.kids {
			writeGBNFLiteral(&b, u)
			b.WriteByte(' ')
			walk(n.next[u])
			b.WriteString(" | ")
			if u[0] == '\\' {
				if u[1] != 'u' {
					esc = append(esc, u[1])
				}
			} else {
				r, _ := utf8.DecodeRuneInString(u)
				raw = append(raw, r)
			}
		}
		b.WriteString(`[^"\\\x7F\x00-\x1F`)
		for _, r := range raw {
			writeClassRune(&b, r)
		}
		b.WriteString(`] json-char* | "\\" `)
		if len(esc) == 0 {
			b.WriteString("json-escape")
		} else {
			b.WriteString("( [")
			for _, c := range []byte(`"\\/bfnrt`) {
				if !bytes.ContainsRune(esc, rune(c)) {
					writeClassRune(&b, rune(c))
				}
			}
			b.WriteString(`] | "u" [0-9a-fA-F]{4} )`)
		}
		b.WriteString(" json-char* )")
		if !n.end {
			b.WriteByte('?')
		}
	}
	b.WriteString(`"\"" `)
	walk(root)
	b.WriteString(` "\""`)
	return b.String()
}

// jsonCharUnits splits the inside of a JSON string into its characters as
// written: a rune, or an escape (\" or \u00e9).
func jsonCharUnits(s []byte) []string {
	var out []string
	for i := 0; i < len(s); {
		n := 1
		switch {
		case s[i] == '\\' && i+1 < len(s) && s[i+1] == 'u':
			n = min(6, len(s)-i)
		case s[i] == '\\':
			n = min(2, len(s)-i)
		default:
			_, n = utf8.DecodeRune(s[i:])
		}
		out = append(out, string(s[i:i+n]))
		i += n
	}
	return out
}

// writeClassRune writes r inside a GBNF character class.
func writeClassRune(b *strings.Builder, r rune) {
	switch {
	case r >= '0' && r <= '9', r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z':
		b.WriteRune(r)
	case r < 0x100:
		fmt.Fprintf(b, `\x%02X`, r)
	case r < 0x10000:
		fmt.Fprintf(b, `\u%04X`, r)
	default:
		fmt.Fprintf(b, `\U%08X`, r)
	}
}

// array renders an array: prefixItems (or a draft-4 items array) for the
// first elements, each present only as minItems requires, then items (or
// additionalItems) for the rest, within minItems and maxItems.
func (w *argRules) array(n *schemaNode, hint string, depth, slot int) string {
	prefix := n.prefixItems
	rest := n.items
	if !n.hasPrefixItems && n.itemsTuple != nil {
		prefix, rest = n.itemsTuple, n.additionalItems
	}
	lo, hi := max(n.minItems, 0), n.maxItems
	if hi >= 0 && hi < lo {
		hi = lo // no instance: keep the wider bound
	}
	if hi >= 0 && len(prefix) > hi {
		prefix = prefix[:hi]
	}
	restNone := string(bytes.TrimSpace(rest)) == "false" || (hi >= 0 && len(prefix) == hi)
	if restNone {
		lo = min(lo, len(prefix))
	}
	if len(prefix) == 0 && rest == nil && n.minItems < 0 && n.maxItems < 0 {
		return w.alias(slot, "json-array")
	}
	if slot < 0 {
		slot = w.reserve(hint) // the array's rule before its parts'
	}
	terms := make([]string, len(prefix))
	for i, p := range prefix {
		terms[i] = w.visit(p, ruleHint(hint, strconv.Itoa(i)), depth+1, -1)
	}
	restTerm := "json-value"
	if !restNone && rest != nil {
		restTerm = w.visit(rest, ruleHint(hint, "item"), depth+1, -1)
	}

	// after(i) is elements i… when i ≥ 1 elements came before.
	var after func(i int) string
	after = func(i int) string {
		if i < len(terms) {
			s := sep + " " + terms[i]
			if tail := after(i + 1); tail != "" {
				s += " " + tail
			}
			if i >= lo {
				return "( " + s + " )?"
			}
			return s
		}
		if restNone {
			return ""
		}
		rhi := -1
		if hi >= 0 {
			rhi = hi - i
		}
		return repeatGroup(sep+" "+restTerm, max(lo-i, 0), rhi)
	}
	var first string
	switch {
	case len(terms) > 0:
		first = terms[0]
	case !restNone:
		first = restTerm
	default:
		return w.define(slot, hint, `"[" ws "]"`)
	}
	body := first
	if tail := after(1); tail != "" {
		body += " " + tail
	}
	if lo == 0 {
		return w.define(slot, hint, `"[" ws ( `+body+` ws )? "]"`)
	}
	return w.define(slot, hint, `"[" ws `+body+` ws "]"`)
}

// repeatGroup is ( seq ){lo,hi}, or nothing when hi is 0.
func repeatGroup(seq string, lo, hi int) string {
	return repeat("( "+seq+" )", lo, hi)
}
