package oai

import (
	"encoding/json"
	"errors"
)

var errNotObject = errors.New("request body is not a JSON object")

// member is one top-level "key": value pair of an object, by byte offsets.
type member struct {
	keyStart, keyEnd int // the key with its quotes
	valStart, valEnd int // one past the value's last byte
	elems            int // the elements of an array value, counted by the scan
}

// Object is a JSON object with its top-level members indexed, so that reading and
// editing them costs one scan of the bytes. It never copies or re-encodes what it does
// not change.
type Object struct {
	b       []byte
	members []member
	closing int // offset of the closing brace
}

// ParseObject checks that b is exactly one JSON object (strictly, like json.Valid) and
// indexes its top-level members. The Object aliases b.
func ParseObject(b []byte) (*Object, error) { return parseObject(b, nil, "") }

// ParseObjectKnown is ParseObject with known vouching for the array under key in the
// top-level object: bytes it remembers validated are compared, not scanned again.
func ParseObjectKnown(b []byte, known Known, key string) (*Object, error) {
	return parseObject(b, known, key)
}

func parseObject(b []byte, known Known, knownKey string) (*Object, error) {
	start := skipSpace(b, 0)
	if start >= len(b) || b[start] != '{' {
		if start >= len(b) {
			return nil, &SyntaxError{Offset: start, Msg: "unexpected end of JSON input"}
		}
		return nil, errNotObject
	}
	o := &Object{b: b, members: make([]member, 0, 16)}
	s := scanner{b: b, known: known, knownKey: knownKey}
	end, err := s.object(start, func(ks, ke, vs, ve int) {
		m := member{keyStart: ks, keyEnd: ke, valStart: vs, valEnd: ve}
		if b[vs] == '[' {
			m.elems = s.elems // value has just returned this array
		}
		o.members = append(o.members, m)
	})
	if err != nil {
		return nil, err
	}
	if rest := skipSpace(b, end); rest != len(b) {
		return nil, &SyntaxError{Offset: rest, Msg: "invalid character after top-level value"}
	}
	o.closing = end - 1
	if v := s.scanned; known != nil && v[1] > v[0] {
		known.Remember(b[v[0]:v[1]], v[2])
	}
	return o, nil
}

// Bytes returns the object's bytes.
func (o *Object) Bytes() []byte { return o.b }

// keyIs compares a member's key with key. Plain ASCII keys compare as bytes; a key with
// escapes or non-ASCII bytes is decoded as encoding/json would (invalid UTF-8 becomes
// U+FFFD).
func (o *Object) keyIs(m member, key string) bool {
	return keyEquals(o.b[m.keyStart:m.keyEnd], key)
}

// keyEquals reports whether the JSON string quoted (with its quotes) decodes to key.
func keyEquals(quoted []byte, key string) bool {
	raw := quoted[1 : len(quoted)-1]
	plain := true
	for _, c := range raw {
		if c == '\\' || c >= 0x80 {
			plain = false
			break
		}
	}
	if plain {
		return string(raw) == key
	}
	var k string
	return json.Unmarshal(quoted, &k) == nil && k == key
}

// Get returns the raw value of the top-level member key. A key that occurs more than
// once yields its last value, as encoding/json decodes it.
func (o *Object) Get(key string) ([]byte, bool) {
	for j := len(o.members) - 1; j >= 0; j-- {
		if m := o.members[j]; o.keyIs(m, key) {
			return o.b[m.valStart:m.valEnd], true
		}
	}
	return nil, false
}

// Each calls visit with each top-level member in order: its key's raw bytes between the
// quotes (escapes left as they are) and its value's bytes, until visit returns false.
func (o *Object) Each(visit func(key, value []byte) bool) {
	for _, m := range o.members {
		if !visit(o.b[m.keyStart+1:m.keyEnd-1], o.b[m.valStart:m.valEnd]) {
			return
		}
	}
}

// Len returns the number of elements of the array that is the top-level member key,
// counted by the scan that indexed the object; ok is false when key is missing or its
// value is not an array.
func (o *Object) Len(key string) (n int, ok bool) {
	for j := len(o.members) - 1; j >= 0; j-- {
		if m := o.members[j]; o.keyIs(m, key) {
			if o.b[m.valStart] != '[' {
				return 0, false
			}
			return m.elems, true
		}
	}
	return 0, false
}

