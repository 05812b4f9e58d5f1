package lark

import (
	"fmt"
	"strconv"
	"strings"
)

// Limits on untrusted grammars: a definition is read whole (the caller
// bounds the request), but nesting and the rendered size are bounded here.
const (
	maxDepth = 64
	// MaxGBNF bounds the rendered grammar; a grammar that would render
	// larger is refused.
	MaxGBNF = 1 << 20
	// MaxElements bounds the grammar an engine builds from the rendering,
	// counted repetitions copied out (llama.cpp expands x{n} into n copies of
	// x when it loads the grammar): a small text can otherwise stand for a
	// grammar of billions of elements.
	MaxElements = 1 << 20
)

// Error is a grammar outside the subset or malformed; Msg names the
// construct.
type Error struct {
	// Line is the 1-based line of the definition, 0 when not known.
	Line int
	Msg  string
}

func (e *Error) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("line %d: %s", e.Line, e.Msg)
	}
	return e.Msg
}

func sprintf(format string, args ...any) string { return fmt.Sprintf(format, args...) }

// Grammar is a parsed grammar, ready to render.
type Grammar struct {
	// names in definition order, then imports; defs by name.
	names []string
	defs  map[string]expr
	start string
}

// Regex reads a grammar of syntax "regex": one regular expression matched
// against the whole text (a leading ^ and trailing $ are allowed).
func Regex(src string) (*Grammar, error) {
	e, err := parseRegex(src, false, true, 0)
	if err != nil {
		return nil, err
	}
	g := &Grammar{names: []string{"start"}, defs: map[string]expr{"start": e}, start: "start"}
	if err := g.bounded(); err != nil {
		return nil, err
	}
	return g, nil
}

// Parse reads a Lark grammar (lark-parser's grammar syntax) in the subset
// tool grammars use: rules and terminals ("name: ..." and "NAME: ...",
// with ? or ! before the name and a .priority after it accepted and
// ignored), alternatives on one line or continued with "|", string literals
// (with the i flag), "a".."z" ranges, /regex/ terminals (see regexParser;
// flags i, s and x refused except s), groups ( ), optional [ ], the
// operators ? * + and ~ n / ~ n..m, "-> alias" (ignored: it names tree
// nodes, not text), comments (// and #), and %import common.NAME (or
// common (A, B), with -> alias) for lark's common.lark terminals listed in
// commonSource. %ignore, %declare, %override, %extend, templates and
// imports of other grammars are refused, naming the construct. The start
// rule is "start".
func Parse(src string) (*Grammar, error) {
	toks, err := lex(src)
	if err != nil {
		return nil, err
	}
	p := &parser{toks: toks}
	g := &Grammar{defs: map[string]expr{}, start: "start"}
	imports := map[string]string{} // local name → common name
	for {
		p.skipNL()
		t := p.peek()
		if t.kind == tEOF {
			break
		}
		if t.kind == tPercent {
			if err := p.directive(imports); err != nil {
				return nil, err
			}
			continue
		}
		name, e, err := p.definition()
		if err != nil {
			return nil, err
		}
		if _, dup := g.defs[name]; dup {
			return nil, &Error{Line: t.line, Msg: fmt.Sprintf("%s is defined twice", name)}
		}
		g.names = append(g.names, name)
		g.defs[name] = e
	}
	if err := g.addImports(imports); err != nil {
		return nil, err
	}
	if _, ok := g.defs[g.start]; !ok {
		return nil, &Error{Msg: "no start rule (the grammar must define start)"}
	}
	if err := g.check(); err != nil {
		return nil, err
	}
	if err := g.bounded(); err != nil {
		return nil, err
	}
	return g, nil
}

type parser struct {
	toks  []token
	pos   int
	depth int
}

func (p *parser) peek() token { return p.toks[p.pos] }
func (p *parser) next() token {
	t := p.toks[p.pos]
	if t.kind != tEOF {
		p.pos++
	}
	return t
}
func (p *parser) skipNL() {
	for p.peek().kind == tNL {
		p.pos++
	}
}

// continues reports whether the definition goes on after newlines: the
// next line starts with "|".
func (p *parser) continues() bool {
	i := p.pos
	for p.toks[i].kind == tNL {
		i++
	}
	if p.toks[i].kind == tBar {
		p.pos = i
		return true
	}
	return false
}

