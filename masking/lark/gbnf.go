package lark

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// check refuses references to names never defined and left recursion,
// which Lark's Earley parser takes and llama.cpp's grammar loader refuses.
func (g *Grammar) check() error {
	for _, n := range g.names {
		for _, r := range refsOf(g.defs[n]) {
			if _, ok := g.defs[r]; !ok {
				return &Error{Msg: fmt.Sprintf("%s uses %s, which is not defined", n, r)}
			}
		}
	}
	nullable := map[string]bool{}
	for changed := true; changed; {
		changed = false
		for _, n := range g.names {
			if !nullable[n] && isNullable(g.defs[n], nullable) {
				nullable[n] = true
				changed = true
			}
		}
	}
	left := map[string][]string{}
	for _, n := range g.names {
		left[n] = leftRefs(g.defs[n], nullable, nil)
	}
	const (
		unseen = iota
		active
		done
	)
	state := map[string]int{}
	var visit func(n string, path []string) error
	visit = func(n string, path []string) error {
		switch state[n] {
		case active:
			return &Error{Msg: fmt.Sprintf("left recursion (%s -> %s) is not supported", strings.Join(path, " -> "), n)}
		case done:
			return nil
		}
		state[n] = active
		for _, r := range left[n] {
			if err := visit(r, append(path, n)); err != nil {
				return err
			}
		}
		state[n] = done
		return nil
	}
	for _, n := range g.names {
		if err := visit(n, nil); err != nil {
			return err
		}
	}
	return nil
}

func isNullable(e expr, nullable map[string]bool) bool {
	switch x := e.(type) {
	case lit:
		return x == ""
	case class:
		return false
	case ref:
		return nullable[string(x)]
	case seq:
		for _, y := range x {
			if !isNullable(y, nullable) {
				return false
			}
		}
		return true
	case alt:
		for _, y := range x {
			if isNullable(y, nullable) {
				return true
			}
		}
		return false
	case rep:
		return x.min == 0 || isNullable(x.x, nullable)
	}
	return false
}

// leftRefs appends the names e may begin with.
func leftRefs(e expr, nullable map[string]bool, out []string) []string {
	switch x := e.(type) {
	case ref:
		return append(out, string(x))
	case seq:
		for _, y := range x {
			out = leftRefs(y, nullable, out)
			if !isNullable(y, nullable) {
				break
			}
		}
	case alt:
		for _, y := range x {
			out = leftRefs(y, nullable, out)
		}
	case rep:
		out = leftRefs(x.x, nullable, out)
	}
	return out
}

// GBNF renders the grammar as llama.cpp GBNF rules (grammars/README.md in
// llama.cpp; xgrammar's EBNF reads the same text), every rule name starting
// with prefix, which must be letters, digits and dashes. It returns the
// rules, one per line, and the name of the rule that matches the whole
// language. The rendering is a function of the grammar alone: the same
// definition gives the same bytes.
func (g *Grammar) GBNF(prefix string) (rules, root string, err error) {
	return g.render(&gbnfWriter{prefix: prefix})
}

// JSONStringGBNF is GBNF for the same language written inside a JSON
// string (RFC 8259 section 7), without the quotes: every text the grammar
// accepts, escaped as JSON encoders write it. The quote and the backslash
// are \" and \\, the five control characters with a short escape are \b
// \f \n \r \t, the other control characters and DEL are \u00XX (either
// case of hex digit); every other code point stands for itself. A call whose
// arguments are JSON ({"input": "…"}) then holds its string to the grammar,
// and decoding that string gives a text of the language. Other escapes a JSON
// reader would take (\/, \u0041) are not admitted: the grammar picks one
// spelling per character, as a constraint needs only one.
func (g *Grammar) JSONStringGBNF(prefix string) (rules, root string, err error) {
	return g.render(&gbnfWriter{prefix: prefix, escaped: true})
}

func (g *Grammar) render(w *gbnfWriter) (rules, root string, err error) {
	for _, n := range g.names {
		w.b.WriteString(w.name(n))
		w.b.WriteString(" ::= ")
		w.expr(g.defs[n], 0)
		w.b.WriteByte('\n')
		if w.b.Len()+w.extra.Len() > MaxGBNF {
			return "", "", &Error{Msg: fmt.Sprintf("the grammar renders larger than %d bytes", MaxGBNF)}
		}
		if w.elements > MaxElements {
			return "", "", &Error{Msg: fmt.Sprintf("rule %s takes the grammar past %d elements once an engine copies its counted repetitions; use fewer or shorter repetitions", n, MaxElements)}
		}
	}
	w.b.WriteString(w.extra.String())
	if w.b.Len() > MaxGBNF {
		return "", "", &Error{Msg: fmt.Sprintf("the grammar renders larger than %d bytes", MaxGBNF)}
	}
	return w.b.String(), w.name(g.start), nil
}

