package masking

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
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
	// strict (an answer's schema, NewAnswer) makes each widening a
	// refusal: refused is the first.
	strict  bool
	refused *SchemaError
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
		w.refuse("$ref", "", "a reference to itself says nothing of the value")
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
				w.refuse("$ref", "", "a cycle of references that consumes no character admits any value")
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

// repeat is item{lo,hi} in GBNF (hi < 0: unbounded), within maxRepeat.
func repeat(item string, lo, hi int) string {
	lo = min(lo, maxRepeat) // NewAnswer refuses such counts (checkStrict)
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
