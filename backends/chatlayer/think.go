package chatlayer

import "strings"

// The tags of a reasoning block, as Qwen3, QwQ and DeepSeek-R1 write them.
const (
	OpenTag  = "<think>"
	CloseTag = "</think>"
)

// space is the whitespace trimmed around the reasoning and before the answer.
const space = " \t\r\n"

// Delta is one step of a split text. Exactly one field is set.
type Delta struct {
	Reasoning string
	Content   string
}

// Think splits one completion into reasoning and content as it streams. It is not safe
// for concurrent use. The zero value reads a text that may begin with a block.
type Think struct {
	state   int
	buf     string // what is held: see the states
	said    bool   // some reasoning went out (in tReason), some content (in tAfter)
	pending []Delta
}

const (
	tStart  = iota // buf: whitespace, then maybe the beginning of OpenTag
	tReason        // inside the block; buf: trailing whitespace and maybe the beginning of CloseTag
	tAfter         // after the block: leading whitespace is dropped
	tPlain         // no block: everything is content
)

// NewThink returns a reader for a completion; inside says the prompt opened the block
// (StartsInside), so the text starts in it.
func NewThink(inside bool) *Think {
	if inside {
		return &Think{state: tReason}
	}
	return &Think{}
}

// StartsInside reports whether prompt ends inside an open reasoning block: its last
// non-whitespace text is OpenTag, as the generation prompt of templates that make the
// model think ("<|im_start|>assistant\n<think>\n") ends. A prompt that closes the block
// again (Qwen3 with enable_thinking false: "<think>\n\n</think>\n\n") does not.
func StartsInside(prompt string) bool {
	return strings.HasSuffix(strings.TrimRight(prompt, space), OpenTag)
}

// Feed takes the next piece of text and returns what it resolves.
func (t *Think) Feed(text string) []Delta {
	t.buf += text
	t.step(false)
	return t.take()
}

// Finish resolves what is held at the end of the text: a block still open is reasoning
// to its end.
func (t *Think) Finish() []Delta {
	t.step(true)
	return t.take()
}

// Split reads a whole text: its reasoning and its content.
func Split(text string, inside bool) (reasoning, content string) {
	t := NewThink(inside)
	var r, c strings.Builder
	for _, d := range append(t.Feed(text), t.Finish()...) {
		r.WriteString(d.Reasoning)
		c.WriteString(d.Content)
	}
	return r.String(), c.String()
}

func (t *Think) step(final bool) {
	for {
		switch t.state {
		case tStart:
			rest := strings.TrimLeft(t.buf, space)
			if strings.HasPrefix(rest, OpenTag) {
				t.buf, t.state = rest[len(OpenTag):], tReason
				continue
			}
			if !final && strings.HasPrefix(OpenTag, rest) { // nothing yet, or the tag's beginning
				return
			}
			t.state = tPlain
		case tPlain:
			t.content(t.buf)
			t.buf = ""
			return
		case tReason:
			if i := strings.Index(t.buf, CloseTag); i >= 0 {
				t.reasoning(strings.TrimRight(t.buf[:i], space))
				t.buf, t.state, t.said = t.buf[i+len(CloseTag):], tAfter, false
				continue
			}
			if final {
				t.reasoning(strings.TrimRight(t.buf, space))
				t.buf = ""
				return
			}
			body := t.buf[:len(t.buf)-tagStart(t.buf, CloseTag)]
			out := strings.TrimRight(body, space)
			t.reasoning(out)
			t.buf = t.buf[len(out):]
			return
		case tAfter:
			if !t.said {
				t.buf = strings.TrimLeft(t.buf, space)
			}
			t.content(t.buf)
			t.buf = ""
			return
		}
	}
}

// reasoning sends s as reasoning, less its leading whitespace while none went out yet.
func (t *Think) reasoning(s string) {
	if !t.said {
		s = strings.TrimLeft(s, space)
	}
	if s == "" {
		return
	}
	t.said = true
	if n := len(t.pending); n > 0 && t.pending[n-1].Reasoning != "" {
		t.pending[n-1].Reasoning += s
		return
	}
	t.pending = append(t.pending, Delta{Reasoning: s})
}

func (t *Think) content(s string) {
	if s == "" {
		return
	}
	t.said = true
	if n := len(t.pending); n > 0 && t.pending[n-1].Content != "" {
		t.pending[n-1].Content += s
		return
	}
	t.pending = append(t.pending, Delta{Content: s})
}

func (t *Think) take() []Delta {
	out := t.pending
	t.pending = nil
	return out
}

// tagStart is the length of the longest suffix of s that is a proper prefix of tag: the
// bytes that may still become it.
func tagStart(s, tag string) int {
	for k := min(len(tag)-1, len(s)); k > 0; k-- {
		if strings.HasSuffix(s, tag[:k]) {
			return k
		}
	}
	return 0
}
