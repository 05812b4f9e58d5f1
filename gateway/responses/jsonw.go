package responses

import (
	"encoding/json"
	"strconv"

	"github.com/maskgate/maskgate/backends/oai"
	"github.com/maskgate/maskgate/gateway/door"
)

// This file holds the small JSON writer and readers the package builds its objects
// with. Client values are copied as raw bytes; only strings the package makes itself
// are encoded here.

// obj appends members to a JSON object under construction, in the order written.
type obj struct {
	b []byte
	n int
}

func newObj(size int) *obj {
	o := &obj{b: make([]byte, 0, size)}
	o.b = append(o.b, '{')
	return o
}

func (o *obj) key(k string) {
	if o.n > 0 {
		o.b = append(o.b, ',')
	}
	o.n++
	o.b = appendString(o.b, k)
	o.b = append(o.b, ':')
}

// raw writes k with a value that is already JSON.
func (o *obj) raw(k string, v []byte) *obj {
	o.key(k)
	o.b = append(o.b, v...)
	return o
}

// rawOr writes v, or def when v is absent or null.
func (o *obj) rawOr(k string, v []byte, def string) *obj {
	if isAbsent(v) {
		o.key(k)
		o.b = append(o.b, def...)
		return o
	}
	return o.raw(k, v)
}

func (o *obj) str(k, s string) *obj {
	o.key(k)
	o.b = appendString(o.b, s)
	return o
}

func (o *obj) num(k string, n int64) *obj {
	o.key(k)
	o.b = strconv.AppendInt(o.b, n, 10)
	return o
}

func (o *obj) done() []byte { return append(o.b, '}') }

// array joins JSON values into an array.
func array(vs [][]byte) []byte {
	n := 2
	for _, v := range vs {
		n += len(v) + 1
	}
	b := make([]byte, 0, n)
	b = append(b, '[')
	for i, v := range vs {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, v...)
	}
	return append(b, ']')
}

func rawArray(vs []json.RawMessage) []byte {
	bs := make([][]byte, len(vs))
	for i, v := range vs {
		bs[i] = v
	}
	return array(bs)
}

// appendString appends s as a JSON string (oai.AppendString).
func appendString(b []byte, s string) []byte { return oai.AppendString(b, s) }

func quote(s string) []byte { return appendString(nil, s) }

// isAbsent reports a member that is missing or null: OpenAI treats both alike.
func isAbsent(v []byte) bool { return len(v) == 0 || string(v) == "null" }

// kindOf names a JSON value's type for error messages.
func kindOf(v []byte) string { return oai.Kind(v) }

// fields reads the members of one JSON object, naming them for errors under prefix
// (e.g. "input[3]").
type fields struct {
	o      *oai.Object
	prefix string
}

func (f fields) param(key string) string {
	if f.prefix == "" {
		return key
	}
	return f.prefix + "." + key
}

// get returns a member's raw value; nil when absent or null.
func (f fields) get(key string) []byte {
	v, ok := f.o.Get(key)
	if !ok || isAbsent(v) {
		return nil
	}
	return v
}

// str reads an optional string member: "" when absent or null.
func (f fields) str(key string) (string, *door.Error) {
	v := f.get(key)
	if v == nil {
		return "", nil
	}
	if v[0] != '"' {
		return "", typeErr(f.param(key), "a string", v)
	}
	var s string
	if err := json.Unmarshal(v, &s); err != nil {
		return "", typeErr(f.param(key), "a string", v)
	}
	return s, nil
}

// need reads a required string member, which must not be empty.
func (f fields) need(key string) (string, *door.Error) {
	if f.get(key) == nil {
		return "", missing(f.param(key))
	}
	s, err := f.str(key)
	if err == nil && s == "" {
		err = invalid(f.param(key), "'%s' must not be empty", f.param(key))
	}
	return s, err
}

// rawStr returns a string member's raw bytes (nil when absent or null), checking it is
// a string.
func (f fields) rawStr(key string) ([]byte, *door.Error) {
	v := f.get(key)
	if v != nil && v[0] != '"' {
		return nil, typeErr(f.param(key), "a string", v)
	}
	return v, nil
}

func (f fields) rawBool(key string) ([]byte, *door.Error) {
	v := f.get(key)
	if v != nil && string(v) != "true" && string(v) != "false" {
		return nil, typeErr(f.param(key), "a boolean", v)
	}
	return v, nil
}

func (f fields) boolean(key string, def bool) (bool, *door.Error) {
	v, err := f.rawBool(key)
	if err != nil || v == nil {
		return def, err
	}
	return string(v) == "true", nil
}

func (f fields) rawNumber(key string) ([]byte, *door.Error) {
	v := f.get(key)
	if v != nil && v[0] != '-' && (v[0] < '0' || v[0] > '9') {
		return nil, typeErr(f.param(key), "a number", v)
	}
	return v, nil
}

func (f fields) rawObject(key string) ([]byte, *door.Error) {
	v := f.get(key)
	if v != nil && v[0] != '{' {
		return nil, typeErr(f.param(key), "an object", v)
	}
	return v, nil
}

func (f fields) rawArray(key string) ([]byte, *door.Error) {
	v := f.get(key)
	if v != nil && v[0] != '[' {
		return nil, typeErr(f.param(key), "an array", v)
	}
	return v, nil
}

// elements splits a valid JSON array into its elements.
func elements(arr []byte) []json.RawMessage {
	var out []json.RawMessage
	_ = oai.Elements(arr, func(e []byte) error { // arr was validated with its object
		out = append(out, e)
		return nil
	})
	return out
}

// object parses one value that must be an object.
func object(v []byte, param string) (fields, *door.Error) {
	o, err := oai.ParseObject(v)
	if err != nil {
		return fields{}, typeErr(param, "an object", v)
	}
	return fields{o: o, prefix: param}, nil
}

// unquote decodes a raw JSON string; "" when it is not one.
func unquote(v []byte) string {
	var s string
	_ = json.Unmarshal(v, &s)
	return s
}
