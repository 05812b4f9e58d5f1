package toolcall

import (
	"bytes"
	"encoding/json"
)

// mistral reads Mistral's calls. From tokenizer v11 on each call is
// [TOOL_CALLS]NAME[ARGS]{…} (some templates put [CALL_ID]ID before [ARGS]); before it,
// one [TOOL_CALLS] led a JSON array [{"name": "A", "arguments": {…}}, …]. Both are read.
type mistral struct {
	in    bool // after [TOOL_CALLS]
	at    int  // where the arguments (or the array) start in p.buf; -1 until the head is read
	name  string
	array bool
	v     valueEnd
}

// maxName bounds a name (and a call id) held while the head of a call is read.
const maxName = 256

var mistralTags = []string{mistralCalls}

func (m *mistral) step(p *Parser, final bool) bool {
	if !m.in {
		if _, ok := p.until(mistralTags, final, p.em.content); !ok {
			return false
		}
		p.consume(len(mistralCalls))
		m.in, m.at = true, -1
		return true
	}
	if m.at < 0 {
		switch m.head(p.buf) {
		case maybe:
			if !final {
				return false
			}
			if p.cut {
				return m.cutHead(p)
			}
			return m.fail(p)
		case no:
			return m.fail(p)
		}
	}
	end, st := p.value(&m.v, m.at, final)
	if st == needMore {
		return false
	}
	if st == unclosed && p.cut {
		if m.array {
			for _, c := range partialArray(p.buf[m.at:]) {
				p.em.call(c[0], c[1])
			}
		} else {
			p.em.call(m.name, string(bytes.TrimSpace(p.buf[m.at:])))
		}
		p.consume(len(p.buf))
		m.in = false
		return true
	}
	if st != closed {
		return m.fail(p)
	}
	raw := p.buf[m.at:end]
	if !m.array {
		args, ok := arguments(raw)
		if !ok {
			return m.fail(p)
		}
		p.em.call(m.name, args)
	} else {
		var items []json.RawMessage
		if json.Unmarshal(raw, &items) != nil || len(items) == 0 {
			return m.fail(p)
		}
		type call struct{ name, args string }
		calls := make([]call, 0, len(items))
		for _, it := range items {
			name, args, _, ok := objectCall(it, "arguments", "parameters")
			if !ok {
				return m.fail(p)
			}
			calls = append(calls, call{name, args})
		}
		for _, c := range calls {
			p.em.call(c.name, c.args)
		}
	}
	p.consume(end)
	m.in = false
	return true
}

// head reads what follows [TOOL_CALLS] up to the arguments: an array, or
// NAME([CALL_ID]ID)?[ARGS]. On has it sets m.at, m.name, m.array and resets m.v.
func (m *mistral) head(b []byte) match {
	j := spaces(b)
	if j == len(b) {
		return maybe
	}
	if b[j] == '[' {
		m.at, m.array, m.v = j, true, valueEnd{}
		return has
	}
	name, j, st := word(b, j)
	if st != has {
		return st
	}
	switch prefixOf(b[j:], mistralCallID) {
	case has:
		if _, j, st = word(b, j+len(mistralCallID)); st != has {
			return st
		}
	case maybe:
		return maybe
	}
	switch prefixOf(b[j:], mistralArgs) {
	case no:
		return no
	case maybe:
		return maybe
	}
	j += len(mistralArgs)
	j += spaces(b[j:])
	switch {
	case j == len(b):
		return maybe
	case b[j] != '{' && b[j] != '[':
		return no
	}
	m.at, m.name, m.array, m.v = j, name, false, valueEnd{}
	return has
}

// word reads a name or call id from b[j] up to the "[" of the next marker.
func word(b []byte, j int) (string, int, match) {
	rest := b[j:min(len(b), j+maxName+1)]
	k := bytes.IndexByte(rest, '[')
	w := rest
	if k >= 0 {
		w = rest[:k]
	}
	switch {
	case bytes.ContainsAny(w, " \t\r\n\"{}]"):
		return "", 0, no
	case k < 0 && len(rest) > maxName:
		return "", 0, no
	case k < 0:
		return "", 0, maybe
	case k == 0:
		return "", 0, no
	}
	return string(w), j + k, has
}

func (m *mistral) fail(p *Parser) bool {
	p.em.content(mistralCalls)
	m.in = false
	return true
}

// cutHead ends a call whose head the token limit cut: with its name whole (the "[" of the
// next marker came), a call without arguments; else nothing.
func (m *mistral) cutHead(p *Parser) bool {
	j := spaces(p.buf)
	if name, _, st := word(p.buf, j); st == has {
		p.em.call(name, "")
	}
	p.consume(len(p.buf))
	m.in = false
	return true
}

// partialArray reads the calls of an old-style call array, [{"name": …, "arguments": …},
// …], that the token limit cut: the whole objects, then the cut one when its name is
// whole. Each call is {name, arguments}.
func partialArray(b []byte) [][2]string {
	var calls [][2]string
	i := 1 // past "["
	for {
		i += spaces(b[i:])
		if i >= len(b) || b[i] != '{' {
			return calls
		}
		var v valueEnd
		end := v.scan(b[i:])
		if end < 0 {
			if name, args, _, ok := partialCall(b[i:], "arguments", "parameters"); ok {
				calls = append(calls, [2]string{name, args})
			}
			return calls
		}
		name, args, _, ok := objectCall(b[i:i+end], "arguments", "parameters")
		if !ok {
			return calls
		}
		calls = append(calls, [2]string{name, args})
		i += end
		i += spaces(b[i:])
		if i >= len(b) || b[i] != ',' {
			return calls
		}
		i++
	}
}