// Set returns new bytes with the top-level member key set to value (raw JSON, trusted to
// be valid). An existing value is replaced in place — every occurrence, if the key
// repeats — and a missing key is appended after the last member. All other bytes are
// unchanged; the Object itself is not modified.
func (o *Object) Set(key string, value []byte) []byte {
	out := make([]byte, 0, len(o.b)+len(key)+len(value)+4)
	last := 0
	found := false
	for _, m := range o.members {
		if !o.keyIs(m, key) {
			continue
		}
		found = true
		out = append(out, o.b[last:m.valStart]...)
		out = append(out, value...)
		last = m.valEnd
	}
	if found {
		return append(out, o.b[last:]...)
	}
	at, sep := o.closing, ""
	if n := len(o.members); n > 0 {
		at, sep = o.members[n-1].valEnd, ","
	}
	quoted, _ := json.Marshal(key) // a string always marshals
	out = append(out, o.b[:at]...)
	out = append(out, sep...)
	out = append(out, quoted...)
	out = append(out, ':')
	out = append(out, value...)
	return append(out, o.b[at:]...)
}

// SetEnd is Set without the copy where it can: a missing member is written after the
// last one in the spare capacity of the object's own bytes, the few bytes after that
// member (space, the closing brace, space) moved after it, and the returned slice shares
// the object's bytes. The result is Set's, byte for byte. It copies as Set does when the
// key is present, the capacity is short, or more than maxMovedTail bytes would move.
// After SetEnd the Object and every slice of its bytes from its last member on are spent:
// the members before stay as they were.
func (o *Object) SetEnd(key string, value []byte) []byte {
	if _, ok := o.Get(key); ok {
		return o.Set(key, value)
	}
	at, sep := o.closing, 0
	if n := len(o.members); n > 0 {
		at, sep = o.members[n-1].valEnd, 1
	}
	var moved [maxMovedTail]byte
	tail := o.b[at:]
	quoted, _ := json.Marshal(key) // a string always marshals
	if len(tail) > len(moved) || at+sep+len(quoted)+1+len(value)+len(tail) > cap(o.b) {
		return o.Set(key, value)
	}
	n := copy(moved[:], tail)
	out := o.b[:at]
	if sep > 0 {
		out = append(out, ',')
	}
	out = append(out, quoted...)
	out = append(out, ':')
	out = append(out, value...)
	return append(out, moved[:n]...)
}

// maxMovedTail bounds what SetEnd moves after a member it adds.
const maxMovedTail = 32

// Get returns the raw value of the top-level member key of the JSON object body.
func Get(body []byte, key string) ([]byte, bool) {
	o, err := ParseObject(body)
	if err != nil {
		return nil, false
	}
	return o.Get(key)
}

// Member returns the value of the top-level member key of the JSON object b (the last,
// if the key repeats) without indexing the object, so without allocating; isObject is
// false when b is not exactly one valid JSON object.
func Member(b []byte, key string) (val []byte, found, isObject bool) {
	start := skipSpace(b, 0)
	if start >= len(b) || b[start] != '{' {
		return nil, false, false
	}
	s := scanner{b: b}
	end, err := s.object(start, func(ks, ke, vs, ve int) {
		if s.keyIs(ks, ke, key) {
			val, found = b[vs:ve], true
		}
	})
	if err != nil || skipSpace(b, end) != len(b) {
		return nil, false, false
	}
	return val, found, true
}

// Set is Object.Set on body.
func Set(body []byte, key string, value []byte) ([]byte, error) {
	o, err := ParseObject(body)
	if err != nil {
		return nil, err
	}
	return o.Set(key, value), nil
}

// Delete returns body without the top-level member key (every occurrence). The comma that
// separated it goes with it; other bytes are unchanged.
func Delete(body []byte, key string) ([]byte, error) {
	out := body
	for {
		o, err := ParseObject(out)
		if err != nil {
			return nil, err
		}
		j := -1
		for i, m := range o.members {
			if o.keyIs(m, key) {
				j = i
				break
			}
		}
		if j < 0 {
			return out, nil
		}
		ms := o.members
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

// UsageOptions is the request's stream_options with include_usage true, its other
// options kept: what a stream that must report its usage sends.
func (o *Object) UsageOptions() []byte {
	if cur, ok := o.Get("stream_options"); ok {
		if so, err := ParseObject(cur); err == nil {
			return so.Set("include_usage", []byte("true"))
		}
	}
	return []byte(`{"include_usage":true}`)
}
