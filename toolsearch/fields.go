package toolsearch

import (
	"encoding/json"
	"sort"
	"strings"
)

// The fields of a tool that search reads.
const (
	fieldName = iota
	fieldDescription
	fieldKeywords // keywords and category
	fieldParamNames
	fieldParamDescriptions // descriptions, titles and string enum values of parameters
	numFields
)

// Bounds on what is read from one tool's parameters; a client's schema is untrusted.
const (
	maxSchemaDepth = 8
	maxSchemaProps = 256
)

// toolWords returns the words of each of t's fields as they are written: stemCache.term
// lowercases them and drops stop words and numbers.
func toolWords(t *Tool) [numFields][]string {
	var f [numFields][]string
	f[fieldName] = split(nil, t.Name, true, false)
	f[fieldDescription] = split(nil, t.Description, false, false)
	for _, k := range t.Keywords {
		f[fieldKeywords] = split(f[fieldKeywords], k, false, false)
	}
	f[fieldKeywords] = split(f[fieldKeywords], t.Category, false, false)
	if len(t.Parameters) > 0 {
		var s schemaNode
		// A schema that does not fit schemaNode everywhere still yields what did fit.
		_ = json.Unmarshal(t.Parameters, &s)
		w := schemaWalker{names: &f[fieldParamNames], descs: &f[fieldParamDescriptions]}
		w.walk(&s, 0)
	}
	return f
}

// words appends the words of s that are not stop words or numbers.
func words(dst []string, s string, split func([]string, string) []string) []string {
	n := len(dst)
	dst = split(dst, s)
	out := dst[:n]
	for _, w := range dst[n:] {
		if !isStopWord(w) && !number(w) {
			out = append(out, w)
		}
	}
	return out
}

// number reports whether w is all digits: a value (an issue number, a count, a port), not a
// word that says what a tool does.
func number(w string) bool {
	for i := 0; i < len(w); i++ {
		if w[i] < '0' || w[i] > '9' {
			return false
		}
	}
	return w != ""
}

// schemaNode is the part of a JSON schema that describes arguments in words.
type schemaNode struct {
	Title       string                 `json:"title"`
	Description string                 `json:"description"`
	Properties  map[string]*schemaNode `json:"properties"`
	Items       json.RawMessage        `json:"items"`
	Enum        []json.RawMessage      `json:"enum"`
	AnyOf       []*schemaNode          `json:"anyOf"`
	OneOf       []*schemaNode          `json:"oneOf"`
	AllOf       []*schemaNode          `json:"allOf"`
}

type schemaWalker struct {
	names, descs *[]string
	props        int
}

func (w *schemaWalker) walk(s *schemaNode, depth int) {
	if s == nil || depth > maxSchemaDepth {
		return
	}
	if depth > 0 {
		*w.descs = split(*w.descs, s.Title, false, false)
		*w.descs = split(*w.descs, s.Description, false, false)
		for _, e := range s.Enum {
			var v string
			if json.Unmarshal(e, &v) == nil {
				*w.descs = split(*w.descs, v, true, false)
			}
		}
	}
	// Sorted, so that the cap on properties keeps the same ones every time.
	keys := make([]string, 0, len(s.Properties))
	for k := range s.Properties {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if w.props >= maxSchemaProps {
			return
		}
		w.props++
		*w.names = split(*w.names, k, true, false)
		w.walk(s.Properties[k], depth+1)
	}
	if len(s.Items) > 0 && strings.HasPrefix(strings.TrimSpace(string(s.Items)), "{") {
		var it schemaNode
		_ = json.Unmarshal(s.Items, &it)
		w.walk(&it, depth+1)
	}
	for _, group := range [][]*schemaNode{s.AnyOf, s.OneOf, s.AllOf} {
		for _, sub := range group {
			w.walk(sub, depth+1)
		}
	}
}
