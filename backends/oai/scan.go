package oai

import (
	"encoding/binary"
	"fmt"
)

// maxDepth bounds nesting, as encoding/json does, so hostile input cannot exhaust the
// stack.
const maxDepth = 10000

// SyntaxError is invalid JSON at a byte offset.
type SyntaxError struct {
	Offset int
	Msg    string
}

func (e *SyntaxError) Error() string { return fmt.Sprintf("%s at byte %d", e.Msg, e.Offset) }

// scanner checks JSON strictly (RFC 8259 grammar, as encoding/json.Valid accepts it) and
// reports where values end. It allocates nothing on success: the gateway runs it over
// every request body and every streamed chunk.
type scanner struct {
	b     []byte
	depth int
	// known, when set, may vouch for the value of knownKey in the top-level object: a
	// value it remembers validated is skipped by comparing bytes, not scanned again.
	known    Known
	knownKey string
	// scanned is the span and element count of knownKey's value when it was scanned in
	// full (end 0 if not), so the caller can remember it once the whole document proves
	// valid.
	scanned [3]int
	// elems is the element count of the array that array returned last: right after
	// value returns an array, the count of that array.
	elems int
}

func (s *scanner) fail(i int, msg string) error { return &SyntaxError{Offset: i, Msg: msg} }

// value returns the offset one past the value starting at or after i (leading space
// skipped).
func (s *scanner) value(i int) (int, error) {
	i = skipSpace(s.b, i)
	if i >= len(s.b) {
		return 0, s.fail(i, "unexpected end of JSON input")
	}
	switch c := s.b[i]; {
	case c == '{':
		return s.object(i, nil)
	case c == '[':
		return s.array(i)
	case c == '"':
		return s.str(i)
	case c == '-' || (c >= '0' && c <= '9'):
		return s.number(i)
	case c == 't':
		return s.literal(i, "true")
	case c == 'f':
		return s.literal(i, "false")
	case c == 'n':
		return s.literal(i, "null")
	default:
		return 0, s.fail(i, fmt.Sprintf("invalid character %q looking for beginning of value", c))
	}
}

// object scans the object at b[i] == '{'. visit, when set, sees each member's key (raw,
// with quotes) and value span.
func (s *scanner) object(i int, visit func(keyStart, keyEnd, valStart, valEnd int)) (int, error) {
	if s.depth++; s.depth > maxDepth {
		return 0, s.fail(i, "exceeded max depth")
	}
	defer func() { s.depth-- }()
	i = skipSpace(s.b, i+1)
	if i < len(s.b) && s.b[i] == '}' {
		return i + 1, nil
	}
	for {
		if i >= len(s.b) || s.b[i] != '"' {
			return 0, s.fail(i, "expected a string key in object")
		}
		ks := i
		ke, err := s.str(i)
		if err != nil {
			return 0, err
		}
		i = skipSpace(s.b, ke)
		if i >= len(s.b) || s.b[i] != ':' {
			return 0, s.fail(i, "expected ':' after object key")
		}
		vs := skipSpace(s.b, i+1)
		var ve int
		if s.known != nil && s.depth == 1 && vs < len(s.b) && s.b[vs] == '[' && s.keyIs(ks, ke, s.knownKey) {
			if n, elems, ok := s.known.Match(s.b[vs:]); ok {
				ve, s.elems = vs+n, elems
			} else {
				if ve, err = s.value(vs); err != nil {
					return 0, err
				}
				s.scanned = [3]int{vs, ve, s.elems}
			}
		} else if ve, err = s.value(vs); err != nil {
			return 0, err
		}
		if visit != nil {
			visit(ks, ke, vs, ve)
		}
		i = skipSpace(s.b, ve)
		if i >= len(s.b) {
			return 0, s.fail(i, "unexpected end of JSON input in object")
		}
		switch s.b[i] {
		case ',':
			i = skipSpace(s.b, i+1)
		case '}':
			return i + 1, nil
		default:
			return 0, s.fail(i, "expected ',' or '}' after object value")
		}
	}
}

func (s *scanner) array(i int) (int, error) {
	if s.depth++; s.depth > maxDepth {
		return 0, s.fail(i, "exceeded max depth")
	}
	defer func() { s.depth-- }()
	i = skipSpace(s.b, i+1)
	if i < len(s.b) && s.b[i] == ']' {
		s.elems = 0
		return i + 1, nil
	}
	for n := 1; ; n++ {
		e, err := s.value(i)
		if err != nil {
			return 0, err
		}
		i = skipSpace(s.b, e)
		if i >= len(s.b) {
			return 0, s.fail(i, "unexpected end of JSON input in array")
		}
		switch s.b[i] {
		case ',':
			i++
		case ']':
			s.elems = n
			return i + 1, nil
		default:
			return 0, s.fail(i, "expected ',' or ']' after array element")
		}
	}
}

