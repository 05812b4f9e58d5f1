package lark

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// regexParser reads the regular expressions tool grammars use (Python's re
// syntax, which Lark terminals are written in, and the common core the Rust
// regex crate shares): literals and escapes, ".", classes with ranges,
// negation and the \d \w \s shorthands (and their negations), groups
// (capturing, (?:...) and (?P<name>...)), "|", and the quantifiers ? * +
// {n} {n,} {n,m} with their lazy forms (a lazy quantifier matches the same
// strings). Anchors, look-around, back-references and inline flags have no
// place in a grammar over whole strings and are refused, naming the
// construct.
type regexParser struct {
	src    string
	pos    int
	dotAll bool
	// anchors allows ^ at the very start and $ at the very end (a whole
	// grammar of syntax "regex"), where they say what the grammar already
	// means.
	anchors bool
	line    int
}

func parseRegex(src string, dotAll, anchors bool, line int) (expr, error) {
	p := &regexParser{src: src, dotAll: dotAll, anchors: anchors, line: line}
	if anchors {
		if strings.HasPrefix(p.src, "^") {
			p.src = p.src[1:]
		}
		if strings.HasSuffix(p.src, "$") && !strings.HasSuffix(p.src, `\$`) {
			p.src = p.src[:len(p.src)-1]
		}
	}
	e, err := p.alternation(0)
	if err != nil {
		return nil, err
	}
	if p.pos < len(p.src) {
		return nil, p.errf("unbalanced \")\" in regular expression %q", src)
	}
	return e, nil
}

func (p *regexParser) errf(format string, args ...any) error {
	return &Error{Line: p.line, Msg: "regular expression: " + sprintf(format, args...)}
}

func (p *regexParser) alternation(depth int) (expr, error) {
	if depth > maxDepth {
		return nil, p.errf("groups nested deeper than %d", maxDepth)
	}
	var alts alt
	for {
		s, err := p.sequence(depth)
		if err != nil {
			return nil, err
		}
		alts = append(alts, s)
		if p.pos < len(p.src) && p.src[p.pos] == '|' {
			p.pos++
			continue
		}
		break
	}
	if len(alts) == 1 {
		return alts[0], nil
	}
	return alts, nil
}

func (p *regexParser) sequence(depth int) (expr, error) {
	var s seq
	for p.pos < len(p.src) {
		c := p.src[p.pos]
		if c == '|' || c == ')' {
			break
		}
		a, err := p.atom(depth)
		if err != nil {
			return nil, err
		}
		a, err = p.quantifier(a)
		if err != nil {
			return nil, err
		}
		// Adjacent literals are one literal: "abc", not "a" "b" "c".
		if l, ok := a.(lit); ok && len(s) > 0 {
			if prev, ok := s[len(s)-1].(lit); ok {
				s[len(s)-1] = prev + l
				continue
			}
		}
		s = append(s, a)
	}
	if len(s) == 1 {
		return s[0], nil
	}
	return s, nil
}

func (p *regexParser) atom(depth int) (expr, error) {
	c := p.src[p.pos]
	switch c {
	case '(':
		p.pos++
		rest := p.src[p.pos:]
		switch {
		case strings.HasPrefix(rest, "?:"):
			p.pos += 2
		case strings.HasPrefix(rest, "?P<"):
			end := strings.IndexByte(rest, '>')
			if end < 0 {
				return nil, p.errf("unterminated group name")
			}
			p.pos += end + 1
		case strings.HasPrefix(rest, "?"):
			return nil, p.errf("%s is not supported (look-around, inline flags and conditionals have no grammar equivalent)", groupConstruct(rest))
		}
		e, err := p.alternation(depth + 1)
		if err != nil {
			return nil, err
		}
		if p.pos >= len(p.src) || p.src[p.pos] != ')' {
			return nil, p.errf("unterminated group")
		}
		p.pos++
		return e, nil
	case '[':
		return p.class()
	case '.':
		p.pos++
		if p.dotAll {
			return anyClass, nil
		}
		return dotClass, nil
	case '^', '$':
		return nil, p.errf("the anchor %q is not supported inside a grammar", string(c))
	case '*', '+', '?', '{':
		if c == '{' && !p.isQuantifierBrace() {
			p.pos++
			return lit("{"), nil
		}
		return nil, p.errf("%q repeats nothing", string(c))
	case '\\':
		e, _, err := p.escape(false)
		return e, err
	}
	r, size := utf8.DecodeRuneInString(p.src[p.pos:])
	p.pos += size
	return lit(string(r)), nil
}