func (p *parser) errf(t token, format string, args ...any) error {
	return &Error{Line: t.line, Msg: fmt.Sprintf(format, args...)}
}

func (p *parser) definition() (string, expr, error) {
	t := p.next()
	if t.kind == tQuestion || t.kind == tBang {
		t = p.next()
	}
	if t.kind != tName {
		return "", nil, p.errf(t, "expected a rule or terminal name")
	}
	name := t.text
	switch p.peek().kind {
	case tLBrace:
		return "", nil, p.errf(t, "templates (%s{...}) are not supported", name)
	case tDot:
		p.next()
		if n := p.next(); n.kind != tNumber {
			return "", nil, p.errf(n, "expected a priority number after %s.", name)
		}
	}
	if c := p.next(); c.kind != tColon {
		return "", nil, p.errf(c, "expected \":\" after %s", name)
	}
	e, err := p.expansions(true)
	if err != nil {
		return "", nil, err
	}
	if t := p.peek(); t.kind != tNL && t.kind != tEOF {
		return "", nil, p.errf(t, "unexpected %s in the definition of %s", describe(t), name)
	}
	return name, e, nil
}

func describe(t token) string {
	switch t.kind {
	case tName:
		return strconv.Quote(t.text)
	case tRParen:
		return `")"`
	case tRBrack:
		return `"]"`
	case tColon:
		return `":"`
	case tLBrace:
		return `"{"`
	case tPercent:
		return `"%"`
	}
	return "a token"
}

// expansions reads alternatives; top says a newline may end it (inside
// brackets newlines are whitespace).
func (p *parser) expansions(top bool) (expr, error) {
	p.depth++
	defer func() { p.depth-- }()
	if p.depth > maxDepth {
		return nil, p.errf(p.peek(), "groups nested deeper than %d", maxDepth)
	}
	var alts alt
	for {
		s, err := p.alternative(top)
		if err != nil {
			return nil, err
		}
		alts = append(alts, s)
		if p.peek().kind == tBar {
			p.next()
			continue
		}
		if p.continues() {
			p.next()
			continue
		}
		if !top {
			p.skipNL()
			if p.peek().kind == tBar {
				p.next()
				continue
			}
		}
		break
	}
	if len(alts) == 1 {
		return alts[0], nil
	}
	return alts, nil
}

func (p *parser) alternative(top bool) (expr, error) {
	var s seq
	for {
		if !top {
			p.skipNL()
		}
		t := p.peek()
		switch t.kind {
		case tName, tString, tRegex, tLParen, tLBrack:
		case tArrow:
			p.next()
			if n := p.next(); n.kind != tName {
				return nil, p.errf(n, "expected a name after ->")
			}
			return seqOf(s), nil
		default:
			return seqOf(s), nil
		}
		a, err := p.atom()
		if err != nil {
			return nil, err
		}
		if a, err = p.operator(a); err != nil {
			return nil, err
		}
		s = append(s, a)
	}
}

func seqOf(s seq) expr {
	if len(s) == 1 {
		return s[0]
	}
	if s == nil {
		return seq{}
	}
	return s
}

func (p *parser) atom() (expr, error) {
	t := p.next()
	switch t.kind {
	case tName:
		if p.peek().kind == tLBrace {
			return nil, p.errf(t, "templates (%s{...}) are not supported", t.text)
		}
		return ref(t.text), nil
	case tString:
		if p.peek().kind == tDotDot {
			p.next()
			hi := p.next()
			if hi.kind != tString {
				return nil, p.errf(hi, `expected a string after ".."`)
			}
			return stringRange(t, hi)
		}
		return stringLit(t)
	case tRegex:
		dotAll := false
		for _, f := range t.flag {
			if f != 's' {
				return nil, p.errf(t, "the regular expression flag %q is not supported", string(f))
			}
			dotAll = true
		}
		return parseRegex(t.text, dotAll, false, t.line)
	case tLParen, tLBrack:
		e, err := p.expansions(false)
		if err != nil {
			return nil, err
		}
		want := map[tokKind]tokKind{tLParen: tRParen, tLBrack: tRBrack}[t.kind]
		if c := p.next(); c.kind != want {
			return nil, p.errf(c, "unbalanced %s", map[tokKind]string{tLParen: `"("`, tLBrack: `"["`}[t.kind])
		}
		if t.kind == tLBrack {
			return rep{x: e, min: 0, max: 1}, nil
		}
		return e, nil
	}
	return nil, p.errf(t, "unexpected %s", describe(t))
}

