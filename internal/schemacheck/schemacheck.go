// Package schemacheck validates JSON instances against the subset of JSON
// Schema that tool parameters in this repository's tests use, so tests can
// check constrained decoding against an oracle written apart from the
// grammar renderer in masking.
//
// Supported keywords: type (a name or a list), nullable, enum, const,
// properties, required, additionalProperties (a boolean or a schema; absent
// next to "properties" means no other key, the reading llama.cpp and
// OpenAI's strict mode give it and masking documents), items (a schema),
// prefixItems, minItems, maxItems, minLength and maxLength (in code points),
// anyOf, oneOf, $ref to "#" or "#/…" pointers, and the annotations
// description, title, default, examples, $defs and definitions. Any other
// keyword is an error, so that a test cannot lean on a keyword this oracle
// ignores.
//
// It is for tests only and holds no state.
package schemacheck

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/big"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Validate reports whether instance (JSON) is valid against schema (JSON),
// with an error saying where it is not.
func Validate(schema, instance []byte) error {
	if !json.Valid(instance) {
		return fmt.Errorf("instance is not JSON")
	}
	d := json.NewDecoder(bytes.NewReader(instance))
	d.UseNumber()
	inst, err := decodeOrdered(d)
	if err != nil {
		return fmt.Errorf("instance is not JSON: %w", err)
	}
	doc, err := decodeSchema(schema)
	if err != nil {
		return err
	}
	return (&checker{doc: doc}).check(doc, inst, "$", 0)
}

// object is a JSON object with its members in order.
type object struct {
	keys []string
	vals map[string]any
}

// decodeSchema decodes a schema; objects keep their member order, which
// validation does not depend on.
func decodeSchema(b []byte) (any, error) {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	v, err := decodeOrdered(d)
	if err != nil {
		return nil, fmt.Errorf("schema is not JSON: %w", err)
	}
	return v, nil
}

func decodeOrdered(d *json.Decoder) (any, error) {
	tok, err := d.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			o := &object{vals: map[string]any{}}
			for d.More() {
				k, err := d.Token()
				if err != nil {
					return nil, err
				}
				key := k.(string)
				v, err := decodeOrdered(d)
				if err != nil {
					return nil, err
				}
				if _, dup := o.vals[key]; !dup {
					o.keys = append(o.keys, key)
				}
				o.vals[key] = v
			}
			_, err := d.Token()
			return o, err
		case '[':
			var a []any
			for d.More() {
				v, err := decodeOrdered(d)
				if err != nil {
					return nil, err
				}
				a = append(a, v)
			}
			_, err := d.Token()
			return a, err
		}
	}
	return tok, nil
}

type checker struct{ doc any }

var annotations = map[string]bool{"description": true, "title": true, "default": true, "examples": true, "$defs": true, "definitions": true, "$schema": true, "$id": true, "$comment": true}

func (c *checker) check(schema, inst any, path string, depth int) error {
	if depth > 200 {
		return fmt.Errorf("%s: schema recursion too deep", path)
	}
	switch s := schema.(type) {
	case bool:
		if !s {
			return fmt.Errorf("%s: schema false admits nothing", path)
		}
		return nil
	case *object:
		return c.checkObject(s, inst, path, depth)
	}
	return fmt.Errorf("%s: schema is not an object or boolean", path)
}