func groupConstruct(rest string) string {
	for _, k := range []struct{ prefix, name string }{
		{"?=", "look-ahead (?=...)"}, {"?!", "negative look-ahead (?!...)"},
		{"?<=", "look-behind (?<=...)"}, {"?<!", "negative look-behind (?<!...)"},
		{"?P=", "the back-reference (?P=name)"}, {"?#", "the comment group (?#...)"},
		{"?(", "the conditional (?(...))"},
	} {
		if strings.HasPrefix(rest, k.prefix) {
			return k.name
		}
	}
	return "the inline flag group (" + firstRunes(rest, 4) + "...)"
}

func firstRunes(s string, n int) string {
	for i := range s {
		if n == 0 {
			return s[:i]
		}
		n--
	}
	return s
}

// escape reads a backslash escape: a class for the shorthands (or, in a
// class, their ranges), else one literal code point.
func (p *regexParser) escape(inClass bool) (expr, rune, error) {
	p.pos++ // the backslash
	if p.pos >= len(p.src) {
		return nil, 0, p.errf("a trailing backslash")
	}
	c := p.src[p.pos]
	p.pos++
	switch c {
	case 'd':
		return digitClass, -1, nil
	case 'D':
		return digitClass.complement(), -1, nil
	case 'w':
		return wordClass, -1, nil
	case 'W':
		return wordClass.complement(), -1, nil
	case 's':
		return spaceClass, -1, nil
	case 'S':
		return spaceClass.complement(), -1, nil
	case 'n':
		return lit("\n"), '\n', nil
	case 'r':
		return lit("\r"), '\r', nil
	case 't':
		return lit("\t"), '\t', nil
	case 'f':
		return lit("\f"), '\f', nil
	case 'v':
		return lit("\v"), '\v', nil
	case 'a':
		return lit("\a"), '\a', nil
	case '0':
		return lit("\x00"), 0, nil
	case 'x', 'u', 'U':
		n := map[byte]int{'x': 2, 'u': 4, 'U': 8}[c]
		if p.pos+n > len(p.src) {
			return nil, 0, p.errf(`a short \%c escape`, c)
		}
		v, err := strconv.ParseUint(p.src[p.pos:p.pos+n], 16, 32)
		if err != nil || v > utf8.MaxRune {
			return nil, 0, p.errf(`a bad \%c escape %q`, c, p.src[p.pos:p.pos+n])
		}
		p.pos += n
		return lit(string(rune(v))), rune(v), nil
	case 'b':
		if inClass {
			return lit("\b"), '\b', nil
		}
		return nil, 0, p.errf(`the word boundary \b is not supported`)
	case 'B', 'A', 'Z', 'z', 'G':
		return nil, 0, p.errf(`the anchor \%c is not supported`, c)
	}
	if c >= '1' && c <= '9' {
		return nil, 0, p.errf(`the back-reference \%c is not supported`, c)
	}
	if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' {
		return nil, 0, p.errf(`the escape \%c is not supported`, c)
	}
	p.pos--
	r, size := utf8.DecodeRuneInString(p.src[p.pos:])
	p.pos += size
	return lit(string(r)), r, nil
}

