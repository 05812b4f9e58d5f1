package masking

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
)

// Schemas are read as raw JSON, member by member in the order the client
// wrote them, never through a Go map: the grammar follows the schema's own
// property order, and equal schema bytes must give equal grammar bytes.

// jsonMember is one member of a JSON object: its key, decoded, and its value
// as raw bytes.
type jsonMember struct {
	key string
	val json.RawMessage
}

// jsonKind is the first byte of a JSON value, or 0 for none.
func jsonKind(v []byte) byte {
	v = bytes.TrimLeft(v, " \t\r\n")
	if len(v) == 0 {
		return 0
	}
	return v[0]
}

// objectMembers returns the members of the JSON object v in order, or false
// when v is not one. v is valid JSON (the renderer checks the whole schema
// first), so it is scanned rather than decoded.
func objectMembers(v []byte) ([]jsonMember, bool) {
	i := skipSpace(v, 0)
	if i >= len(v) || v[i] != '{' {
		return nil, false
	}
	var out []jsonMember
	i = skipSpace(v, i+1)
	for i < len(v) && v[i] != '}' {
		end := skipValue(v, i)
		if v[i] != '"' || end < 0 {
			return nil, false
		}
		key, ok := jsonString(v[i:end])
		if !ok {
			return nil, false
		}
		i = skipSpace(v, end)
		if i >= len(v) || v[i] != ':' {
			return nil, false
		}
		i = skipSpace(v, i+1)
		end = skipValue(v, i)
		if end < 0 {
			return nil, false
		}
		out = append(out, jsonMember{key, v[i:end]})
		i = skipSpace(v, end)
		if i < len(v) && v[i] == ',' {
			i = skipSpace(v, i+1)
		}
	}
	return out, i < len(v)
}

// arrayElems returns the elements of the JSON array v, or false when v is
// not one (v is valid JSON, as for objectMembers).
func arrayElems(v []byte) ([][]byte, bool) {
	i := skipSpace(v, 0)
	if i >= len(v) || v[i] != '[' {
		return nil, false
	}
	var out [][]byte
	i = skipSpace(v, i+1)
	for i < len(v) && v[i] != ']' {
		end := skipValue(v, i)
		if end < 0 {
			return nil, false
		}
		out = append(out, v[i:end])
		i = skipSpace(v, end)
		if i < len(v) && v[i] == ',' {
			i = skipSpace(v, i+1)
		}
	}
	return out, i < len(v)
}

func skipSpace(v []byte, i int) int {
	for i < len(v) && (v[i] == ' ' || v[i] == '\t' || v[i] == '\n' || v[i] == '\r') {
		i++
	}
	return i
}

// skipValue returns the end of the JSON value starting at v[i], or -1 when
// v ends first.
func skipValue(v []byte, i int) int {
	depth := 0
	for ; i < len(v); i++ {
		switch c := v[i]; c {
		case '"':
			for i++; i < len(v) && v[i] != '"'; i++ {
				if v[i] == '\\' {
					i++
				}
			}
			if i >= len(v) {
				return -1
			}
			if depth == 0 {
				return i + 1
			}
		case '{', '[':
			depth++
		case '}', ']':
			if depth--; depth == 0 {
				return i + 1
			}
			if depth < 0 {
				return -1
			}
		default:
			if depth == 0 {
				j := i
				for j < len(v) && !strings.ContainsRune(" \t\n\r,]}:", rune(v[j])) {
					j++
				}
				return j
			}
		}
	}
	return -1
}

// jsonString decodes v when it is a JSON string.
func jsonString(v []byte) (string, bool) {
	if jsonKind(v) != '"' {
		return "", false
	}
	if t := bytes.TrimSpace(v); bytes.IndexByte(t, '\\') < 0 && bytes.IndexByte(t[1:], '"') == len(t)-2 {
		return string(t[1 : len(t)-1]), true // no escapes: the bytes are the string
	}
	var s string
	if err := json.Unmarshal(v, &s); err != nil {
		return "", false
	}
	return s, true
}

// jsonCount reads v as a non-negative integer count (minItems, maxLength…);
// JSON Schema allows 5.0 for 5. False for anything else.
func jsonCount(v []byte) (int, bool) {
	k := jsonKind(v)
	if k < '0' || k > '9' {
		return 0, false
	}
	f, err := strconv.ParseFloat(strings.TrimSpace(string(v)), 64)
	if err != nil || f < 0 || f != float64(int64(f)) {
		return 0, false
	}
	if f > 1<<31 {
		return 1 << 31, true
	}
	return int(f), true
}

// canonicalJSON is v as one compact JSON text, with a top-level string
// re-encoded the way models write strings (raw UTF-8, only the escapes JSON
// needs), for enum and const literals.
func canonicalJSON(v []byte) (string, bool) {
	if s, ok := jsonString(v); ok {
		return string(append(appendJSONChars([]byte{'"'}, s), '"')), true
	}
	var b bytes.Buffer
	if err := json.Compact(&b, v); err != nil {
		return "", false
	}
	return b.String(), true
}

// jsonPointer resolves a same-document reference ("#" or "#/a/b/0", RFC 6901
// with ~0 and ~1) in doc; false for any other reference.
func jsonPointer(doc []byte, ref string) ([]byte, bool) {
	if !strings.HasPrefix(ref, "#") {
		return nil, false
	}
	p := ref[1:]
	if p == "" {
		return doc, true
	}
	if p[0] != '/' {
		return nil, false // a named anchor
	}
	cur := doc
	for _, tok := range strings.Split(p[1:], "/") {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		switch jsonKind(cur) {
		case '{':
			ms, ok := objectMembers(cur)
			if !ok {
				return nil, false
			}
			found := false
			for _, m := range ms {
				if m.key == tok {
					cur, found = m.val, true
					break
				}
			}
			if !found {
				return nil, false
			}
		case '[':
			es, ok := arrayElems(cur)
			i, err := strconv.Atoi(tok)
			if !ok || err != nil || i < 0 || i >= len(es) {
				return nil, false
			}
			cur = es[i]
		default:
			return nil, false
		}
	}
	return cur, true
}
