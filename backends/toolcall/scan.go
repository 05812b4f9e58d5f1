package toolcall

import (
	"bytes"
	"encoding/json"
	"unicode/utf8"
)

// index returns where the first of markers occurs in b, and which; -1 if none does.
func index(b []byte, markers []string) (int, string) {
	at, which := -1, ""
	for _, m := range markers {
		if i := bytes.Index(b, []byte(m)); i >= 0 && (at < 0 || i < at) {
			at, which = i, m
		}
	}
	return at, which
}

// partial returns the length of the longest end of b that is a proper prefix of one of
// markers: bytes that the next piece of text may turn into a marker.
func partial(b []byte, markers []string) int {
	n := 0
	for _, m := range markers {
		for k := min(len(m)-1, len(b)); k > n; k-- {
			if bytes.HasSuffix(b, []byte(m[:k])) {
				n = k
				break
			}
		}
	}
	return n
}

// partialRune returns how many bytes at the end of b begin a UTF-8 sequence that is not
// complete yet, so that a delta never splits a character.
func partialRune(b []byte) int {
	for k := 1; k <= min(utf8.UTFMax-1, len(b)); k++ {
		if c := b[len(b)-k]; utf8.RuneStart(c) {
			if !utf8.FullRune(b[len(b)-k:]) {
				return k
			}
			return 0
		}
	}
	return 0
}

// until passes text to emit up to the first of markers, consuming it but not the marker,
// and returns the marker. When none is in p.buf it passes on all that cannot begin one
// (all of it when final) and returns false.
func (p *Parser) until(markers []string, final bool, emit func(string)) (string, bool) {
	if i, m := index(p.buf, markers); i >= 0 {
		emit(string(p.buf[:i]))
		p.consume(i)
		return m, true
	}
	keep := 0
	if !final {
		keep = max(partial(p.buf, markers), partialRune(p.buf))
	}
	emit(string(p.buf[:len(p.buf)-keep]))
	p.consume(len(p.buf) - keep)
	return "", false
}

// status is how a call's text stands.
type status int

const (
	needMore status = iota // wait for more text
	closed                 // the end marker (or the end of the value) is here
	unclosed               // the text ended first
	tooLong                // the call passed Options.MaxCallBytes: give it up
)

// bounded finds the first of ends in p.buf, which holds a call's body from its start.
// seen carries how far earlier calls searched, so a long call fed token by token costs
// linear time. The body may be at most limit bytes; whether it is depends only on the
// text, never on how it was split.
func (p *Parser) bounded(ends []string, limit int, seen *int, final bool) (int, string, status) {
	longest := 0
	for _, e := range ends {
		longest = max(longest, len(e))
	}
	window := min(len(p.buf), limit+longest)
	from := max(0, min(*seen, window)-longest+1)
	if i, m := index(p.buf[from:window], ends); i >= 0 {
		if from+i > limit {
			return 0, "", tooLong
		}
		return from + i, m, closed
	}
	switch {
	case len(p.buf) >= limit+longest, final && len(p.buf) > limit:
		return 0, "", tooLong
	case final:
		return len(p.buf), "", unclosed
	}
	*seen = window
	return 0, "", needMore
}

// valueEnd finds where the JSON object or array at the start of a text ends. It follows
// only nesting and strings, resuming where the last call stopped; the caller validates
// the value it delimits.
type valueEnd struct {
	n, depth int
	str, esc bool
}

// scan returns the length of the value at the start of b, or -1 if b does not hold all
// of it yet. b must start with '{' or '[' and only grow between calls.
func (v *valueEnd) scan(b []byte) int {
	for ; v.n < len(b); v.n++ {
		c := b[v.n]
		switch {
		case v.esc:
			v.esc = false
		case v.str:
			switch c {
			case '\\':
				v.esc = true
			case '"':
				v.str = false
			}
		case c == '"':
			v.str = true
		case c == '{' || c == '[':
			v.depth++
		case c == '}' || c == ']':
			if v.depth--; v.depth == 0 {
				v.n++
				return v.n
			}
		}
	}
	return -1
}

// value delimits the JSON object or array that starts at b[at] within the call limit.
func (p *Parser) value(v *valueEnd, at int, final bool) (int, status) {
	if end := v.scan(p.buf[at:min(len(p.buf), at+p.max)]); end >= 0 {
		return at + end, closed
	}
	switch {
	case len(p.buf)-at >= p.max:
		return 0, tooLong
	case final:
		return 0, unclosed
	}
	return 0, needMore
}

