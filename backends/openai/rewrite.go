package openai

import (
	"bytes"
	"encoding/json"
	"errors"

	"github.com/maskgate/maskgate/backends/oai"
)

// each is the path step that walks every element of an array.
const each = "[]"

// op is what a leaf callback asks rewrite to do with a string.
type op int

const (
	keep    op = iota // leave the bytes as they are
	replace           // write the returned string
	drop              // delete the member that holds it
)

// leafFunc decides about one string found at a path. pos holds the positions of the
// array elements walked to reach it, outermost first.
type leafFunc func(pos []int, s string) (string, op)

// rewrite returns raw with each string at path (object keys, and each for every
// element of an array) edited as f says. Only the edited values change; every other byte
// stays where it was, since each edit is oai's member Set or Delete. A value of the wrong
// type on the way (a string where an object was expected, say) is left alone: it holds
// no name this package knows how to map. changed is false when nothing was edited, and
// out is then raw itself.
func rewrite(raw []byte, path []string, f leafFunc) (out []byte, changed bool, err error) {
	return rewriteAt(raw, path, nil, f)
}

func rewriteAt(raw []byte, path []string, pos []int, f leafFunc) ([]byte, bool, error) {
	if len(path) == 0 {
		return raw, false, nil // leaves are handled by their parent object
	}
	if path[0] == each {
		return rewriteArray(raw, path[1:], pos, f)
	}
	obj, err := oai.ParseObject(raw)
	if err != nil {
		return raw, false, nil
	}
	val, ok := obj.Get(path[0])
	if !ok {
		return raw, false, nil
	}
	if len(path) == 1 {
		var s string
		if json.Unmarshal(val, &s) != nil {
			return raw, false, nil
		}
		ns, what := f(pos, s)
		switch what {
		case replace:
			if ns == s {
				return raw, false, nil
			}
			return obj.Set(path[0], quote(ns)), true, nil
		case drop:
			out, err := oai.Delete(raw, path[0])
			return out, err == nil, err
		}
		return raw, false, nil
	}
	nv, changed, err := rewriteAt(val, path[1:], pos, f)
	if err != nil || !changed {
		return raw, false, err
	}
	return obj.Set(path[0], nv), true, nil
}

func rewriteArray(raw []byte, rest []string, pos []int, f leafFunc) ([]byte, bool, error) {
	spans, err := elements(raw)
	if err != nil {
		return raw, false, nil
	}
	var out []byte
	last := 0
	for i, sp := range spans {
		nv, changed, err := rewriteAt(raw[sp[0]:sp[1]], rest, append(pos[:len(pos):len(pos)], i), f)
		if err != nil {
			return nil, false, err
		}
		if !changed {
			continue
		}
		if out == nil {
			out = make([]byte, 0, len(raw)+64)
		}
		out = append(out, raw[last:sp[0]]...)
		out = append(out, nv...)
		last = sp[1]
	}
	if out == nil {
		return raw, false, nil
	}
	return append(out, raw[last:]...), true, nil
}

var errNotArray = errors.New("not a JSON array")

// elements returns the byte span of each element of the JSON array raw.
func elements(raw []byte) ([][2]int, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	if d, ok := tok.(json.Delim); !ok || d != '[' {
		return nil, errNotArray
	}
	var spans [][2]int
	for dec.More() {
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		// The decoder stops right after the value and RawMessage holds its exact
		// bytes, so the value starts len(v) before the offset.
		end := int(dec.InputOffset())
		spans = append(spans, [2]int{end - len(v), end})
	}
	return spans, nil
}

// quote renders s as a JSON string without HTML escaping: the names go to an API that
// reads JSON, and the bytes should match what a client would have written.
func quote(s string) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // a string always encodes
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}