func (c *checker) checkObject(s *object, inst any, path string, depth int) error {
	for _, k := range s.keys {
		switch k {
		case "type", "nullable", "enum", "const", "properties", "required", "additionalProperties", "items",
			"prefixItems", "minItems", "maxItems", "minLength", "maxLength", "anyOf", "oneOf", "$ref":
		default:
			if !annotations[k] {
				return fmt.Errorf("%s: keyword %q is not supported by schemacheck", path, k)
			}
		}
	}
	if r, ok := s.vals["$ref"]; ok {
		target, err := c.resolve(r)
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		if err := c.check(target, inst, path, depth+1); err != nil {
			return err
		}
	}
	if t, ok := s.vals["type"]; ok {
		var types []string
		switch tv := t.(type) {
		case string:
			types = []string{tv}
		case []any:
			for _, x := range tv {
				types = append(types, x.(string))
			}
		}
		if s.vals["nullable"] == true {
			types = append(types, "null")
		}
		ok := false
		for _, ty := range types {
			ok = ok || hasType(inst, ty)
		}
		if !ok {
			return fmt.Errorf("%s: %s is not of type %v", path, kind(inst), types)
		}
	}
	if e, ok := s.vals["enum"]; ok {
		found := false
		for _, v := range e.([]any) {
			found = found || equal(v, inst)
		}
		if !found {
			return fmt.Errorf("%s: not one of the enum values", path)
		}
	}
	if cv, ok := s.vals["const"]; ok && !equal(cv, inst) {
		return fmt.Errorf("%s: not the const value", path)
	}
	for _, kw := range []string{"anyOf", "oneOf"} {
		alts, ok := s.vals[kw].([]any)
		if !ok {
			continue
		}
		n := 0
		for _, a := range alts {
			if c.check(a, inst, path, depth+1) == nil {
				n++
			}
		}
		if n == 0 || (kw == "oneOf" && n > 1) {
			return fmt.Errorf("%s: %d of the %s alternatives hold", path, n, kw)
		}
	}
	switch v := inst.(type) {
	case string:
		n := utf8.RuneCountInString(v)
		if m, ok := count(s.vals["minLength"]); ok && n < m {
			return fmt.Errorf("%s: %d characters, minLength %d", path, n, m)
		}
		if m, ok := count(s.vals["maxLength"]); ok && n > m {
			return fmt.Errorf("%s: %d characters, maxLength %d", path, n, m)
		}
	case []any:
		if m, ok := count(s.vals["minItems"]); ok && len(v) < m {
			return fmt.Errorf("%s: %d items, minItems %d", path, len(v), m)
		}
		if m, ok := count(s.vals["maxItems"]); ok && len(v) > m {
			return fmt.Errorf("%s: %d items, maxItems %d", path, len(v), m)
		}
		prefix, _ := s.vals["prefixItems"].([]any)
		for i, x := range v {
			p := path + "[" + strconv.Itoa(i) + "]"
			var sub any
			switch {
			case i < len(prefix):
				sub = prefix[i]
			default:
				it, ok := s.vals["items"]
				if !ok {
					continue
				}
				sub = it
			}
			if err := c.check(sub, x, p, depth+1); err != nil {
				return err
			}
		}
	case *object:
		props, hasProps := s.vals["properties"].(*object)
		if req, ok := s.vals["required"].([]any); ok {
			for _, r := range req {
				if _, ok := v.vals[r.(string)]; !ok {
					return fmt.Errorf("%s: required %q missing", path, r)
				}
			}
		}
		add, hasAdd := s.vals["additionalProperties"]
		if !hasAdd && hasProps {
			add = false // masking's reading: properties alone close the object
		}
		for _, k := range v.keys {
			p := path + "." + k
			if hasProps {
				if sub, ok := props.vals[k]; ok {
					if err := c.check(sub, v.vals[k], p, depth+1); err != nil {
						return err
					}
					continue
				}
			}
			if add == nil {
				continue
			}
			if err := c.check(add, v.vals[k], p, depth+1); err != nil {
				return fmt.Errorf("%s: key not allowed (%w)", p, err)
			}
		}
	}
	return nil
}

// resolve follows a same-document reference.
func (c *checker) resolve(r any) (any, error) {
	ref, ok := r.(string)
	if !ok || !strings.HasPrefix(ref, "#") {
		return nil, fmt.Errorf("unsupported $ref %v", r)
	}
	cur := c.doc
	if ref == "#" {
		return cur, nil
	}
	if !strings.HasPrefix(ref, "#/") {
		return nil, fmt.Errorf("unsupported $ref %q", ref)
	}
	for _, tok := range strings.Split(ref[2:], "/") {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		switch v := cur.(type) {
		case *object:
			next, ok := v.vals[tok]
			if !ok {
				return nil, fmt.Errorf("$ref %q: no %q", ref, tok)
			}
			cur = next
		case []any:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(v) {
				return nil, fmt.Errorf("$ref %q: bad index %q", ref, tok)
			}
			cur = v[i]
		default:
			return nil, fmt.Errorf("$ref %q: cannot descend into %s", ref, kind(cur))
		}
	}
	return cur, nil
}

func count(v any) (int, bool) {
	n, ok := v.(json.Number)
	if !ok {
		return 0, false
	}
	f, err := n.Float64()
	if err != nil {
		return 0, false
	}
	return int(f), true
}

func hasType(v any, t string) bool {
	switch t {
	case "null":
		return v == nil
	case "boolean":
		_, ok := v.(bool)
		return ok
	case "string":
		_, ok := v.(string)
		return ok
	case "number":
		_, ok := v.(json.Number)
		return ok
	case "integer":
		n, ok := v.(json.Number)
		if !ok {
			return false
		}
		r, ok := new(big.Rat).SetString(string(n))
		return ok && r.IsInt()
	case "array":
		_, ok := v.([]any)
		return ok
	case "object":
		_, ok := v.(*object)
		return ok
	}
	return false
}

func kind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case string:
		return "string"
	case json.Number:
		return "number"
	case []any:
		return "array"
	case *object:
		return "object"
	}
	return fmt.Sprintf("%T", v)
}

// equal is JSON value equality: numbers by value, objects regardless of
// member order.
func equal(a, b any) bool {
	switch x := a.(type) {
	case json.Number:
		y, ok := b.(json.Number)
		if !ok {
			return false
		}
		rx, ok1 := new(big.Rat).SetString(string(x))
		ry, ok2 := new(big.Rat).SetString(string(y))
		return ok1 && ok2 && rx.Cmp(ry) == 0
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !equal(x[i], y[i]) {
				return false
			}
		}
		return true
	case *object:
		y, ok := b.(*object)
		if !ok || len(x.vals) != len(y.vals) {
			return false
		}
		for k, v := range x.vals {
			w, ok := y.vals[k]
			if !ok || !equal(v, w) {
				return false
			}
		}
		return true
	}
	return a == b
}