// arguments is the OpenAI arguments string for raw, one JSON value: the bytes as they
// are, a string decoded (the JSON text it holds, as some models write it), or "{}" for
// nothing or null.
func arguments(raw []byte) (string, bool) {
	raw = bytes.TrimSpace(raw)
	switch {
	case len(raw) == 0 || string(raw) == "null":
		return "{}", true
	case !json.Valid(raw):
		return "", false
	case raw[0] == '"':
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return "", false
		}
		return s, true
	}
	return string(raw), true
}

// objectCall reads a call written as one JSON object, {"name": "A", argKey: {…}}, taking
// the arguments from the first of argKeys present; hasArgs says one was. Keys match
// exactly.
func objectCall(obj []byte, argKeys ...string) (name, args string, hasArgs, ok bool) {
	obj = bytes.TrimSpace(obj)
	if len(obj) == 0 || obj[0] != '{' {
		return "", "", false, false
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(obj, &m) != nil {
		return "", "", false, false
	}
	raw := m["name"]
	if len(raw) == 0 || raw[0] != '"' || json.Unmarshal(raw, &name) != nil || name == "" {
		return "", "", false, false
	}
	var a json.RawMessage
	for _, k := range argKeys {
		if v, found := m[k]; found {
			a, hasArgs = v, true
			break
		}
	}
	if args, ok = arguments(a); !ok {
		return "", "", false, false
	}
	return name, args, hasArgs, true
}

// spaces is the length of the whitespace at the start of b.
func spaces(b []byte) int {
	return len(b) - len(bytes.TrimLeft(b, " \t\r\n"))
}

// match is how the start of a text stands against a fixed text.
type match int

const (
	no    match = iota // it cannot begin with it
	maybe              // it is a proper prefix of it: more text decides
	has                // it begins with it
)

func prefixOf(b []byte, s string) match {
	switch {
	case bytes.HasPrefix(b, []byte(s)):
		return has
	case bytes.HasPrefix([]byte(s), b):
		return maybe
	}
	return no
}

// partialCall reads the head of a call written as one JSON object that the token limit
// cut: {"name": "A", then an argument key of argKeys and what came of its value. ok says
// the name is whole and nothing but (a beginning of) an argument key follows it; keyed
// says some of the key came; args is the arguments' text so far, trimmed, possibly
// empty.
func partialCall(obj []byte, argKeys ...string) (name, args string, keyed, ok bool) {
	i := spaces(obj)
	if i == len(obj) || obj[i] != '{' {
		return "", "", false, false
	}
	i++
	i += spaces(obj[i:])
	key, n, whole := jsonStringAt(obj[i:])
	if !whole || key != "name" {
		return "", "", false, false
	}
	i += n
	i += spaces(obj[i:])
	if i == len(obj) || obj[i] != ':' {
		return "", "", false, false
	}
	i++
	i += spaces(obj[i:])
	name, n, whole = jsonStringAt(obj[i:])
	if !whole || name == "" {
		return "", "", false, false
	}
	i += n
	i += spaces(obj[i:])
	if i == len(obj) {
		return name, "", false, true
	}
	if obj[i] != ',' {
		return "", "", false, false
	}
	i++
	rest := obj[i+spaces(obj[i:]):]
	for _, k := range argKeys {
		q := []byte(`"` + k + `"`)
		if len(rest) < len(q) {
			if bytes.HasPrefix(q, rest) {
				return name, "", len(rest) > 0, true
			}
			continue
		}
		if !bytes.HasPrefix(rest, q) {
			continue
		}
		j := len(q) + spaces(rest[len(q):])
		switch {
		case j == len(rest):
			return name, "", true, true
		case rest[j] != ':':
			return "", "", false, false
		}
		return name, string(bytes.TrimSpace(rest[j+1:])), true, true
	}
	return "", "", false, false
}

// jsonStringAt reads the JSON string at the start of b: its value, its length in b, and
// whether it is whole (closed and valid).
func jsonStringAt(b []byte) (string, int, bool) {
	if len(b) == 0 || b[0] != '"' {
		return "", 0, false
	}
	for i := 1; i < len(b); i++ {
		switch b[i] {
		case '\\':
			i++
		case '"':
			var s string
			if json.Unmarshal(b[:i+1], &s) != nil {
				return "", 0, false
			}
			return s, i + 1, true
		}
	}
	return "", 0, false
}

// cutInName says a JSON object cut by the token limit began as a call does, with
// {"name": " (spaces allowed), but ended before its name did: a call with nothing a
// client could use, which is dropped rather than returned as its text.
func cutInName(obj []byte) bool {
	i := spaces(obj)
	for _, want := range []string{"{", `"name"`, ":", `"`} {
		i += spaces(obj[i:])
		if i == len(obj) {
			return true
		}
		switch prefixOf(obj[i:], want) {
		case maybe:
			return true
		case no:
			return false
		}
		i += len(want)
	}
	_, _, whole := jsonStringAt(obj[i-1:])
	return !whole
}
