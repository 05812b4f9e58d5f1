package pdftext

import "strings"

// showText appends to out the strings a content stream shows, with a newline where the
// text moves to a new line (T*, Td, TD, ', ", a new text object) and a space where a TJ
// array moves right by more than a fifth of the font size; it stops past maxChars. It is
// a scanner of PDF tokens (ISO 32000-1, 7.2 and 9.4), not a renderer: operands are
// kept only back to the last operator, so memory is the stream's and the text's.
func showText(out *strings.Builder, c []byte, maxChars int) {
	var strs [][]byte // string operands since the last operator
	var tj []tjItem   // the last array operand
	inArray := false
	lineStart := true
	newline := func() {
		if !lineStart {
			out.WriteByte('\n')
			lineStart = true
		}
	}
	write := func(s []byte) {
		for _, b := range s {
			if b == '\r' || b == '\n' {
				b = ' '
			}
			out.WriteRune(rune(b)) // Latin-1: each byte its code point
		}
		if len(s) > 0 {
			lineStart = false
		}
	}
	for i := 0; i < len(c) && out.Len() < maxChars; {
		b := c[i]
		switch {
		case isSpace(b):
			i++
		case b == '%':
			for i < len(c) && c[i] != '\n' && c[i] != '\r' {
				i++
			}
		case b == '(':
			s, n := literal(c[i:])
			i += n
			if inArray {
				tj = append(tj, tjItem{s: s})
			} else {
				strs = append(strs, s)
			}
		case b == '<' && i+1 < len(c) && c[i+1] == '<', b == '>' && i+1 < len(c) && c[i+1] == '>':
			i += 2
		case b == '<':
			s, n := hexString(c[i:])
			i += n
			if inArray {
				tj = append(tj, tjItem{s: s})
			} else {
				strs = append(strs, s)
			}
		case b == '[':
			inArray, tj = true, tj[:0]
			i++
		case b == ']':
			inArray = false
			i++
		case b == '/' || b == '{' || b == '}' || b == ')' || b == '>':
			i++
			for i < len(c) && !isSpace(c[i]) && !isDelim(c[i]) {
				i++
			}
		default:
			j := i
			for j < len(c) && !isSpace(c[j]) && !isDelim(c[j]) {
				j++
			}
			if j == i {
				j++
			}
			tok := string(c[i:j])
			i = j
			if isNumber(tok) {
				if inArray {
					tj = append(tj, tjItem{num: tok})
				}
				continue
			}
			switch tok {
			case "Tj":
				for _, s := range strs {
					write(s)
				}
			case "'", "\"":
				newline()
				for _, s := range strs {
					write(s)
				}
			case "TJ":
				for _, it := range tj {
					if it.num != "" {
						if it.num[0] == '-' && moves(it.num) && !lineStart {
							out.WriteByte(' ')
						}
						continue
					}
					write(it.s)
				}
			case "T*", "Td", "TD", "BT", "ET":
				newline()
			case "ID":
				// Inline image data runs to "EI" after whitespace.
				for i < len(c) && !(c[i] == 'E' && i+1 < len(c) && c[i+1] == 'I' && i > 0 && isSpace(c[i-1]) &&
					(i+2 == len(c) || isSpace(c[i+2]))) {
					i++
				}
				i += 2
			}
			strs, tj = strs[:0], tj[:0]
		}
	}
}

type tjItem struct {
	s   []byte
	num string
}

// moves says whether a TJ adjustment (thousandths of the font size, negative moving
// right) is wide enough to be a space between words.
func moves(num string) bool {
	digits := 0
	for _, r := range num[1:] {
		if r == '.' {
			break
		}
		digits++
	}
	return digits >= 3 // 100 and more
}

// literal reads a literal string starting at c[0] == '(': balanced parentheses,
// backslash escapes, octal codes. It returns the string and the bytes it used; an
// unterminated string runs to the end.
func literal(c []byte) ([]byte, int) {
	var s []byte
	depth := 0
	i := 0
	for i < len(c) {
		b := c[i]
		i++
		switch b {
		case '(':
			if depth > 0 {
				s = append(s, b)
			}
			depth++
		case ')':
			depth--
			if depth == 0 {
				return s, i
			}
			s = append(s, b)
		case '\\':
			if i >= len(c) {
				return s, i
			}
			e := c[i]
			i++
			switch e {
			case 'n':
				s = append(s, '\n')
			case 'r':
				s = append(s, '\r')
			case 't':
				s = append(s, '\t')
			case 'b', 'f':
			case '\r':
				if i < len(c) && c[i] == '\n' {
					i++
				}
			case '\n':
			default:
				if e >= '0' && e <= '7' {
					v := int(e - '0')
					for k := 0; k < 2 && i < len(c) && c[i] >= '0' && c[i] <= '7'; k++ {
						v = v*8 + int(c[i]-'0')
						i++
					}
					s = append(s, byte(v))
				} else {
					s = append(s, e)
				}
			}
		default:
			s = append(s, b)
		}
	}
	return s, i
}

// hexString reads <hex digits> starting at c[0] == '<'; an odd last digit is followed by
// 0, as the standard says.
func hexString(c []byte) ([]byte, int) {
	var s []byte
	hi, half := byte(0), false
	i := 1
	for ; i < len(c) && c[i] != '>'; i++ {
		v, ok := hexVal(c[i])
		if !ok {
			continue
		}
		if half {
			s = append(s, hi<<4|v)
		} else {
			hi = v
		}
		half = !half
	}
	if half {
		s = append(s, hi<<4)
	}
	if i < len(c) {
		i++
	}
	return s, i
}

func hexVal(b byte) (byte, bool) {
	switch {
	case b >= '0' && b <= '9':
		return b - '0', true
	case b >= 'a' && b <= 'f':
		return b - 'a' + 10, true
	case b >= 'A' && b <= 'F':
		return b - 'A' + 10, true
	}
	return 0, false
}

func isSpace(b byte) bool {
	return b == ' ' || b == '\n' || b == '\r' || b == '\t' || b == '\f' || b == 0
}

func isDelim(b byte) bool {
	switch b {
	case '(', ')', '<', '>', '[', ']', '{', '}', '/', '%':
		return true
	}
	return false
}

func isNumber(tok string) bool {
	if tok == "" {
		return false
	}
	digits := 0
	for k := 0; k < len(tok); k++ {
		switch b := tok[k]; {
		case b >= '0' && b <= '9':
			digits++
		case b == '.':
		case (b == '-' || b == '+') && k == 0:
		default:
			return false
		}
	}
	return digits > 0
}
