package masking

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"
)

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
