package messages

import (
	"bytes"
	"encoding/json"
	"strconv"

	"github.com/maskgate/maskgate/backends/oai"
)

// Byte-level JSON helpers. Every value read here is a span of a body oai.ParseObject has
// already checked strictly, so a member that is a string starts with '"' and is a
// complete JSON string; its inner bytes (between the quotes) are escape-complete and can
// be concatenated with other strings' inner bytes into a new valid string without
// decoding either.

func isNull(v []byte) bool   { return len(v) == 0 || string(v) == "null" }
func isString(v []byte) bool { return len(v) > 1 && v[0] == '"' }
func isObject(v []byte) bool { return len(v) > 1 && v[0] == '{' }
func isArray(v []byte) bool  { return len(v) > 1 && v[0] == '[' }
func isNumber(v []byte) bool { return len(v) > 0 && (v[0] == '-' || (v[0] >= '0' && v[0] <= '9')) }

// inner is a raw JSON string's bytes between its quotes.
func inner(s []byte) []byte { return s[1 : len(s)-1] }

// unquote is the value of a raw JSON string.
func unquote(s []byte) string {
	if bytes.IndexByte(s, '\\') < 0 {
		return string(inner(s))
	}
	var out string
	if json.Unmarshal(s, &out) != nil {
		return string(inner(s))
	}
	return out
}

// kind names a raw value's JSON type for error messages.
func kind(v []byte) string {
	switch {
	case len(v) == 0:
		return "nothing"
	case v[0] == '{':
		return "an object"
	case v[0] == '[':
		return "an array"
	case v[0] == '"':
		return "a string"
	case v[0] == 't' || v[0] == 'f':
		return "a boolean"
	case v[0] == 'n':
		return "null"
	default:
		return "a number"
	}
}

// boolean reads a raw true or false.
func boolean(v []byte) (value, ok bool) {
	switch string(v) {
	case "true":
		return true, true
	case "false":
		return false, true
	}
	return false, false
}

// integer reads a raw JSON number that is a whole number (1024, 1024.0, 1e3).
func integer(v []byte) (int, bool) {
	if !isNumber(v) {
		return 0, false
	}
	if n, err := strconv.Atoi(string(v)); err == nil {
		return n, true
	}
	f, err := strconv.ParseFloat(string(v), 64)
	if err != nil || f != float64(int64(f)) || f > 1<<53 || f < -(1<<53) {
		return 0, false
	}
	return int(f), true
}

// joinStrings concatenates raw JSON strings into one, with sep (already JSON-escaped,
// e.g. `\n\n`) between them; every byte of every string is kept as the client wrote it.
func joinStrings(parts [][]byte, sep string) []byte {
	n := 2
	for _, p := range parts {
		n += len(p) + len(sep)
	}
	out := make([]byte, 0, n)
	out = append(out, '"')
	for i, p := range parts {
		if i > 0 {
			out = append(out, sep...)
		}
		out = append(out, inner(p)...)
	}
	return append(out, '"')
}

// appendString appends s as a JSON string (oai.AppendString).
func appendString(b []byte, s string) []byte { return oai.AppendString(b, s) }

// appendArray appends elems as a JSON array.
func appendArray(dst []byte, elems [][]byte) []byte {
	dst = append(dst, '[')
	for i, e := range elems {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, e...)
	}
	return append(dst, ']')
}

// object parses a raw value that must be an object.
func object(v []byte) (*oai.Object, bool) {
	if !isObject(v) {
		return nil, false
	}
	o, err := oai.ParseObject(v)
	return o, err == nil
}

// elements lists a raw array's elements.
func elements(v []byte) ([][]byte, bool) {
	if !isArray(v) {
		return nil, false
	}
	var out [][]byte
	err := oai.Elements(v, func(e []byte) error {
		out = append(out, e)
		return nil
	})
	return out, err == nil
}
