package toolcall

// hermes reads <tool_call>\n{"name": "A", "arguments": {…}}\n</tool_call>, one or more,
// anywhere in the text (Qwen 2.5–3 and Hermes templates).
type hermes struct {
	in   bool // after <tool_call>; p.buf holds the call's body
	seen int
}

var (
	hermesOpens  = []string{hermesOpen}
	hermesCloses = []string{hermesClose}
)

func (h *hermes) step(p *Parser, final bool) bool {
	if !h.in {
		if _, ok := p.until(hermesOpens, final, p.em.content); !ok {
			return false
		}
		p.consume(len(hermesOpen))
		h.in, h.seen = true, 0
		return true
	}
	i, _, st := p.bounded(hermesCloses, p.max, &h.seen, final)
	switch st {
	case needMore:
		return false
	case closed, unclosed:
		if name, args, _, ok := objectCall(p.buf[:i], "arguments", "parameters"); ok {
			p.em.call(name, args)
			p.consume(min(len(p.buf), i+len(hermesClose)))
			h.in = false
			return true
		}
		if st == unclosed && p.cut {
			if name, args, _, ok := partialCall(p.buf, "arguments", "parameters"); ok {
				p.em.call(name, args)
			}
			p.consume(len(p.buf))
			h.in = false
			return true
		}
	}
	// Not a call: the tag is text, and what followed it is read again as text.
	p.em.content(hermesOpen)
	h.in = false
	return true
}
