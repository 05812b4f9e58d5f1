// Package gbnftest holds the tests' own readers and writers for the gateway's grammars:
// the tool names a maskgate call grammar lets a model call, read back from the grammar's
// tool rule and the name tree under it (masking writes the allowed names as a radix
// tree, one rule per branching node), so that a test can check
// the set without depending on how the names are split across rules.
//
// It must never be imported by non-test code: it reads the grammar's text, not its
// language; llama.cpp's own grammar engine is the check of the language
// (masking's llamacpp-tagged tests).
package gbnftest

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"
)

// ToolNames returns the names grammar's tool rule allows, sorted. Each rule of the name
// tree is one alternative a line, `"LABEL" tnN`, `"LABEL" tool-args ARGS` or `tool-args
// ARGS` (a name that ends where others go on). Any other shape is an error, and so are
// two alternatives of one rule that open with the same character (the tree would not
// narrow the model's choice one character at a time).
func ToolNames(grammar string) ([]string, error) {
	var names []string
	var walk func(rule, prefix string, depth int) error
	walk = func(rule, prefix string, depth int) error {
		if depth > 256 {
			return fmt.Errorf("name tree deeper than 256 at %q", prefix)
		}
		_, rest, ok := strings.Cut(grammar, "\n"+rule+" ::= ")
		if !ok {
			return fmt.Errorf("no rule %s", rule)
		}
		firsts := map[rune]bool{}
		for {
			line, after, _ := strings.Cut(rest, "\n")
			more := strings.HasSuffix(line, " |")
			alt := strings.TrimSuffix(line, " |")
			switch {
			case strings.HasPrefix(alt, "tool-args "):
				names = append(names, prefix)
			case strings.HasPrefix(alt, `"`):
				label, tail, err := literal(alt)
				if err != nil {
					return fmt.Errorf("rule %s: %v", rule, err)
				}
				if label == "" {
					return fmt.Errorf("rule %s: an empty label", rule)
				}
				r, _ := utf8.DecodeRuneInString(label)
				if firsts[r] {
					return fmt.Errorf("rule %s has two alternatives opening with %q", rule, r)
				}
				firsts[r] = true
				switch {
				case strings.HasPrefix(tail, " tool-args "):
					names = append(names, prefix+label)
				case strings.HasPrefix(tail, " tn"):
					if err := walk(strings.TrimPrefix(tail, " "), prefix+label, depth+1); err != nil {
						return err
					}
				default:
					return fmt.Errorf("name %q is followed by neither its arguments nor a subtree: %.40q", prefix+label, tail)
				}
			default:
				return fmt.Errorf("rule %s: unexpected alternative %.60q", rule, alt)
			}
			if !more {
				return nil
			}
			rest = strings.TrimPrefix(after, "  ")
		}
	}
	if err := walk("tool", "", 0); err != nil {
		return nil, err
	}
	sort.Strings(names)
	return names, nil
}

// literal reads the GBNF string literal s begins with and returns its text and what
// follows it. llama.cpp's escapes: \x \u \U, \t \r \n \\ \" \[ \].
func literal(s string) (string, string, error) {
	if !strings.HasPrefix(s, `"`) {
		return "", "", fmt.Errorf("a literal expected at %.20q", s)
	}
	s = s[1:]
	var out strings.Builder
	for {
		if s == "" {
			return "", "", fmt.Errorf("an unterminated literal")
		}
		switch c := s[0]; {
		case c == '"':
			return out.String(), s[1:], nil
		case c == '\\':
			if len(s) < 2 {
				return "", "", fmt.Errorf("a dangling escape")
			}
			if n := map[byte]int{'x': 2, 'u': 4, 'U': 8}[s[1]]; n > 0 {
				if len(s) < 2+n {
					return "", "", fmt.Errorf("a short escape at %.20q", s)
				}
				v, err := strconv.ParseUint(s[2:2+n], 16, 32)
				if err != nil {
					return "", "", err
				}
				out.WriteRune(rune(v))
				s = s[2+n:]
				continue
			}
			r, ok := map[byte]byte{'t': '\t', 'r': '\r', 'n': '\n', '\\': '\\', '"': '"', '[': '[', ']': ']'}[s[1]]
			if !ok {
				return "", "", fmt.Errorf("an unknown escape at %.20q", s)
			}
			out.WriteByte(r)
			s = s[2:]
		default:
			if c < 0x20 {
				return "", "", fmt.Errorf("a raw control byte %#x in a literal", c)
			}
			r, n := utf8.DecodeRuneInString(s)
			out.WriteRune(r)
			s = s[n:]
		}
	}
}

// EscapeJSONString is the inside of a JSON string holding s, spelled the one way the
// gateway's custom-tool grammars admit (masking/lark.JSONStringGBNF): \" \\ \b \f \n \r
// \t, \u00xx for the other control characters and DEL, everything else as itself. It is
// the tests' own writer, independent of the grammar's.
func EscapeJSONString(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch r {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\b':
			b.WriteString(`\b`)
		case '\f':
			b.WriteString(`\f`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		default:
			if r < 0x20 || r == 0x7f {
				fmt.Fprintf(&b, `\u%04x`, r)
				continue
			}
			b.WriteRune(r)
		}
	}
	return b.String()
}
