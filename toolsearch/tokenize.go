package toolsearch

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// tokenize appends the lowercase words of an identifier (a tool or parameter name) to dst.
// Words break at anything that is not a letter or a digit (spaces, punctuation, '_', '.',
// '-', invalid UTF-8), at camelCase boundaries ("createIssue" → "create", "issue";
// "HTTPServer" → "http", "server"), and between digits and a run of three or more letters
// ("oauth2" → "oauth", "2"; "getS3Object" → "get", "s3", "object"), so that short product
// codes stay whole: "s3", "ec2", "k8s", "v2".
func tokenize(dst []string, s string) []string { return split(dst, s, true, true) }

// tokenizeText is tokenize for prose (descriptions, queries), where a capital inside a
// word marks a product name rather than a word boundary: "GitHub" is "github", as in
// "github_create_issue", not "git" and "hub".
func tokenizeText(dst []string, s string) []string { return split(dst, s, false, true) }

// split appends the words of s, lowercased if lower; the tool indexer lowercases through
// its cache instead, so that a word seen before costs no allocation.
//
// Text other than ASCII is NFKC-normalised first (Unicode Standard Annex #15), so that
// full-width "ＧｉｔＨｕｂ" is "github" and half-width "ｳｪﾌﾞ" is "ウェブ". A run of Han,
// Hiragana, Katakana or Hangul, which are written without spaces between words, becomes
// its overlapping bigrams ("必应搜索" → 必应, 应搜, 搜索), or the one character of a
// run of one, as Lucene's CJKBigramFilter does; a Hangul run, being a space-separated
// Korean word, is also kept whole ("검색합니다" → its bigrams and 검색합니다).
func split(dst []string, s string, camel, lower bool) []string {
	s = nfkc(s)
	start := -1 // byte offset of the current word, -1 between words
	var prev rune
	for i := 0; i < len(s); {
		r, size := rune(s[i]), 1
		if r >= utf8.RuneSelf {
			r, size = utf8.DecodeRuneInString(s[i:])
		}
		k := class(r)
		if r == utf8.RuneError && size == 1 {
			k = other
		}
		if k == cjk {
			if start >= 0 {
				dst = appendWord(dst, s[start:i], lower)
				start = -1
			}
			prev = 0
			var n int
			dst, n = bigrams(dst, s[i:])
			i += n
			continue
		}
		if k == other {
			if start >= 0 {
				dst = appendWord(dst, s[start:i], lower)
				start = -1
			}
			prev = 0
			i += size
			continue
		}
		if start >= 0 && boundary(prev, r, s[start:i], s[i+size:], camel) {
			dst = appendWord(dst, s[start:i], lower)
			start = i
		}
		if start < 0 {
			start = i
		}
		prev = r
		i += size
	}
	if start >= 0 {
		dst = appendWord(dst, s[start:], lower)
	}
	return dst
}

type charClass uint8

const (
	other charClass = iota
	lower
	upper
	digit
	cjk // Han, Hiragana, Katakana, Hangul
)

func class(r rune) charClass {
	switch {
	case 'a' <= r && r <= 'z':
		return lower
	case 'A' <= r && r <= 'Z':
		return upper
	case '0' <= r && r <= '9':
		return digit
	case r < utf8.RuneSelf:
		return other
	case isCJK(r):
		return cjk
	case unicode.IsUpper(r):
		return upper
	case unicode.IsLetter(r):
		return lower
	case unicode.IsDigit(r):
		return digit
	}
	return other
}

// boundary reports whether a word breaks before r, given the rune before it, the word so
// far and the text after r.
func boundary(p, r rune, word, rest string, camel bool) bool {
	cp, cr := class(p), class(r)
	switch {
	case cp == digit && cr != digit:
		return letterRun(rest, r) >= 3
	case cp != digit && cr == digit:
		return trailingLetters(word) >= 3
	case !camel:
		return false
	case cp == lower && cr == upper:
		return true
	case cp == upper && cr == upper:
		// The last capital of a run starts the next word when a lowercase letter follows:
		// "HTTPServer" breaks before 'S'.
		next, _ := utf8.DecodeRuneInString(rest)
		return class(next) == lower
	}
	return false
}

// appendWord appends w, lowercased if lower, reusing its bytes when it is already
// lowercase ASCII.
func appendWord(dst []string, w string, lower bool) []string {
	if !lower {
		return append(dst, w)
	}
	return append(dst, lowercase(w))
}

func lowercase(w string) string {
	for i := 0; i < len(w); i++ {
		if c := w[i]; c >= utf8.RuneSelf || ('A' <= c && c <= 'Z') {
			return strings.ToLower(w)
		}
	}
	return w
}

// letterRun counts the letters from r on, r included.
func letterRun(rest string, _ rune) int {
	n := 1
	for _, c := range rest {
		if k := class(c); k != lower && k != upper {
			break
		}
		n++
	}
	return n
}

// trailingLetters counts the letters at the end of word.
func trailingLetters(word string) int {
	n := 0
	for i := len(word); i > 0; {
		c, size := utf8.DecodeLastRuneInString(word[:i])
		if k := class(c); k != lower && k != upper {
			break
		}
		n++
		i -= size
	}
	return n
}

// isCJK reports whether r is written in a script without spaces between words: Han (and
// its iteration mark 々), Hiragana, Katakana (and the prolonged sound mark ー), Hangul.
func isCJK(r rune) bool {
	switch {
	case r < 0x1100:
		return false
	case r == 'ー' || r == '々':
		return true
	}
	return unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Hangul)
}

// bigrams appends the words of the CJK run s starts with and returns the run's length in
// bytes: each pair of adjacent characters, or the character of a run of one; and the
// whole run too when it is all Hangul and longer than two characters.
func bigrams(dst []string, s string) ([]string, int) {
	end, runes, hangul := 0, 0, true
	prev := -1 // byte offset of the previous character of the run
	for end < len(s) {
		r, size := utf8.DecodeRuneInString(s[end:])
		if r == utf8.RuneError && size == 1 || !isCJK(r) {
			break
		}
		if prev >= 0 {
			dst = append(dst, s[prev:end+size])
		}
		hangul = hangul && unicode.Is(unicode.Hangul, r)
		prev = end
		end += size
		runes++
	}
	switch {
	case runes == 1:
		dst = append(dst, s[:end])
	case runes > 2 && hangul:
		dst = append(dst, s[:end])
	}
	return dst, end
}

// nfkc is s in Unicode normalisation form NFKC; ASCII, which it leaves as is, costs one
// pass and no allocation.
func nfkc(s string) string {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return norm.NFKC.String(s)
		}
	}
	return s
}