// bounded refuses a grammar that would render past MaxGBNF bytes or MaxElements
// elements, in either rendering, naming the rule that crosses the bound, so that
// a grammar is refused when it is read rather than when an engine expands it.
func (g *Grammar) bounded() error {
	if _, _, err := g.GBNF("b-"); err != nil {
		return err
	}
	_, _, err := g.JSONStringGBNF("b-")
	return err
}

// Standalone is the grammar as a whole GBNF grammar whose root is its start
// rule, for an engine that takes one grammar for the whole output.
func (g *Grammar) Standalone() (string, error) {
	rules, root, err := g.GBNF("g-")
	if err != nil {
		return "", err
	}
	return "root ::= " + root + "\n" + rules, nil
}

type gbnfWriter struct {
	prefix string
	// escaped writes the language as the inside of a JSON string.
	escaped bool
	b       strings.Builder
	// extra holds rules made for repeated groups, written after the
	// grammar's own.
	extra strings.Builder
	n     int
	// elements bounds, from above, the grammar elements an engine builds from
	// what this writer wrote, once it has copied each counted repetition's
	// operand (llama.cpp's parser copies the last symbol of a sequence, a
	// literal's every character or a class's every range, once per
	// repetition; a group or a rule name is one element). A literal or class
	// counts its rendered bytes, more than its elements.
	elements int
}

// name maps a Lark name to a GBNF one: "_" becomes "-" (Lark names have no
// dash, so names stay distinct).
func (w *gbnfWriter) name(n string) string {
	return w.prefix + strings.ReplaceAll(n, "_", "-")
}

// expr writes e; prec 0 is a rule body, 1 inside a sequence, 2 the operand
// of a repetition.
func (w *gbnfWriter) expr(e expr, prec int) {
	switch x := e.(type) {
	case lit:
		at := w.b.Len()
		if w.escaped {
			writeEscapedLiteral(&w.b, string(x))
		} else {
			writeLiteral(&w.b, string(x))
		}
		w.elements += w.b.Len() - at
	case ref:
		w.b.WriteString(w.name(string(x)))
		w.elements++
	case hoisted:
		w.b.WriteString(string(x))
		w.elements++
	case class:
		at := w.b.Len()
		if w.escaped {
			writeEscapedClass(&w.b, x)
		} else {
			writeClass(&w.b, x)
		}
		w.elements += w.b.Len() - at
	case seq:
		if len(x) == 0 {
			w.b.WriteString(`""`)
			return
		}
		if prec > 1 {
			w.b.WriteString("( ")
		}
		for i, y := range x {
			if i > 0 {
				w.b.WriteByte(' ')
			}
			w.expr(y, 2)
		}
		if prec > 1 {
			w.b.WriteString(" )")
		}
	case alt:
		if prec > 0 {
			w.b.WriteString("( ")
		}
		for i, y := range x {
			if i > 0 {
				w.b.WriteString(" | ")
			}
			w.expr(y, 1)
		}
		if prec > 0 {
			w.b.WriteString(" )")
		}
	case rep:
		w.rep(x)
	}
}

func (w *gbnfWriter) rep(x rep) {
	operand := x.x
	// A repeated repetition ("(a+)?", "(a{2}){3}") is hoisted into a rule
	// of its own: the operators do not stack, and a counted repeat of a
	// rule name stays linear in size however deep counts nest.
	// A counted repeat copies its operand once per count in the engine, so an
	// operand longer than one character is hoisted too: a 1,000-character
	// literal under ~ 1000 is a rule of 1,000 elements and 1,000 references
	// to it, not a million characters.
	counted := !(x.min == 0 && x.max == 1 || x.min <= 1 && x.max < 0)
	if _, ok := operand.(rep); ok || counted && (!w.simple(operand) || !short(operand)) {
		operand = w.hoist(operand)
	}
	before := w.elements
	w.expr(operand, 2)
	// Copies the engine makes of the operand: x{n,m} is m of them (n in
	// sequence, m-n in nested optional rules), x{n,} n and one under a star,
	// x+ two (x x*), x? and x* one.
	copies := 1
	switch {
	case x.max > 1:
		copies = x.max
	case x.max < 0 && x.min >= 1:
		copies = x.min + 1
	}
	w.elements += (w.elements - before) * (copies - 1)
	switch {
	case x.min == 0 && x.max == 1:
		w.b.WriteByte('?')
	case x.min == 0 && x.max < 0:
		w.b.WriteByte('*')
	case x.min == 1 && x.max < 0:
		w.b.WriteByte('+')
	case x.max < 0:
		fmt.Fprintf(&w.b, "{%d,}", x.min)
	case x.min == x.max:
		fmt.Fprintf(&w.b, "{%d}", x.min)
	default:
		fmt.Fprintf(&w.b, "{%d,%d}", x.min, x.max)
	}
}

