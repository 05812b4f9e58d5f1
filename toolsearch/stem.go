package toolsearch

import "bytes"

// stem returns the Porter stem of a lowercase word (M. F. Porter, "An algorithm for suffix
// stripping", 1980), so that "issues", "issue" and "issued" index as one term. Words of
// fewer than three letters and words with anything but a–z are returned unchanged: digits,
// product names in other scripts and the like are matched exactly.
//
// This is the algorithm as published, steps 1a to 5b; stems are index keys, not words
// ("creat", "messag"), and both the catalog and the query go through the same function.
func stem(w string) string {
	if len(w) < 3 {
		return w
	}
	for i := 0; i < len(w); i++ {
		if w[i] < 'a' || w[i] > 'z' {
			return w
		}
	}
	if keep(w) {
		return w
	}
	p := porter{b: []byte(w)}
	p.step1ab()
	p.step1c()
	p.rule(step2, 0)
	p.rule(step3, 0)
	p.step4()
	p.step5()
	if string(p.b) == w {
		return w
	}
	return string(p.b)
}

type porter struct{ b []byte }

// cons reports whether b[i] is a consonant: not a vowel, and 'y' only after a vowel or
// at the start.
func (p *porter) cons(i int) bool {
	switch p.b[i] {
	case 'a', 'e', 'i', 'o', 'u':
		return false
	case 'y':
		return i == 0 || !p.cons(i-1)
	}
	return true
}

// m is the measure of b[:n]: the number of vowel-consonant sequences in [C](VC){m}[V].
func (p *porter) m(n int) int {
	i := 0
	for i < n && p.cons(i) {
		i++
	}
	m := 0
	for {
		for i < n && !p.cons(i) {
			i++
		}
		if i >= n {
			return m
		}
		for i < n && p.cons(i) {
			i++
		}
		m++
	}
}

func (p *porter) hasVowel(n int) bool {
	for i := 0; i < n; i++ {
		if !p.cons(i) {
			return true
		}
	}
	return false
}

// doubleCons reports whether b[:n] ends in a double consonant.
func (p *porter) doubleCons(n int) bool {
	return n >= 2 && p.b[n-1] == p.b[n-2] && p.cons(n-1)
}

// cvc reports whether b[:n] ends consonant-vowel-consonant with the last not w, x or y
// ("hop" but not "snow"): such short stems get their final 'e' back.
func (p *porter) cvc(n int) bool {
	if n < 3 || !p.cons(n-1) || p.cons(n-2) || !p.cons(n-3) {
		return false
	}
	c := p.b[n-1]
	return c != 'w' && c != 'x' && c != 'y'
}

func (p *porter) ends(s string) bool { return bytes.HasSuffix(p.b, []byte(s)) }

func (p *porter) replace(suffixLen int, s string) {
	p.b = append(p.b[:len(p.b)-suffixLen], s...)
}

func (p *porter) step1ab() {
	switch {
	case p.ends("sses"), p.ends("ies"):
		p.replace(2, "")
	case p.ends("ss"):
	case p.ends("s"):
		p.replace(1, "")
	}
	n := len(p.b)
	switch {
	case p.ends("eed"):
		if p.m(n-3) > 0 {
			p.replace(1, "")
		}
		return
	case p.ends("ed") && p.hasVowel(n-2):
		p.replace(2, "")
	case p.ends("ing") && p.hasVowel(n-3):
		p.replace(3, "")
	default:
		return
	}
	n = len(p.b)
	switch {
	case p.ends("at"), p.ends("bl"), p.ends("iz"):
		p.replace(0, "e")
	case p.doubleCons(n):
		if c := p.b[n-1]; c != 'l' && c != 's' && c != 'z' {
			p.replace(1, "")
		}
	case p.m(n) == 1 && p.cvc(n):
		p.replace(0, "e")
	}
}

func (p *porter) step1c() {
	if n := len(p.b); p.ends("y") && p.hasVowel(n-1) {
		p.b[n-1] = 'i'
	}
}

// Suffix rules of steps 2 and 3. Where one suffix ends another, the longer comes first:
// only the first match is considered, as in the published algorithm.
var step2 = [][2]string{
	{"ational", "ate"}, {"tional", "tion"}, {"enci", "ence"}, {"anci", "ance"},
	{"izer", "ize"}, {"abli", "able"}, {"alli", "al"}, {"entli", "ent"}, {"eli", "e"},
	{"ousli", "ous"}, {"ization", "ize"}, {"ation", "ate"}, {"ator", "ate"},
	{"alism", "al"}, {"iveness", "ive"}, {"fulness", "ful"}, {"ousness", "ous"},
	{"aliti", "al"}, {"iviti", "ive"}, {"biliti", "ble"},
}

var step3 = [][2]string{
	{"icate", "ic"}, {"ative", ""}, {"alize", "al"}, {"iciti", "ic"}, {"ical", "ic"},
	{"ful", ""}, {"ness", ""},
}

// rule applies the first rule whose suffix matches, if the stem before it has a measure
// above minM.
func (p *porter) rule(rules [][2]string, minM int) {
	for _, r := range rules {
		if p.ends(r[0]) {
			if p.m(len(p.b)-len(r[0])) > minM {
				p.replace(len(r[0]), r[1])
			}
			return
		}
	}
}

var step4 = []string{
	"al", "ance", "ence", "er", "ic", "able", "ible", "ant", "ement", "ment", "ent",
	"ion", "ou", "ism", "ate", "iti", "ous", "ive", "ize",
}

func (p *porter) step4() {
	for _, s := range step4 {
		if !p.ends(s) {
			continue
		}
		n := len(p.b) - len(s)
		if s == "ion" && (n == 0 || (p.b[n-1] != 's' && p.b[n-1] != 't')) {
			return
		}
		if p.m(n) > 1 {
			p.replace(len(s), "")
		}
		return
	}
}

func (p *porter) step5() {
	if n := len(p.b); p.ends("e") {
		if m := p.m(n - 1); m > 1 || (m == 1 && !p.cvc(n-1)) {
			p.replace(1, "")
		}
	}
	if n := len(p.b); n > 0 && p.b[n-1] == 'l' && p.doubleCons(n) && p.m(n) > 1 {
		p.replace(1, "")
	}
}

// keep reports whether w is one of the few words whose Porter stem collides with an
// unrelated word of tool APIs: "news" is not "new", "production" not "product".
func keep(w string) bool {
	switch w {
	case "news", "production", "productions":
		return true
	}
	return false
}
