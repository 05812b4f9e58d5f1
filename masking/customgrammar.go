package masking

import (
	"strconv"
	"strings"

	"github.com/maskgate/maskgate/masking/lark"
)

// GrammarKeyword is the JSON Schema keyword, on a string, that holds the
// string to a grammar: its value is a custom tool's format as OpenAI's
// Responses API takes it, {"type": "grammar", "syntax": "lark" | "regex",
// "definition": "…"}. JSON Schema has no keyword for a grammar; an x-
// keyword is one that validators and engines which do not know it ignore.
// The Responses door gives a custom tool the parameters
// {"input": {"type": "string", "x-grammar": FORMAT}}, so every wire format
// carries the tool's raw text as a JSON string and the grammar and the
// structural tag hold that string to the tool's language (see the package
// doc, "Custom tools").
const GrammarKeyword = "x-grammar"

// grammarString renders a string held to the grammar format (the keyword's
// value): a quote, the language in its JSON-string form
// (lark.Grammar.JSONStringGBNF), a quote. It reports false, leaving the
// string unconstrained by the grammar, when format is not a grammar the
// masking/lark translation takes: wider, never narrower (the Responses door
// refuses such a tool before it gets here).
func (w *argRules) grammarString(format []byte, hint string, slot int) (string, bool) {
	g := parseGrammarFormat(format)
	if g == nil {
		return "", false
	}
	return w.grammarRules(g, hint, slot)
}

// grammarRules renders a string held to the translated grammar g: a quote, the
// language in its JSON-string form, a quote.
func (w *argRules) grammarRules(g *lark.Grammar, hint string, slot int) (string, bool) {
	// Lark's rules are named after the prefix "--gN-", which no schema
	// rule name takes (ruleHint never starts a hint with a dash).
	prefix := string(rulePrefix) + "--g" + strconv.Itoa(w.grammars) + "-"
	rules, root, err := g.JSONStringGBNF(prefix)
	if err != nil {
		return "", false
	}
	w.grammars++
	for _, line := range strings.Split(strings.TrimSuffix(rules, "\n"), "\n") {
		name, body, ok := strings.Cut(line, " ::= ")
		if !ok {
			continue
		}
		w.names[name] = true
		w.rules = append(w.rules, gbnfRule{name: name, body: body})
	}
	return w.define(slot, hint, `"\"" `+root+` "\""`), true
}

// parseGrammarFormat reads {"type":"grammar","syntax":…,"definition":…}
// into a translated grammar; nil when it is not one or does not translate.
func parseGrammarFormat(format []byte) *lark.Grammar {
	members, ok := objectMembers(format)
	if !ok {
		return nil
	}
	var typ, syntax, def string
	var hasDef bool
	for _, m := range members {
		switch m.key {
		case "type":
			typ, _ = jsonString(m.val)
		case "syntax":
			syntax, _ = jsonString(m.val)
		case "definition":
			def, hasDef = jsonString(m.val)
		}
	}
	if typ != "grammar" || !hasDef {
		return nil
	}
	var g *lark.Grammar
	var err error
	switch syntax {
	case "lark":
		g, err = lark.Parse(def)
	case "regex":
		g, err = lark.Regex(def)
	default:
		return nil
	}
	if err != nil {
		return nil
	}
	return g
}
