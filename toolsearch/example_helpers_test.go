package toolsearch_test

import "strings"

func containsWord(text, w string) bool {
	for _, f := range strings.FieldsFunc(strings.ToLower(text), func(r rune) bool { return r < 'a' || r > 'z' }) {
		if f == w {
			return true
		}
	}
	return false
}