func (p *regexParser) class() (expr, error) {
	p.pos++ // [
	neg := false
	if p.pos < len(p.src) && p.src[p.pos] == '^' {
		neg = true
		p.pos++
	}
	var rs []runeRange
	first := true
	for {
		if p.pos >= len(p.src) {
			return nil, p.errf("unterminated character class")
		}
		c := p.src[p.pos]
		if c == ']' && !first {
			p.pos++
			break
		}
		first = false
		if c == '[' && strings.HasPrefix(p.src[p.pos:], "[:") {
			return nil, p.errf("POSIX classes [:name:] are not supported")
		}
		lo, set, err := p.classChar()
		if err != nil {
			return nil, err
		}
		if set != nil {
			rs = append(rs, set...)
			continue
		}
		hi := lo
		if p.pos+1 < len(p.src) && p.src[p.pos] == '-' && p.src[p.pos+1] != ']' {
			p.pos++
			h, hset, err := p.classChar()
			if err != nil {
				return nil, err
			}
			if hset != nil {
				return nil, p.errf("a range ending in a class shorthand")
			}
			if h < lo {
				return nil, p.errf("the range %q-%q is reversed", lo, h)
			}
			hi = h
		}
		rs = append(rs, runeRange{lo, hi})
	}
	c := normalize(rs)
	if neg {
		c = c.complement()
	}
	if len(c) == 0 {
		return nil, p.errf("a character class that matches nothing")
	}
	return c, nil
}

// classChar reads one member of a class: a code point, or a shorthand's set.
func (p *regexParser) classChar() (rune, class, error) {
	if p.src[p.pos] == '\\' {
		e, r, err := p.escape(true)
		if err != nil {
			return 0, nil, err
		}
		if c, ok := e.(class); ok {
			return 0, c, nil
		}
		return r, nil, nil
	}
	r, size := utf8.DecodeRuneInString(p.src[p.pos:])
	p.pos += size
	return r, nil, nil
}

func (p *regexParser) isQuantifierBrace() bool {
	_, _, n, ok := parseBraces(p.src[p.pos:])
	return ok && n > 0
}

// parseBraces reads {n}, {n,} or {n,m} at the start of s: the bounds (max
// -1 for none) and the length read.
func parseBraces(s string) (lo, hi, n int, ok bool) {
	end := strings.IndexByte(s, '}')
	if !strings.HasPrefix(s, "{") || end < 0 {
		return 0, 0, 0, false
	}
	body := s[1:end]
	a, b, comma := strings.Cut(body, ",")
	lo, err := strconv.Atoi(a)
	if err != nil || lo < 0 || strings.TrimSpace(a) != a {
		return 0, 0, 0, false
	}
	hi = lo
	if comma {
		if b == "" {
			hi = -1
		} else if hi, err = strconv.Atoi(b); err != nil || hi < 0 {
			return 0, 0, 0, false
		}
	}
	return lo, hi, end + 1, true
}

func (p *regexParser) quantifier(a expr) (expr, error) {
	if p.pos >= len(p.src) {
		return a, nil
	}
	lo, hi := 0, 0
	switch c := p.src[p.pos]; c {
	case '?':
		lo, hi = 0, 1
		p.pos++
	case '*':
		lo, hi = 0, -1
		p.pos++
	case '+':
		lo, hi = 1, -1
		p.pos++
	case '{':
		l, h, n, ok := parseBraces(p.src[p.pos:])
		if !ok {
			return a, nil
		}
		if h >= 0 && h < l {
			return nil, p.errf("the repetition {%d,%d} is reversed", l, h)
		}
		if l > maxRepeat || h > maxRepeat {
			return nil, p.errf("a repetition count above %d", maxRepeat)
		}
		lo, hi = l, h
		p.pos += n
	default:
		return a, nil
	}
	if p.pos < len(p.src) {
		switch p.src[p.pos] {
		case '?':
			p.pos++ // lazy: the same strings
		case '+':
			return nil, p.errf("possessive quantifiers are not supported")
		}
	}
	// A quantifier right after this one ("a**", "a{2}{3}") is refused by
	// atom as repeating nothing, as Python's re refuses it.
	return rep{x: a, min: lo, max: hi}, nil
}