// simple says e renders as one token: a name, a literal or a class (escaped,
// a literal or class with characters that have a \u00XX escape is a group).
func (w *gbnfWriter) simple(e expr) bool {
	switch x := e.(type) {
	case ref, hoisted:
		return true
	case lit:
		return !w.escaped || !strings.ContainsFunc(string(x), needsUnicodeEscape)
	case class:
		return !w.escaped || !x.intersects(jsonSpecial)
	}
	return false
}

// short says e, a literal or a class, is one character or a few ranges: copying
// it per repetition costs about as much as a rule reference would.
func short(e expr) bool {
	switch x := e.(type) {
	case lit:
		return utf8.RuneCountInString(string(x)) <= 1
	case class:
		return len(x) <= 4
	}
	return true
}

// hoist writes e as a rule of its own and returns a reference to it. Its
// name starts with a digit ("0rep" and a counter after the prefix), which no Lark name
// does (a Lark name "_rep1" maps to "-rep1", so a dash would not keep them apart).
func (w *gbnfWriter) hoist(e expr) expr {
	w.n++
	name := "0rep" + strconv.Itoa(w.n)
	sub := &gbnfWriter{prefix: w.prefix, n: w.n, escaped: w.escaped}
	sub.expr(e, 0)
	w.n = sub.n
	w.elements += sub.elements
	w.extra.WriteString(w.prefix + name + " ::= " + sub.b.String() + "\n")
	w.extra.WriteString(sub.extra.String())
	return hoisted(w.prefix + name)
}

// hoisted is a rule name already mapped.
type hoisted string

func (hoisted) isExpr() {}

// hexEscaper writes \xHH escapes so that both readers agree on them: llama.cpp reads
// exactly two hex digits after \x, xgrammar as many as follow, so a hex digit
// right after an escape is escaped too.
type hexEscaper struct {
	b         *strings.Builder
	afterHexa bool
}

func (h *hexEscaper) raw(r rune) {
	if h.afterHexa && isHex(r) {
		h.escape(r)
		return
	}
	h.b.WriteRune(r)
	h.afterHexa = false
}

func (h *hexEscaper) text(s string) {
	h.b.WriteString(s)
	h.afterHexa = false
}

func (h *hexEscaper) escape(r rune) {
	switch {
	case r <= 0xFF:
		fmt.Fprintf(h.b, `\x%02X`, r)
		h.afterHexa = true
	case r <= 0xFFFF:
		fmt.Fprintf(h.b, `\u%04X`, r)
		h.afterHexa = false
	default:
		fmt.Fprintf(h.b, `\U%08X`, r)
		h.afterHexa = false
	}
}

func isHex(r rune) bool {
	return r >= '0' && r <= '9' || r >= 'a' && r <= 'f' || r >= 'A' && r <= 'F'
}

// writeLiteral writes s as a GBNF string: the quote, the backslash and
// control characters escaped, other code points as they are.
func writeLiteral(b *strings.Builder, s string) {
	h := &hexEscaper{b: b}
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			h.text(`\` + string(r))
		case r == '\n':
			h.text(`\n`)
		case r == '\r':
			h.text(`\r`)
		case r == '\t':
			h.text(`\t`)
		case r < 0x20 || r == 0x7f:
			h.escape(r)
		case r == utf8.RuneError:
			h.text(`\uFFFD`)
		default:
			h.raw(r)
		}
	}
	b.WriteByte('"')
}

// writeClass writes a class; the shorter of it and its negation. Every
// member but letters and digits is escaped, so no member reads as "]", "^"
// or a range's "-".
func writeClass(b *strings.Builder, c class) {
	neg := c.complement()
	b.WriteByte('[')
	if len(neg) > 0 && len(neg) < len(c) || c[len(c)-1].hi == utf8.MaxRune && len(neg) > 0 {
		b.WriteByte('^')
		c = neg
	}
	h := &hexEscaper{b: b}
	for _, r := range c {
		writeClassRune(h, r.lo)
		if r.hi != r.lo {
			h.text("-")
			writeClassRune(h, r.hi)
		}
	}
	b.WriteByte(']')
}

func writeClassRune(h *hexEscaper, r rune) {
	if r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' {
		h.raw(r)
		return
	}
	h.escape(r)
}