// plainByte marks bytes that need no attention inside a string, so the common run of
// text is skipped by a tight loop.
var plainByte = func() (t [256]bool) {
	for c := 0x20; c < 256; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// special8 says whether any of the eight bytes in w is '"', '\\' or below 0x20: the
// bit tricks for "has a zero byte" and "has a byte less than n", which are exact about
// whether any byte qualifies (they may mark the wrong one, which the byte loop sorts out).
func special8(w uint64) bool {
	const lo, hi = 0x0101010101010101, 0x8080808080808080
	q := w ^ (lo * '"')
	bs := w ^ (lo * '\\')
	return ((q-lo)&^q|(bs-lo)&^bs|(w-lo*0x20)&^w)&hi != 0
}

func (s *scanner) str(i int) (int, error) {
	b := s.b
	for j := i + 1; j < len(b); j++ {
		// Eight bytes at a time while none is a quote, a backslash or a control
		// character (the usual run of text), then a byte at a time.
		for j+8 <= len(b) && !special8(binary.LittleEndian.Uint64(b[j:])) {
			j += 8
		}
		for j < len(b) && plainByte[b[j]] {
			j++
		}
		if j >= len(b) {
			break
		}
		switch c := b[j]; {
		case c == '"':
			return j + 1, nil
		case c == '\\':
			j++
			if j >= len(b) {
				break
			}
			switch b[j] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if j+4 >= len(b) || !isHex(b[j+1]) || !isHex(b[j+2]) || !isHex(b[j+3]) || !isHex(b[j+4]) {
					return 0, s.fail(j, `invalid \u escape in string`)
				}
				j += 4
			default:
				return 0, s.fail(j, "invalid escape in string")
			}
		case c < 0x20:
			return 0, s.fail(j, "control character in string")
		}
	}
	return 0, s.fail(len(b), "unterminated string")
}

func isHex(c byte) bool {
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')
}

func (s *scanner) number(i int) (int, error) {
	b, j := s.b, i
	if b[j] == '-' {
		j++
	}
	digits := func() bool {
		start := j
		for j < len(b) && b[j] >= '0' && b[j] <= '9' {
			j++
		}
		return j > start
	}
	switch {
	case j < len(b) && b[j] == '0':
		j++
	case !digits():
		return 0, s.fail(j, "invalid number")
	}
	if j < len(b) && b[j] == '.' {
		j++
		if !digits() {
			return 0, s.fail(j, "invalid number: digits expected after '.'")
		}
	}
	if j < len(b) && (b[j] == 'e' || b[j] == 'E') {
		j++
		if j < len(b) && (b[j] == '+' || b[j] == '-') {
			j++
		}
		if !digits() {
			return 0, s.fail(j, "invalid number: digits expected in exponent")
		}
	}
	return j, nil
}

func (s *scanner) literal(i int, lit string) (int, error) {
	if len(s.b)-i < len(lit) || string(s.b[i:i+len(lit)]) != lit {
		return 0, s.fail(i, "invalid literal")
	}
	return i + len(lit), nil
}

// Valid reports whether b is one JSON value (with optional surrounding space), as
// encoding/json.Valid does, without allocating.
func Valid(b []byte) bool {
	s := scanner{b: b}
	end, err := s.value(0)
	return err == nil && skipSpace(b, end) == len(b)
}

// keyIs reports whether the key at b[ks:ke] (with its quotes) decodes to key.
func (s *scanner) keyIs(ks, ke int, key string) bool { return keyEquals(s.b[ks:ke], key) }

// Known remembers values that scans have validated, so that a later scan of the same
// bytes can skip them: agents resend the same tools array, byte for byte, every turn. A
// JSON array ends where it ends, so a remembered complete array that the bytes at a value
// begin with is that value, whatever follows.
type Known interface {
	// Match returns the length and element count of a remembered value that b begins
	// with, comparing bytes.
	Match(b []byte) (n, elems int, ok bool)
	// Remember is given a value a scan validated in full, in a document that was valid;
	// v is the document's bytes, to be copied if kept.
	Remember(v []byte, elems int)
}
