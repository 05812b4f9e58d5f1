package lark

import (
	"cmp"
	"slices"
	"unicode/utf8"
)

// expr is one node of a grammar, Lark or regular expression alike: the
// translation keeps the language and nothing else (no tree shaping, no
// lexer priorities), so a handful of node kinds is enough.
type expr interface{ isExpr() }

// seq matches its items one after another; an empty seq matches "".
type seq []expr

// alt matches any one of its items.
type alt []expr

// lit matches its bytes exactly.
type lit string

// ref matches the rule or terminal it names.
type ref string

// class matches one code point inside one of its ranges (sorted, disjoint,
// not adjacent).
type class []runeRange

// rep matches x at least min and at most max times (max < 0: no limit).
type rep struct {
	x        expr
	min, max int
}

func (seq) isExpr()   {}
func (alt) isExpr()   {}
func (lit) isExpr()   {}
func (ref) isExpr()   {}
func (class) isExpr() {}
func (rep) isExpr()   {}

type runeRange struct{ lo, hi rune }

// maxRepeat bounds {n,m} and ~ n..m counts: a count above it is refused
// rather than unrolled into a grammar the engines would take seconds to load.
const maxRepeat = 1000

// normalize sorts and merges ranges.
func normalize(rs []runeRange) class {
	slices.SortFunc(rs, func(a, b runeRange) int { return cmp.Compare(a.lo, b.lo) })
	out := class{}
	for _, r := range rs {
		if r.lo > r.hi {
			continue
		}
		if n := len(out); n > 0 && r.lo <= out[n-1].hi+1 {
			if r.hi > out[n-1].hi {
				out[n-1].hi = r.hi
			}
			continue
		}
		out = append(out, r)
	}
	return out
}

// complement is every code point the class does not match.
func (c class) complement() class {
	out := class{}
	next := rune(0)
	for _, r := range c {
		if r.lo > next {
			out = append(out, runeRange{next, r.lo - 1})
		}
		next = r.hi + 1
	}
	if next <= utf8.MaxRune {
		out = append(out, runeRange{next, utf8.MaxRune})
	}
	return out
}

// Named sets of the regular expressions' shorthands. \s is Python's ASCII
// whitespace (Unicode's other spaces are rare in what these tools take);
// \w and \d are ASCII, as the Rust regex crate's are not: a model writing
// identifiers in other scripts is held to ASCII here.
var (
	spaceClass = normalize([]runeRange{{'\t', '\r'}, {' ', ' '}})
	digitClass = class{{'0', '9'}}
	wordClass  = normalize([]runeRange{{'0', '9'}, {'A', 'Z'}, {'_', '_'}, {'a', 'z'}})
	// dotClass is "." without the s flag: anything but a newline.
	dotClass = class{{'\n', '\n'}}.complement()
	anyClass = class{{0, utf8.MaxRune}}
)