func stringLit(t token) (expr, error) {
	switch t.flag {
	case "":
		return lit(t.text), nil
	case "i":
		var s seq
		for _, r := range t.text {
			lo, up := []rune(strings.ToLower(string(r))), []rune(strings.ToUpper(string(r)))
			if len(lo) == 1 && len(up) == 1 && lo[0] != up[0] {
				s = append(s, normalize([]runeRange{{lo[0], lo[0]}, {up[0], up[0]}}))
			} else {
				s = append(s, lit(string(r)))
			}
		}
		return seqOf(s), nil
	}
	return nil, &Error{Line: t.line, Msg: fmt.Sprintf("the string flag %q is not supported", t.flag)}
}

func stringRange(lo, hi token) (expr, error) {
	a, b := []rune(lo.text), []rune(hi.text)
	if len(a) != 1 || len(b) != 1 || lo.flag != "" || hi.flag != "" {
		return nil, &Error{Line: lo.line, Msg: `a ".." range takes two one-character strings`}
	}
	if b[0] < a[0] {
		return nil, &Error{Line: lo.line, Msg: fmt.Sprintf("the range %q..%q is reversed", lo.text, hi.text)}
	}
	return class{{a[0], b[0]}}, nil
}

func (p *parser) operator(a expr) (expr, error) {
	t := p.peek()
	switch t.kind {
	case tQuestion:
		p.next()
		return rep{x: a, min: 0, max: 1}, nil
	case tStar:
		p.next()
		return rep{x: a, min: 0, max: -1}, nil
	case tPlus:
		p.next()
		return rep{x: a, min: 1, max: -1}, nil
	case tTilde:
		p.next()
		lo, err := p.count()
		if err != nil {
			return nil, err
		}
		hi := lo
		if p.peek().kind == tDotDot {
			p.next()
			if hi, err = p.count(); err != nil {
				return nil, err
			}
		}
		if hi < lo {
			return nil, p.errf(t, "the repetition ~ %d..%d is reversed", lo, hi)
		}
		return rep{x: a, min: lo, max: hi}, nil
	}
	return a, nil
}

func (p *parser) count() (int, error) {
	t := p.next()
	if t.kind != tNumber {
		return 0, p.errf(t, "expected a count after ~")
	}
	n, err := strconv.Atoi(t.text)
	if err != nil || n < 0 || n > maxRepeat {
		return 0, p.errf(t, "a repetition count must be 0 to %d", maxRepeat)
	}
	return n, nil
}

// directive reads a %-line: only imports from common are in the subset.
func (p *parser) directive(imports map[string]string) error {
	pct := p.next()
	t := p.next()
	if t.kind != tName {
		return p.errf(pct, "expected a directive name after %%")
	}
	if t.text != "import" {
		return p.errf(t, "%%%s is not supported (only %%import common.NAME is)", t.text)
	}
	mod := p.next()
	if mod.kind != tName || mod.text != "common" {
		return p.errf(mod, "only imports from common are supported")
	}
	switch p.next().kind {
	case tDot:
		n := p.next()
		if n.kind != tName {
			return p.errf(n, "expected a name after common.")
		}
		local := n.text
		if p.peek().kind == tArrow {
			p.next()
			a := p.next()
			if a.kind != tName {
				return p.errf(a, "expected a name after ->")
			}
			local = a.text
		}
		imports[local] = n.text
	case tLParen:
		for {
			n := p.next()
			if n.kind != tName {
				return p.errf(n, "expected a name in %%import common (...)")
			}
			imports[n.text] = n.text
			c := p.next()
			if c.kind == tRParen {
				break
			}
			if c.kind != tComma {
				return p.errf(c, `expected "," or ")" in %%import common (...)`)
			}
		}
	default:
		return p.errf(mod, "expected common.NAME or common (NAME, ...)")
	}
	if t := p.peek(); t.kind != tNL && t.kind != tEOF {
		return p.errf(t, "unexpected %s after %%import", describe(t))
	}
	return nil
}
