package lark

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

type tokKind int

const (
	tEOF tokKind = iota
	tNL
	tName
	tString // text: the decoded literal; flag: its flags
	tRegex  // text: the pattern; flag: its flags
	tNumber
	tPercent
	tColon
	tBar
	tLParen
	tRParen
	tLBrack
	tRBrack
	tQuestion
	tStar
	tPlus
	tTilde
	tArrow
	tDotDot
	tDot
	tComma
	tLBrace
	tRBrace
	tBang
)

type token struct {
	kind tokKind
	text string
	flag string
	line int
}

func lex(src string) ([]token, error) {
	var toks []token
	line := 1
	for i := 0; i < len(src); {
		c := src[i]
		switch {
		case c == '\n':
			toks = append(toks, token{kind: tNL, line: line})
			line++
			i++
		case c == ' ' || c == '\t' || c == '\r' || c == '\f':
			i++
		case c == '#' || strings.HasPrefix(src[i:], "//"):
			for i < len(src) && src[i] != '\n' {
				i++
			}
		case c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
			j := i
			for j < len(src) && (src[j] == '_' || src[j] >= 'a' && src[j] <= 'z' || src[j] >= 'A' && src[j] <= 'Z' || src[j] >= '0' && src[j] <= '9') {
				j++
			}
			toks = append(toks, token{kind: tName, text: src[i:j], line: line})
			i = j
		case c >= '0' && c <= '9' || c == '-' && i+1 < len(src) && src[i+1] >= '0' && src[i+1] <= '9':
			j := i + 1
			for j < len(src) && src[j] >= '0' && src[j] <= '9' {
				j++
			}
			toks = append(toks, token{kind: tNumber, text: src[i:j], line: line})
			i = j
		case c == '"':
			s, n, err := readString(src[i:], line)
			if err != nil {
				return nil, err
			}
			i += n
			toks = append(toks, token{kind: tString, text: s, flag: readFlags(src, &i), line: line})
		case c == '/':
			j := i + 1
			for j < len(src) && src[j] != '/' {
				if src[j] == '\n' {
					return nil, &Error{Line: line, Msg: "unterminated regular expression"}
				}
				if src[j] == '\\' {
					j++
				}
				j++
			}
			if j >= len(src) {
				return nil, &Error{Line: line, Msg: "unterminated regular expression"}
			}
			pat := strings.ReplaceAll(src[i+1:j], `\/`, `/`)
			i = j + 1
			toks = append(toks, token{kind: tRegex, text: pat, flag: readFlags(src, &i), line: line})
		case strings.HasPrefix(src[i:], "->"):
			toks = append(toks, token{kind: tArrow, line: line})
			i += 2
		case strings.HasPrefix(src[i:], ".."):
			toks = append(toks, token{kind: tDotDot, line: line})
			i += 2
		default:
			k := punctKind(c)
			if k == tEOF {
				r, _ := utf8.DecodeRuneInString(src[i:])
				return nil, &Error{Line: line, Msg: fmt.Sprintf("unexpected %q", r)}
			}
			toks = append(toks, token{kind: k, line: line})
			i++
		}
	}
	return append(toks, token{kind: tEOF, line: line}), nil
}

// punctKind is the token of a one-byte punctuation mark, tEOF for none.
func punctKind(c byte) tokKind {
	const marks = "%:|()[]?*+~.,{}!"
	kinds := [...]tokKind{tPercent, tColon, tBar, tLParen, tRParen, tLBrack, tRBrack, tQuestion,
		tStar, tPlus, tTilde, tDot, tComma, tLBrace, tRBrace, tBang}
	if i := strings.IndexByte(marks, c); i >= 0 {
		return kinds[i]
	}
	return tEOF
}

func readFlags(src string, i *int) string {
	j := *i
	for j < len(src) && strings.IndexByte("imslux", src[j]) >= 0 {
		j++
	}
	f := src[*i:j]
	*i = j
	return f
}

// readString decodes a Lark string literal at the start of s (Python's
// escapes) and returns it with the bytes read.
func readString(s string, line int) (string, int, error) {
	var b strings.Builder
	for i := 1; i < len(s); {
		c := s[i]
		switch c {
		case '"':
			return b.String(), i + 1, nil
		case '\n':
			return "", 0, &Error{Line: line, Msg: "unterminated string literal"}
		case '\\':
			if i+1 >= len(s) {
				return "", 0, &Error{Line: line, Msg: "unterminated string literal"}
			}
			e := s[i+1]
			i += 2
			switch e {
			case 'n':
				b.WriteByte('\n')
			case 't':
				b.WriteByte('\t')
			case 'r':
				b.WriteByte('\r')
			case 'f':
				b.WriteByte('\f')
			case 'v':
				b.WriteByte('\v')
			case '0':
				b.WriteByte(0)
			case 'x', 'u', 'U':
				n := map[byte]int{'x': 2, 'u': 4, 'U': 8}[e]
				if i+n > len(s) {
					return "", 0, &Error{Line: line, Msg: fmt.Sprintf(`a short \%c escape in a string literal`, e)}
				}
				v, err := strconv.ParseUint(s[i:i+n], 16, 32)
				if err != nil || v > utf8.MaxRune {
					return "", 0, &Error{Line: line, Msg: fmt.Sprintf(`a bad \%c escape in a string literal`, e)}
				}
				b.WriteRune(rune(v))
				i += n
			case '"', '\\', '\'':
				b.WriteByte(e)
			default:
				// Python keeps an unknown escape as written.
				b.WriteByte('\\')
				b.WriteByte(e)
			}
		default:
			b.WriteByte(c)
			i++
		}
	}
	return "", 0, &Error{Line: line, Msg: "unterminated string literal"}
}
