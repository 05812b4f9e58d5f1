package lark

import (
	"strings"
)

// The characters a JSON string cannot hold as themselves (RFC 8259 section
// 7: the quote, the backslash and U+0000–U+001F), and DEL, which the
// masking package's JSON strings escape too.
var jsonSpecial = class{{0, 0x1f}, {'"', '"'}, {'\\', '\\'}, {0x7f, 0x7f}}

// shortEscapes are the two-character escapes JSON encoders write.
var shortEscapes = map[rune]byte{'"': '"', '\\': '\\', '\b': 'b', '\f': 'f', '\n': 'n', '\r': 'r', '\t': 't'}

// needsUnicodeEscape says r is written \u00XX inside a JSON string.
func needsUnicodeEscape(r rune) bool {
	_, short := shortEscapes[r]
	return !short && (r < 0x20 || r == 0x7f)
}

// intersects says c and d share a code point.
func (c class) intersects(d class) bool {
	for _, a := range c {
		for _, b := range d {
			if a.lo <= b.hi && b.lo <= a.hi {
				return true
			}
		}
	}
	return false
}

// minus is c without the code points of d.
func (c class) minus(d class) class {
	return c.and(d.complement())
}

// and is the code points in both c and d.
func (c class) and(d class) class {
	var out []runeRange
	for _, a := range c {
		for _, b := range d {
			if lo, hi := max(a.lo, b.lo), min(a.hi, b.hi); lo <= hi {
				out = append(out, runeRange{lo, hi})
			}
		}
	}
	return normalize(out)
}

// writeEscapedLiteral writes s as it reads inside a JSON string: a GBNF
// literal, or a group when a character is \u00XX, whose hex letters may come
// in either case.
func writeEscapedLiteral(b *strings.Builder, s string) {
	if !strings.ContainsFunc(s, needsUnicodeEscape) {
		writeLiteral(b, jsonEscape(s))
		return
	}
	b.WriteString("( ")
	start, first := 0, true
	sep := func() {
		if !first {
			b.WriteByte(' ')
		}
		first = false
	}
	for i, r := range s {
		if !needsUnicodeEscape(r) {
			continue
		}
		if start < i {
			sep()
			writeLiteral(b, jsonEscape(s[start:i]))
		}
		sep()
		writeUnicodeEscapes(b, class{{r, r}})
		start = i + 1 // r is ASCII
	}
	if start < len(s) {
		sep()
		writeLiteral(b, jsonEscape(s[start:]))
	}
	b.WriteString(" )")
}

// jsonEscape is s with its quote, backslash and short-escaped control
// characters escaped; the caller has no other control character in s.
func jsonEscape(s string) string {
	var b strings.Builder
	for _, r := range s {
		if e, ok := shortEscapes[r]; ok {
			b.WriteByte('\\')
			b.WriteByte(e)
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// writeEscapedClass writes a class as its members read inside a JSON string:
// the members that stand for themselves as a class, each other member as its
// escape, as alternatives of one group.
func writeEscapedClass(b *strings.Builder, c class) {
	special := c.and(jsonSpecial)
	if len(special) == 0 {
		writeClass(b, c)
		return
	}
	var alts []string
	if plain := c.minus(jsonSpecial); len(plain) > 0 {
		var cb strings.Builder
		writeClass(&cb, plain)
		alts = append(alts, cb.String())
	}
	// The short escapes: one class after the backslash.
	var short []rune
	var long class
	for _, rr := range special {
		for r := rr.lo; r <= rr.hi; r++ {
			if e, ok := shortEscapes[r]; ok {
				short = append(short, rune(e))
			} else {
				long = append(long, runeRange{r, r})
			}
		}
	}
	if len(short) > 0 {
		var cb strings.Builder
		cb.WriteString(`"\\" `)
		if len(short) == 1 {
			writeLiteral(&cb, string(short))
		} else {
			rs := make([]runeRange, len(short))
			for i, r := range short {
				rs[i] = runeRange{r, r}
			}
			writeClass(&cb, normalize(rs))
		}
		alts = append(alts, cb.String())
	}
	if len(long) > 0 {
		var cb strings.Builder
		writeUnicodeEscapes(&cb, normalize(long))
		alts = append(alts, cb.String())
	}
	b.WriteString("( ")
	b.WriteString(strings.Join(alts, " | "))
	b.WriteString(" )")
}

// writeUnicodeEscapes writes the \u00XX escapes of c (control characters and
// DEL) as one term: a group of one alternative per high hex digit, the low
// digits a class with hex letters in both cases.
func writeUnicodeEscapes(b *strings.Builder, c class) {
	const hex = "0123456789abcdef"
	var lows [8][]runeRange // by high digit 0..7
	for _, rr := range c {
		for r := rr.lo; r <= rr.hi; r++ {
			lo := rune(hex[r&0xf])
			lows[r>>4] = append(lows[r>>4], runeRange{lo, lo})
			if lo >= 'a' {
				up := lo - 'a' + 'A'
				lows[r>>4] = append(lows[r>>4], runeRange{up, up})
			}
		}
	}
	var alts []string
	for hi, ls := range lows {
		if len(ls) == 0 {
			continue
		}
		var cb strings.Builder
		writeLiteral(&cb, `\u00`+string(hex[hi]))
		cb.WriteByte(' ')
		writeClass(&cb, normalize(ls))
		alts = append(alts, cb.String())
	}
	if len(alts) == 1 {
		b.WriteString(alts[0])
		return
	}
	b.WriteString("( ")
	b.WriteString(strings.Join(alts, " | "))
	b.WriteString(" )")
}
