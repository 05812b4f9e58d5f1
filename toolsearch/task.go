package toolsearch

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// A task-shaped query names several steps ("search the web for AI news, save a summary
// to notes.md and post it to Slack"): ranked as one, the step with the rarest words wins
// the first places and the others' tools fall out of the first five. So Search splits a
// query into clauses, ranks each as a query of its own, and interleaves the rankings
// with the whole query's: the whole query's first, then each clause's first in order,
// then every ranking's second, and so on, each tool once. A query of one clause, most
// queries, is ranked as before.

// Clause breaks: sentence and clause punctuation of English, Chinese and Japanese, and
// the words that join steps.
const clausePunct = ",;.!?\n，；。！？、；"

// clauseWords are words that start a new step, matched whole (Latin, Hangul, separated by
// spaces) in a lowercase query.
var clauseWords = map[string]bool{
	"and": true, "then": true, "afterwards": true, "finally": true, "also": true, "next": true,
	"그리고": true, "그다음": true, "다음에": true, "뒤": true, "뒤에": true, "후": true, "후에": true,
}

// clauseMarks are Chinese and Japanese words that start a new step, matched anywhere: these
// languages write no spaces. Each is two characters or more, so that it is not a part
// of an unrelated word (合并, "merge", holds 并).
var clauseMarks = []string{"然后", "并且", "接着", "之后", "最后", "同时", "以及", "然後",
	"そして", "それから", "その後", "次に", "最後に"}

// minClauseWords is the fewest content words a clause must have to be ranked apart; a
// shorter one stays with the clause before it. Two would split the lists that "and"
// makes in a one-step query: "latitude and longitude of the Eiffel Tower", "add Jamal and
// Kim to the design channel", "ship pull request 17 and squash the commits".
const minClauseWords = 3

// minTaskWords is the fewest distinct words of the catalog (for CJK text, bigrams) a
// query must have to be split: a one-step request says what it wants in fewer ("why did
// the CI build fail on GitHub, show me the job output" has seven words), and splitting it
// only moves its second-best tools down.
const minTaskWords = 8

// clauses splits text into its steps, or returns nil if it has fewer than two.
func clauses(text string) []string {
	text = nfkc(text)
	var parts []string
	cur := 0
	flush := func(end, next int) {
		if s := strings.TrimSpace(text[cur:end]); s != "" {
			parts = append(parts, s)
		}
		cur = next
	}
	for i := 0; i < len(text); {
		r, size := utf8.DecodeRuneInString(text[i:])
		switch {
		case strings.ContainsRune(clausePunct, r):
			// A dot between letters or digits is part of a word: notes.md, v1.2, 8.8.8.8.
			if r == '.' && i > 0 && i+1 < len(text) && wordByte(text[i-1]) && wordByte(text[i+1]) {
				break
			}
			flush(i, i+size)
		case unicode.IsSpace(r):
			j := i + size
			for j < len(text) && !unicode.IsSpace(rune(text[j])) && !strings.ContainsRune(clausePunct, rune(text[j])) {
				_, n := utf8.DecodeRuneInString(text[j:])
				j += n
			}
			w := strings.ToLower(text[i+size : j])
			if clauseWords[w] {
				flush(i, j)
				i = j
				continue
			}
			// A Korean verb joined to the next step: 확인하고, 저장한 뒤 (뒤 is a word above).
			if strings.HasSuffix(w, "하고") && j < len(text) {
				flush(j, j)
				i = j
				continue
			}
		default:
			if m := markAt(text[i:]); m > 0 {
				flush(i, i+m)
				i += m
				continue
			}
		}
		i += size
	}
	flush(len(text), len(text))
	// Short clauses join the one before them (the first, the one after it).
	var out []string
	for _, p := range parts {
		if n := len(words(nil, p, tokenizeText)); n < minClauseWords && len(out) > 0 {
			out[len(out)-1] += " " + p
			continue
		}
		if len(out) == 1 && len(words(nil, out[0], tokenizeText)) < minClauseWords {
			out[0] += " " + p
			continue
		}
		out = append(out, p)
	}
	if len(out) < 2 {
		return nil
	}
	return out
}

func wordByte(c byte) bool {
	return c >= utf8.RuneSelf || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// markAt is the length of the clause mark s starts with, or 0.
func markAt(s string) int {
	for _, m := range clauseMarks {
		if strings.HasPrefix(s, m) {
			return len(m)
		}
	}
	return 0
}

// interleave merges rankings: every ranking's first, in order, then every ranking's
// second, and so on, each doc once.
func interleave(lists [][]hit) []hit {
	var out []hit
	seen := map[int32]bool{}
	for i := 0; ; i++ {
		more := false
		for _, l := range lists {
			if i >= len(l) {
				continue
			}
			more = true
			if h := l[i]; !seen[h.doc] {
				seen[h.doc] = true
				out = append(out, h)
			}
		}
		if !more {
			return out
		}
	}
}
