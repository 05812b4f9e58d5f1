package toolcall

import (
	"bytes"
	"strings"
)

// harmony reads gpt-oss's harmony messages. Each is a header, <|message|>, a body and an
// end token:
//
//	<|start|>assistant<|channel|>analysis<|message|>…<|end|>
//	<|start|>assistant<|channel|>commentary to=functions.A <|constrain|>json<|message|>{…}<|call|>
//	<|start|>assistant<|channel|>final<|message|>…<|return|>
//
// The prompt ends with <|start|>assistant, so the first header starts the text, without
// <|start|>. The recipient (to=functions.A) may stand in the channel part of the header
// or before it. A message to a function is a call; the analysis channel is reasoning;
// any other message (final, a commentary preamble) is content. Text outside messages is
// content; the structure tokens themselves are not.
type harmony struct {
	state  int
	opener string // <|start|>, <|channel|> or nothing: what began the header
	header string // the raw header of a call message, <|message|> included
	name   string // the function a call message is addressed to
	reason bool   // the body is reasoning
	seen   int
}

const (
	hStart  = iota // the text may begin with a header
	hOut           // between messages
	hHeader        // up to <|message|>
	hBody          // a content or reasoning body
	hCall          // a call's body
)

// maxHeader bounds a header held until its <|message|>.
const maxHeader = 1024

var (
	harmonyOpeners   = []string{harmonyStart, harmonyChannel}
	harmonyLeads     = []string{harmonyStart, harmonyChannel, " to=", "to="}
	harmonyHeaderEnd = []string{harmonyMessage, harmonyStart, harmonyEnd, harmonyCall, harmonyReturn}
	harmonyBodyEnd   = []string{harmonyEnd, harmonyReturn, harmonyCall, harmonyStart}
)

func (h *harmony) step(p *Parser, final bool) bool {
	switch h.state {
	case hStart:
		if len(p.buf) == 0 && !final {
			return false
		}
		h.state = hOut
		for _, lead := range harmonyLeads {
			switch prefixOf(p.buf, lead) {
			case has:
				if lead[0] != '<' { // the recipient before the channel, with no opener token
					h.enter("")
				}
				return true
			case maybe:
				if len(p.buf) > 0 && !final {
					h.state = hStart
					return false
				}
			}
		}
		return true
	case hOut:
		m, ok := p.until(harmonyOpeners, final, p.em.content)
		if !ok {
			return false
		}
		p.consume(len(m))
		h.enter(m)
		return true
	case hHeader:
		return h.readHeader(p, final)
	case hBody:
		emit := p.em.content
		if h.reason {
			emit = p.em.reasoning
		}
		m, ok := p.until(harmonyBodyEnd, final, emit)
		if !ok {
			return false
		}
		if m != harmonyStart {
			p.consume(len(m))
		}
		h.state = hOut
		return true
	}
	i, m, st := p.bounded(harmonyBodyEnd, p.max, &h.seen, final)
	if st == unclosed && p.cut {
		if _, ok := arguments(p.buf[:i]); !ok || len(bytes.TrimSpace(p.buf)) == 0 {
			p.em.call(h.name, string(bytes.TrimSpace(p.buf)))
			p.consume(len(p.buf))
			h.state = hOut
			return true
		}
	}
	switch st {
	case needMore:
		return false
	case closed, unclosed:
		if args, ok := arguments(p.buf[:i]); ok {
			p.em.call(h.name, args)
			if m != harmonyStart {
				i += len(m)
			}
			p.consume(i)
			h.state = hOut
			return true
		}
	}
	// Not a call: its header is text, and its body is read again as text.
	p.em.content(h.header)
	h.state = hOut
	return true
}

func (h *harmony) enter(opener string) {
	h.state, h.opener, h.seen = hHeader, opener, 0
}

func (h *harmony) readHeader(p *Parser, final bool) bool {
	i, m, st := p.bounded(harmonyHeaderEnd, maxHeader, &h.seen, final)
	if st == needMore {
		return false
	}
	if st == unclosed && p.cut {
		// A header the token limit cut: a call once its recipient is whole (a space or
		// the next token after it), else nothing, never the header's text.
		header := h.opener + string(p.buf)
		if r := headerField(header, "to="); strings.HasPrefix(r, "functions.") && len(r) > len("functions.") {
			if k := strings.Index(header, "to=") + len("to=") + len(r); k < len(header) {
				p.em.call(strings.TrimPrefix(r, "functions."), "")
			}
		}
		p.consume(len(p.buf))
		h.state = hOut
		return true
	}
	if st != closed || m != harmonyMessage {
		// Not a header: the opener is text, and what followed it is read again as text.
		p.em.content(h.opener)
		h.state = hOut
		return true
	}
	header := h.opener + string(p.buf[:i])
	raw := header + harmonyMessage
	p.consume(i + len(harmonyMessage))
	recipient, channel := headerField(header, "to="), headerField(header, harmonyChannel)
	switch {
	case recipient == "":
		h.state, h.reason = hBody, channel == "analysis"
	case strings.HasPrefix(recipient, "functions.") && len(recipient) > len("functions."):
		h.state, h.name, h.header, h.seen = hCall, strings.TrimPrefix(recipient, "functions."), raw, 0
	default: // a built-in tool (browser, python): not an OpenAI call, so text
		p.em.content(raw)
		h.state = hOut
	}
	return true
}

// headerField is the word after key in a header: up to a space or the next token.
func headerField(header, key string) string {
	i := strings.Index(header, key)
	if i < 0 {
		return ""
	}
	v := header[i+len(key):]
	if j := strings.IndexAny(v, " \t\n<"); j >= 0 {
		v = v[:j]
	}
	return v
}
