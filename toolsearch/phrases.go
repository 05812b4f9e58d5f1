package toolsearch

import "strings"

// A phrase is a run of query words that stands for one word. An idiom, a verb and a
// particle ("turn off", "set up"), means only that word: its own words are dropped, since
// "turn" and "set" would match the wrong tools. A compound ("merge request", "pull
// request") keeps its words, which tools use literally, and adds the word.
type phrase struct {
	rest  []string // the words after the first
	to    string   // the word it stands for
	idiom bool
}

func particle(w string) bool {
	switch w {
	case "up", "off", "on", "out", "back", "over", "down", "for", "of", "in", "away":
		return true
	}
	return false
}

// synonymMap maps each word's term to the terms of every other word in its groups, and
// collects the phrases.
func synonymMap(groups [][]string, term func(string) string) (map[string][]string, map[string][]phrase) {
	m := map[string][]string{}
	phrases := map[string][]phrase{}
	for _, g := range groups {
		terms := make([]string, 0, len(g))
		for _, w := range g {
			ws := tokenizeText(nil, w)
			switch {
			case len(ws) == 1:
				terms = append(terms, term(ws[0]))
			case len(ws) > 1 && len(g) > 0 && !strings.Contains(g[0], " "):
				phrases[ws[0]] = append(phrases[ws[0]], phrase{rest: ws[1:], to: g[0], idiom: particle(ws[len(ws)-1])})
			}
		}
		for _, t := range terms {
			for _, u := range terms {
				if u != t && !contains(m[t], u) {
					m[t] = append(m[t], u)
				}
			}
		}
	}
	return m, phrases
}

// rewrite replaces the phrases in ws with the words they stand for; the longest phrase
// starting at a word wins, the earlier group among equals.
func (c *config) rewrite(ws []string) []string {
	if len(c.phrases) == 0 {
		return ws
	}
	out := ws[:0:0]
	for i := 0; i < len(ws); i++ {
		best := -1
		var hit phrase
		for _, p := range c.phrases[ws[i]] {
			n := len(p.rest)
			if n > best && i+n < len(ws) && equal(ws[i+1:i+1+n], p.rest) {
				best, hit = n, p
			}
		}
		if best < 0 {
			out = append(out, ws[i])
			continue
		}
		if !hit.idiom {
			out = append(out, ws[i:i+1+best]...)
		}
		out = append(out, hit.to)
		i += best
	}
	return out
}

func equal(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
