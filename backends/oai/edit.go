package oai

import (
	"encoding/json"
	"errors"
	"slices"
)

var errNotObject = errors.New("request body is not a JSON object")

// member is one top-level "key": value pair of an object, by byte offsets.
type member struct {
	key      string
	keyStart int // offset of the key's opening quote
	valStart int
	valEnd   int // one past the value's last byte
}

// members lists the top-level members of a JSON object in order, and the offset of the
// closing brace. It assumes valid JSON (callers parse the body first) and only needs to be
// right about where values start and end.
func members(b []byte) ([]member, int, error) {
	i := skipSpace(b, 0)
	if i >= len(b) || b[i] != '{' {
		return nil, 0, errNotObject
	}
	i = skipSpace(b, i+1)
	var out []member
	for i < len(b) {
		if b[i] == '}' {
			return out, i, nil
		}
		if b[i] == ',' {
			i = skipSpace(b, i+1)
			continue
		}
		if b[i] != '"' {
			return nil, 0, errNotObject
		}
		ks := i
		ke, err := skipString(b, i)
		if err != nil {
			return nil, 0, err
		}
		var key string
		if json.Unmarshal(b[ks:ke], &key) != nil {
			key = string(b[ks+1 : ke-1])
		}
		i = skipSpace(b, ke)
		if i >= len(b) || b[i] != ':' {
			return nil, 0, errNotObject
		}
		vs := skipSpace(b, i+1)
		ve, err := skipValue(b, vs)
		if err != nil {
			return nil, 0, err
		}
		out = append(out, member{key: key, keyStart: ks, valStart: vs, valEnd: ve})
		i = skipSpace(b, ve)
	}
	return nil, 0, errNotObject
}

// Get returns the raw bytes of the top-level member key, if present. A key that occurs
// more than once yields its last value, as encoding/json decodes it.
func Get(body []byte, key string) ([]byte, bool) {
	ms, _, err := members(body)
	if err != nil {
		return nil, false
	}
	for j := len(ms) - 1; j >= 0; j-- {
		if ms[j].key == key {
			return body[ms[j].valStart:ms[j].valEnd], true
		}
	}
	return nil, false
}

// Set returns body with the top-level member key set to value (raw JSON, trusted to be
// valid). An existing value is replaced in place — every occurrence, if the key repeats —
// and a missing key is appended after the last member. All other bytes are unchanged.
func Set(body []byte, key string, value []byte) ([]byte, error) {
	ms, closing, err := members(body)
	if err != nil {
		return nil, err
	}
	out := make([]byte, 0, len(body)+len(key)+len(value)+4)
	last := 0
	found := false
	for _, m := range ms {
		if m.key != key {
			continue
		}
		found = true
		out = append(out, body[last:m.valStart]...)
		out = append(out, value...)
		last = m.valEnd
	}
	if found {
		return append(out, body[last:]...), nil
	}
	at := closing
	sep := ""
	if len(ms) > 0 {
		at = ms[len(ms)-1].valEnd
		sep = ","
	}
	out = append(out, body[:at]...)
	out = append(out, sep...)
	quoted, err := json.Marshal(key)
	if err != nil {
		return nil, err
	}
	out = append(out, quoted...)
	out = append(out, ':')
	out = append(out, value...)
	return append(out, body[at:]...), nil
}

// Delete returns body without the top-level member key (every occurrence). The comma that
// separated it goes with it; other bytes are unchanged.
func Delete(body []byte, key string) ([]byte, error) {
	out := body
	for {
		ms, _, err := members(out)
		if err != nil {
			return nil, err
		}
		j := slices.IndexFunc(ms, func(m member) bool { return m.key == key })
		if j < 0 {
			return out, nil
		}
		// Cut from the end of the previous member to the end of this one, so the comma
		// before it goes; the first member instead takes the comma after it.
		from, to := ms[j].keyStart, ms[j].valEnd
		if j > 0 {
			from = ms[j-1].valEnd
		} else if len(ms) > 1 {
			to = ms[1].keyStart
		}
		out = append(append(make([]byte, 0, len(out)-(to-from)), out[:from]...), out[to:]...)
	}
}

func skipSpace(b []byte, i int) int {
	for i < len(b) {
		switch b[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

// skipString returns the offset one past the string that starts at b[i] == '"'.
func skipString(b []byte, i int) (int, error) {
	for j := i + 1; j < len(b); j++ {
		switch b[j] {
		case '\\':
			j++
		case '"':
			return j + 1, nil
		}
	}
	return 0, errNotObject
}

// skipValue returns the offset one past the JSON value that starts at b[i].
func skipValue(b []byte, i int) (int, error) {
	if i >= len(b) {
		return 0, errNotObject
	}
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		depth := 0
		for j := i; j < len(b); j++ {
			switch b[j] {
			case '"':
				e, err := skipString(b, j)
				if err != nil {
					return 0, err
				}
				j = e - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return j + 1, nil
				}
			}
		}
		return 0, errNotObject
	default: // number, true, false, null
		j := i
		for j < len(b) {
			switch b[j] {
			case ',', '}', ']', ' ', '\t', '\n', '\r':
				return j, nil
			}
			j++
		}
		return j, nil
	}
}
