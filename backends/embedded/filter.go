//go:build llamacpp

package embedded

import (
	"strings"
	"unicode/utf8"
)

// textFilter turns the model's token pieces into content that is safe to send: it holds
// back text that may still become a stop string or the tool-call trigger, and the bytes of
// a UTF-8 sequence split across tokens. From the trigger on, text goes to tail (the
// tool calls) instead of content.
type textFilter struct {
	stops   []string
	trigger string // "" when the request has no tools

	pending string
	content strings.Builder // everything sent as content
	tail    strings.Builder // from the trigger on
	inCall  bool
}

// push adds a piece and returns the content that may be sent now, and whether a stop
// string ended the answer (the stop string itself is dropped).
func (f *textFilter) push(piece string) (out string, stop bool) {
	if f.inCall {
		f.tail.WriteString(piece)
		s := f.tail.String()
		if i, _ := firstStop(s, f.stops); i >= 0 {
			f.tail.Reset()
			f.tail.WriteString(s[:i])
			return "", true
		}
		return "", false
	}
	f.pending += piece
	p := f.pending
	end := len(p)
	if i, _ := firstStop(p, f.stops); i >= 0 {
		end, stop = i, true
	}
	if f.trigger != "" {
		if j := strings.Index(p[:end], f.trigger); j >= 0 {
			f.inCall = true
			f.tail.WriteString(p[j:end])
			f.pending = ""
			return f.send(p[:j]), stop
		}
	}
	if stop {
		f.pending = ""
		return f.send(p[:end]), true
	}
	keep := max(holdBack(p, f.stops), holdBack(p, []string{f.trigger}), partialRune(p))
	f.pending = p[len(p)-keep:]
	return f.send(p[:len(p)-keep]), false
}

// flush returns what was held back, at the end of the answer.
func (f *textFilter) flush() string {
	p := f.pending
	f.pending = ""
	if f.inCall {
		return ""
	}
	return f.send(p)
}

func (f *textFilter) send(s string) string {
	f.content.WriteString(s)
	return s
}

// firstStop returns the index of the earliest stop string in s, or -1.
func firstStop(s string, stops []string) (int, string) {
	best, which := -1, ""
	for _, st := range stops {
		if st == "" {
			continue
		}
		if i := strings.Index(s, st); i >= 0 && (best < 0 || i < best) {
			best, which = i, st
		}
	}
	return best, which
}

// holdBack returns the length of the longest suffix of s that is a proper prefix of one
// of the markers.
func holdBack(s string, markers []string) int {
	n := 0
	for _, m := range markers {
		for k := min(len(m)-1, len(s)); k > n; k-- {
			if strings.HasSuffix(s, m[:k]) {
				n = k
				break
			}
		}
	}
	return n
}

// partialRune returns how many bytes at the end of s start a UTF-8 sequence that is not
// complete yet.
func partialRune(s string) int {
	for k := 1; k <= min(utf8.UTFMax-1, len(s)); k++ {
		c := s[len(s)-k]
		if utf8.RuneStart(c) {
			if !utf8.FullRuneInString(s[len(s)-k:]) {
				return k
			}
			return 0
		}
	}
	return 0
}
