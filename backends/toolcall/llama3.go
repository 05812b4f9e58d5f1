package toolcall

// llama3 reads Llama 3.1–3.3 calls: the output is {"name": "A", "parameters": {…}}
// (Meta's templates; "arguments" is read too), possibly after <|python_tag|>, and further
// calls follow separated by ";" or whitespace (vLLM's llama3_json reads "; "). Any "{" is
// a call at the very start of the output, as llama.cpp reads it; later in the text only
// one that begins exactly {"name": " (where masking's lazy grammar triggers) and holds
// "parameters" or "arguments", so that an answer that merely contains JSON stays
// content. <|python_tag|>, a special token, starts a call anywhere.
type llama3 struct {
	state  int
	opener string // <|python_tag|>, or "" for a call at the start or after another
	sep    bool   // a ";" may precede the object: a call just ended
	inText bool   // the object began mid-text: it must hold its arguments
	at     int    // where the object starts in p.buf; -1 until found
	v      valueEnd
}

// llamaInText is how a call begins after text: masking.Llama3's trigger.
const llamaInText = `{"name": "`

const (
	lStart = iota // nothing but whitespace so far
	lOut          // content
	lCall         // a call's object comes next
)

var llamaTags = []string{pythonTag, llamaInText}

func (l *llama3) step(p *Parser, final bool) bool {
	switch l.state {
	case lStart:
		n := spaces(p.buf)
		p.em.content(string(p.buf[:n]))
		p.consume(n)
		switch {
		case len(p.buf) == 0 && !final:
			return false
		case len(p.buf) > 0 && p.buf[0] == '{':
			l.enter("", false)
		default:
			l.state = lOut
		}
		return true
	case lOut:
		m, ok := p.until(llamaTags, final, p.em.content)
		if !ok {
			return false
		}
		if m == pythonTag {
			p.consume(len(pythonTag))
			l.enter(pythonTag, false)
		} else {
			l.enter("", false)
			l.inText = true
		}
		return true
	}
	if l.at < 0 {
		j := spaces(p.buf)
		if l.sep && j < len(p.buf) && p.buf[j] == ';' {
			j++
			j += spaces(p.buf[j:])
		}
		switch {
		case j == len(p.buf) && !final:
			return false
		case j == len(p.buf) && p.cut && l.opener != "":
			p.consume(len(p.buf)) // <|python_tag|> and nothing more: no call, no text
			l.state = lOut
			return true
		case j == len(p.buf) || p.buf[j] != '{':
			return l.fail(p)
		}
		l.at, l.v = j, valueEnd{}
	}
	end, st := p.value(&l.v, l.at, final)
	if st == needMore {
		return false
	}
	if st == unclosed && p.cut {
		obj := p.buf[l.at:]
		name, args, keyed, ok := partialCall(obj, "parameters", "arguments")
		switch {
		case ok && (keyed || !l.inText):
			p.em.call(name, args)
		case !cutInName(obj) && !ok:
			return l.fail(p) // JSON that is not a call: content
		}
		p.consume(len(p.buf))
		l.state = lOut
		return true
	}
	if st == closed {
		if name, args, hasArgs, ok := objectCall(p.buf[l.at:end], "parameters", "arguments"); ok && (hasArgs || !l.inText) {
			p.em.call(name, args)
			p.consume(end)
			l.enter("", true)
			return true
		}
	}
	return l.fail(p)
}

func (l *llama3) enter(opener string, sep bool) {
	l.state, l.opener, l.sep, l.inText, l.at = lCall, opener, sep, false, -1
}

// fail passes the opener on as text; what followed it is read again as content. A call
// that began mid-text has no opener: its "{" is passed on, so the text is not read as a
// call again.
func (l *llama3) fail(p *Parser) bool {
	p.em.content(l.opener)
	if l.inText {
		p.em.content("{")
		p.consume(1)
	}
	l.state = lOut
	return true
}
